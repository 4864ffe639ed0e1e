/* po-auto.c: option `co_schedule: auto` of pipeoffload, po-h and po-f where the GPUs behind a
 * PCIe switch can ask more than its uplink delivers ([PO] App. D): the three co-schedules
 * are planned and replayed through the runner's measure (generator.h), and the fastest that
 * fits the memory limit is kept; see pipeoffload.h.
 *
 * The three share the compute order and the stages to offload; the two synchronized modes
 * also share the copy lists and the order their rounds take the transfers in, so one plan
 * serves both (co-schedule.h). On a large pipeline (p*m > 4096 by default, option
 * `co_microbatches`) the three are replayed with fewer microbatches and only the winner is
 * built and replayed with all of them: the replays cost about as much as the run's own each.
 */
#include "sched/pipeoffload.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <errno.h>
#include <string.h>

/* By rank: the first is preferred on ties, and is the authors' rule without a replay. */
static const char *const candidates[] = {"sync-interleaved", "independent", "sync-parallel"};

/* The three candidates measured so far. */
typedef struct {
    const PpsimScheduleParams *params;
    PpsimTime ps[3];
    gboolean fits[3];
    PpsimSchedule *best; /* nullable */
    int best_i;
} PoCandidates;

/* Measures candidate @i (@cand, taken) and keeps it if it is the best so far: it fits and the
 * best does not, or both or neither fit and it is faster, or as fast and ranked first. The
 * best is then the same whatever order the candidates come in. */
static gboolean
po_consider(PoCandidates *c, int i, PpsimSchedule *cand_in, GError **error)
{
    g_autoptr(PpsimSchedule) cand = cand_in;
    const PpsimScheduleParams *params = c->params;
    if (!params->measure(cand, &c->ps[i], &c->fits[i], params->measure_data, error)) {
        g_clear_pointer(&c->best, ppsim_schedule_free);
        return FALSE;
    }
    int b = c->best_i;
    if (c->best == NULL || (c->fits[i] && !c->fits[b]) ||
        (c->fits[i] == c->fits[b] && (c->ps[i] < c->ps[b] || (c->ps[i] == c->ps[b] && i < b)))) {
        g_clear_pointer(&c->best, ppsim_schedule_free);
        c->best = g_steal_pointer(&cand);
        c->best_i = i;
    }
    return TRUE;
}

/* Plans the three for @shape and measures them into @c (c->best: the winner). Built in the
 * order that needs the fewest copies: independent, sync-parallel, sync-interleaved. */
static gboolean
po_three_way(const PpsimPipelineShape *shape, PpsimPoStrategy strategy, int n_offload,
             const gboolean *stage_mask, PoCandidates *c, GError **error)
{
    const PpsimCostEstimates *costs = c->params->costs;
    g_autoptr(PpsimSchedule) base = NULL;
    g_autofree gboolean *mask = NULL;
    g_autofree int *group = g_new(int, shape->p);
    PpsimCoSchedule mode;
    if (!ppsim_po_co_mode(candidates[0], costs, shape->p, group, &mode, error) ||
        !ppsim_po_compute(shape, costs, strategy, n_offload, stage_mask, &base, &mask, error))
        return FALSE;
    PpsimSchedule *indep = ppsim_schedule_copy(base);
    if (!ppsim_po_plan_copies(indep, costs, mask, NULL, error)) {
        ppsim_schedule_free(indep);
        return FALSE;
    }
    if (!po_consider(c, 1, indep, error) || !ppsim_po_plan_copies(base, costs, mask, group, error))
        return FALSE;
    g_autoptr(PpsimCoPlan) rounds = ppsim_co_plan_new(base, costs, group, error);
    if (rounds == NULL)
        return FALSE;
    PpsimSchedule *parallel = ppsim_schedule_copy(base);
    ppsim_co_plan_apply(rounds, parallel, PPSIM_CO_SYNC_PARALLEL);
    if (!po_consider(c, 2, parallel, error))
        return FALSE;
    ppsim_co_plan_apply(rounds, base, PPSIM_CO_SYNC_INTERLEAVED);
    return po_consider(c, 0, g_steal_pointer(&base), error);
}

/* "5567.318 ms" */
static void
po_append_ms(GString *out, PpsimTime ps)
{
    ppsim_fmt_fixed(out, (double)ps / PPSIM_PS_PER_MS, 3);
    g_string_append(out, " ms");
}

/* "sync-interleaved 5567.318 ms, independent 5601.000 ms (out of memory), ..." */
static void
po_append_tried(GString *out, const PoCandidates *c)
{
    for (int i = 0; i < (int)G_N_ELEMENTS(candidates); i++) {
        g_string_append_printf(out, "%s%s ", i ? ", " : "", candidates[i]);
        po_append_ms(out, c->ps[i]);
        if (!c->fits[i])
            g_string_append(out, " (out of memory)");
    }
}

/* Option `co_microbatches`: into *@trial the microbatches the candidates are replayed with
 * (shape->m: all), and whether it was auto. */
