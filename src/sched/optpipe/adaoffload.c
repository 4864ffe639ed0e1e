/* adaoffload.c: AdaOffload ([OP] App. D, Algorithm 1); see adaoffload.h.
 *
 * Algorithm 1 fills each stage with as many forwards as fit before its first backward can
 * start (step 2: F(s, j) is placed while the previous F and its offload end before
 * EstStart(B(s, 0)) + T), then finishes with PipeOffload's rules (step 3). Here a fill is
 * the count w_d of forwards device d runs before its first B; after it the device repeats
 * B(j), W(j), F(w_d + j) (W right after its B, as [PO] §3 does), then drains B, W. The copy
 * lists come from PipeOffload's planner (offload wherever the F -> B gap hides the round
 * trip, [PO] §4.2, §4.4). The memory limit decides how dense the fill may be: each
 * candidate is measured on the estimates and kept only if it fits. Candidates: Algorithm 1's
 * densest fill with tolerance T = 0 (offload-aware or not), the fills p - d + k for every k,
 * each with and without offload, shrunk device by device until they fit; and PipeOffload's
 * own schedule, so the result is never slower on the estimates than `pipeoffload`.
 */
#include "sched/optpipe/adaoffload.h"
#include "sched/offload/pipeoffload.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

/* One device's compute list: @w forwards, then B(j) W(j - lag) F(w + j), then the rest:
 * W right after its B when @lag is 0 ([PO] §3), else @lag Ws held back (each keeps its
 * act_w), which fills the cool-down as Algorithm 1's step 3 allows ("overlap between B and
 * W tasks") and as ZB-H1 does ([ZB] §2.1). */
static void
ada_device(PpsimSchedule *s, int d, int w, int lag, int m)
{
    int f = 0, wn = 0;
    for (; f < w; f++)
        ppsim_schedule_push(s, d, PPSIM_OP_F, d, f);
    for (int j = 0; j < m; j++) {
        ppsim_schedule_push(s, d, PPSIM_OP_B, d, j);
        if (j - wn >= lag)
            ppsim_schedule_push(s, d, PPSIM_OP_W, d, wn++);
        if (f < m)
            ppsim_schedule_push(s, d, PPSIM_OP_F, d, f++);
    }
    while (wn < m)
        ppsim_schedule_push(s, d, PPSIM_OP_W, d, wn++);
}

/* W lags tried: none, ZB-H1's (device d holds d... p-1-d back), and p - 1 everywhere. */
#define ADA_N_LAGS 4

static int
ada_lag(int kind, int p, int d)
{
    switch (kind) {
    case 0:
        return 0;
    case 1:
        return d;
    case 2:
        return p - 1 - d;
    default:
        return p - 1;
    }
}

/* Algorithm 1, steps 1-2: the densest fill of each device. EstStart(B(d, 0)) is the end of
 * microbatch 0's forward through all stages and its backward back to stage d + 1; device d's
 * forwards run as early as the (denser) device d - 1 delivers them; with @offload, each also
 * waits for the copy stream to finish the previous offload (T_offload^max per F). */
static void
ada_dense_fill(const PpsimCostEstimates *c, int p, int m, gboolean offload, int *w)
{
    g_autofree PpsimTime *prev = g_new0(PpsimTime, m), *cur = g_new0(PpsimTime, m);
    PpsimTime fwd0 = 0;
    for (int s = 0; s < p; s++)
        fwd0 += c->stage[s].f_ps + (s > 0 ? c->comm_ps : 0);
    for (int d = 0; d < p; d++) {
        PpsimTime est = fwd0;
        for (int s = p - 1; s > d; s--)
            est += c->stage[s].b_ps + c->comm_ps;
        const PpsimStageEstimate *st = &c->stage[d];
        PpsimTime fend = 0, oend = 0;
        w[d] = 0;
        for (int j = 0; j < m; j++) {
            PpsimTime ready = MAX(fend, offload ? oend : 0);
            if (j > 0 && ready >= est)
                break; /* step 2's BREAK, T = 0 */
            PpsimTime start = MAX(fend, d > 0 ? prev[j] + c->comm_ps : 0);
            fend = start + st->f_ps;
            oend = MAX(fend, oend) + st->off_ps;
            cur[j] = fend;
            w[d] = j + 1;
        }
        for (int j = w[d]; j < m; j++)
            cur[j] = G_MAXINT64 / 4; /* not in the fill: the next device stops there too */
        PpsimTime *t = prev;
        prev = cur;
        cur = t;
    }
}

typedef struct {
    PpsimSchedule *best;
    PpsimOpEval best_eval;
    gint64 min_need; /* smallest memory.limit any candidate fits in (peak + static memory) */
} AdaSearch;

/* Keeps @s if it fits and beats the best so far; takes ownership. */
static gboolean
ada_consider(AdaSearch *a, PpsimSchedule *s_in, const PpsimCostEstimates *c, const gint64 *limit,
             gint64 *peak, GError **error)
{
    g_autoptr(PpsimSchedule) s = s_in;
    PpsimOpEval ev;
    if (!ppsim_op_eval(s, c, limit, peak, &ev, error))
        return FALSE;
    gint64 need = 0;
    for (int d = 0; d < s->n_devices; d++)
        need = MAX(need, peak[d] + c->stage[d].static_mem);
    a->min_need = MIN(a->min_need, need);
    if (!ev.fits)
        return TRUE;
    if (a->best == NULL || ev.makespan_ps < a->best_eval.makespan_ps ||
        (ev.makespan_ps == a->best_eval.makespan_ps && ev.peak_max < a->best_eval.peak_max)) {
        ppsim_schedule_free(a->best);
        a->best = g_steal_pointer(&s);
        a->best_eval = ev;
    }
    return TRUE;
}