static gboolean
po_trial_m(const PpsimOptions *opts, const PpsimPipelineShape *shape, int *trial, gboolean *is_auto,
           GError **error)
{
    const char *text = ppsim_options_get_string(opts, "co_microbatches");
    *is_auto = text == NULL || strcmp(text, "auto") == 0;
    if (*is_auto) {
        gint64 pm = (gint64)shape->p * shape->m;
        *trial =
            pm <= 4096 ? shape->m : MIN(shape->m, MAX((4096 + shape->p - 1) / shape->p, shape->p));
        return TRUE;
    }
    if (strcmp(text, "all") == 0) {
        *trial = shape->m;
        return TRUE;
    }
    char *end = NULL;
    errno = 0;
    gint64 n = g_ascii_strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || n < 1) {
        g_autofree char *q_text = ppsim_quote(text);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "pipeoffload: option 'co_microbatches' must be auto, all or a whole number "
                    "of microbatches >= 1, got '%s'",
                    q_text);
        return FALSE;
    }
    *trial = (int)MIN(n, (gint64)shape->m);
    return TRUE;
}

/* The three with all microbatches: the winner into *@out, the choice noted. */
static gboolean
po_choose_full(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimPoStrategy strategy, int n_offload, const gboolean *stage_mask, const char *why,
               PpsimSchedule **out, GError **error)
{
    PoCandidates c = {.params = params};
    if (!po_three_way(shape, strategy, n_offload, stage_mask, &c, error))
        return FALSE;
    g_autoptr(GString) tried = g_string_new(NULL);
    po_append_tried(tried, &c);
    ppsim_choice_add(params->choices, "co_schedule", candidates[c.best_i],
                     "auto, fastest by replay%s: %s%s",
                     c.fits[c.best_i] ? " that fits" : "; none fits", tried->str, why);
    *out = g_steal_pointer(&c.best);
    return TRUE;
}

gboolean
ppsim_pipeoffload_generate_auto(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                                PpsimPoStrategy strategy, int n_offload, const gboolean *stage_mask,
                                PpsimSchedule **out, GError **error)
{
    const PpsimCostEstimates *costs = params->costs;
    const char *co = ppsim_options_get_string(params->options, "co_schedule");
    int trial_m = shape->m;
    gboolean trial_auto = TRUE;
    if (!po_trial_m(params->options, shape, &trial_m, &trial_auto, error))
        return FALSE;
    gboolean contended =
        costs->host_link != NULL && costs->n_devices == shape->p && costs->host_link_contended;
    if (strcmp(co, "auto") != 0 || !contended || params->measure == NULL) {
        if (strcmp(co, "auto") == 0)
            ppsim_choice_add(params->choices, "co_schedule",
                             contended ? "sync-interleaved" : "independent", "%s",
                             contended ? "auto, without a replay: the authors' rule for a "
                                         "shared switch"
                                       : "auto: no PCIe switch uplink can be oversubscribed");
        return ppsim_pipeoffload_generate(shape, costs, strategy, n_offload, stage_mask, co, out,
                                          error);
    }
    if (n_offload == 0 && stage_mask == NULL) /* nothing to coordinate */
        return ppsim_pipeoffload_generate(shape, costs, strategy, 0, NULL, candidates[0], out,
                                          error);
    if (trial_m >= shape->m)
        return po_choose_full(shape, params, strategy, n_offload, stage_mask, "", out, error);
    if (trial_auto) {
        char value[16];
        g_snprintf(value, sizeof value, "%d", trial_m);
        ppsim_choice_add(params->choices, "co_microbatches", value,
                         "auto: p*m = %" G_GINT64_FORMAT " > 4096, the three co-schedules "
                         "replayed with max(ceil(4096/p), p) microbatches, the winner with all",
                         (gint64)shape->p * shape->m);
    }
    /* the three with trial_m microbatches, then the winner with all */
    PpsimPipelineShape trial = *shape;
    trial.m = trial_m;
    PoCandidates c = {.params = params};
    if (!po_three_way(&trial, strategy, n_offload, stage_mask, &c, error))
        return FALSE;
    g_clear_pointer(&c.best, ppsim_schedule_free);
    g_autoptr(GString) tried = g_string_new(NULL);
    po_append_tried(tried, &c);
    g_autoptr(PpsimSchedule) won = NULL;
    PpsimTime ps = 0;
    gboolean fits = FALSE;
    if (!ppsim_pipeoffload_generate(shape, costs, strategy, n_offload, stage_mask,
                                    candidates[c.best_i], &won, error) ||
        !params->measure(won, &ps, &fits, params->measure_data, error))
        return FALSE;
    if (!fits) { /* the smaller replays may misjudge memory: the three with all m */
        g_autoptr(GString) why = g_string_new(NULL);
        g_string_append_printf(why,
                               " (with %d microbatches %s was fastest%s, but with all %d it "
                               "does not fit)",
                               trial_m, candidates[c.best_i], c.fits[c.best_i] ? " and fit" : "",
                               shape->m);
        g_clear_pointer(&won, ppsim_schedule_free);
        return po_choose_full(shape, params, strategy, n_offload, stage_mask, why->str, out, error);
    }
    g_string_append_printf(tried, "; %s with all %d: ", candidates[c.best_i], shape->m);
    po_append_ms(tried, ps);
    ppsim_choice_add(params->choices, "co_schedule", candidates[c.best_i],
                     "auto, fastest by replay with %d of the %d microbatches: %s", trial_m,
                     shape->m, tried->str);
    *out = g_steal_pointer(&won);
    return TRUE;
}