/* Builds the fill @w (with or without offload), shrinking the fill of every device over its
 * budget by one until all fit or the fill is one forward; offers each to @a. */
static gboolean
ada_fill(AdaSearch *a, const PpsimPipelineShape *shape, const PpsimCostEstimates *c,
         const gint64 *limit, const int *w_in, gboolean offload, int lag, const char *co,
         GError **error)
{
    int p = shape->p, m = shape->m;
    g_autofree int *w = g_memdup2(w_in, p * sizeof(int));
    g_autofree gint64 *peak = g_new0(gint64, p);
    g_autofree gboolean *mask = g_new(gboolean, p);
    for (int d = 0; d < p; d++)
        mask[d] = offload;
    for (;;) {
        /* a device never fills less than the next one: its B(j) waits for the next device's
         * B(j), which waits for the forwards that device fills before it (no cyclic wait) */
        for (int d = 1; d < p; d++)
            w[d] = MAX(1, MIN(w[d], w[d - 1]));
        PpsimSchedule *s = ppsim_schedule_new(p, p, m);
        ppsim_schedule_map_plain(s);
        for (int d = 0; d < p; d++)
            ada_device(s, d, w[d], ada_lag(lag, p, d), m);
        if (offload && !ppsim_pipeoffload_plan(s, c, mask, co, error)) {
            ppsim_schedule_free(s);
            return FALSE;
        }
        if (!ada_consider(a, s, c, limit, peak, error))
            return FALSE;
        gboolean shrunk = FALSE;
        for (int d = 0; limit != NULL && d < p; d++)
            if (peak[d] > limit[d] && w[d] > 1) {
                w[d]--;
                shrunk = TRUE;
            }
        if (!shrunk)
            return TRUE;
    }
}

gboolean
ppsim_adaoffload_build(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                       const gint64 *limit, gboolean allow_offload, const char *co_schedule,
                       PpsimSchedule **out, PpsimOpEval *eval, GError **error)
{
    int p = shape->p, m = shape->m;
    if (shape->v != 1) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "needs one stage per device (v = 1), got v = %d", shape->v);
        return FALSE;
    }
    AdaSearch a = {.min_need = G_MAXINT64};
    g_autofree int *w = g_new(int, p);
    g_autofree gint64 *peak = g_new0(gint64, p);
    PpsimSchedule *po = NULL; /* PipeOffload itself (v = 1: offload the one stage) */
    for (int offload = 0; offload < 1 + allow_offload; offload++)
        for (int lag = 0; lag < ADA_N_LAGS; lag++) {
            ada_dense_fill(costs, p, m, offload, w);
            if (!ada_fill(&a, shape, costs, limit, w, offload, lag, co_schedule, error))
                goto fail;
            for (int k = 0; k <= p; k++) {
                for (int d = 0; d < p; d++)
                    w[d] = MIN(m, p - d + k);
                if (!ada_fill(&a, shape, costs, limit, w, offload, lag, co_schedule, error))
                    goto fail;
            }
        }
    if (!ppsim_pipeoffload_generate(shape, costs, PPSIM_PO_UNIFORM, allow_offload, NULL,
                                    co_schedule, &po, error))
        goto fail;
    if (!ada_consider(&a, po, costs, limit, peak, error))
        goto fail;
    if (a.best == NULL) {
        gint64 worst = G_MAXINT64; /* the tightest device's budget, as a memory.limit */
        for (int d = 0; d < p; d++)
            worst = MIN(worst, limit[d] + costs->stage[d].static_mem);
        g_autofree char *have = ppsim_memory_cap_format(costs, worst);
        g_autofree char *need = ppsim_memory_cap_format(costs, a.min_need);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "memory limit %s is infeasible: no schedule fits it%s; the smallest "
                    "feasible limit found is %s",
                    have, allow_offload ? ", even offloading every activation" : " without offload",
                    need);
        return FALSE;
    }
    *out = a.best;
    *eval = a.best_eval;
    return TRUE;
fail:
    ppsim_schedule_free(a.best);
    return FALSE;
}

gboolean
ppsim_optpipe_limits(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                     const char *cap, const char *what, gint64 **limit, GError **error)
{
    int p = shape->p;
    g_autofree gint64 *lim = g_new(gint64, p);
    g_autofree int *map = g_new(int, p);
    for (int d = 0; d < p; d++)
        map[d] = d;
    *limit = NULL;
    if (cap != NULL) {
        char *end = NULL;
        double mb = g_ascii_strtod(cap, &end);
        if (end == cap || *end != '\0' || !(mb >= 1) || !isfinite(mb)) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "%s: option 'memory_limit' must be a number of M_B >= 1, got '%s'", what,
                        cap);
            return FALSE;
        }
        for (int d = 0; d < p; d++)
            lim[d] = (gint64)floor(mb * (double)costs->stage[d].act + 1e-9);
        *limit = g_steal_pointer(&lim);
        return TRUE;
    }
    gboolean applied = FALSE;
    if (!ppsim_memory_cap_default(costs, map, p, p, lim, &applied, what, error))
        return FALSE;
    if (applied)
        *limit = g_steal_pointer(&lim);
    return TRUE;
}
