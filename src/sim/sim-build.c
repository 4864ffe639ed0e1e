/* sim-build.c: the schedule of one spec, from a generator (with the cost estimates, the
 * choices it made and a replay it may use to rank plans) or from a CSV file; see sim.h. */
#include "sim-internal.h"
#include "sched/registry.h"
#include "util/ppsim-error.h"
#include "util/read-file.h"

#include <glib/gstdio.h>
#include <sys/stat.h>

#include <string.h>

/* ---- building the schedule ------------------------------------------------------------ */

static gboolean
sim_check_shape(const PpsimScenario *sc, const PpsimSchedule *sched, const char *what,
                GError **error)
{
    if (sched->n_devices != sc->training.pp || sched->n_microbatches != sc->training.microbatches) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "%s has p = %d devices and m = %d microbatches, but the scenario has "
                    "training.pp = %d and training.microbatches = %d",
                    what, sched->n_devices, sched->n_microbatches, sc->training.pp,
                    sc->training.microbatches);
        return FALSE;
    }
    return TRUE;
}

static PpsimSchedule *
sim_build_custom(const PpsimScenario *sc, const PpsimScheduleSpec *spec, GError **error)
{
    if (spec->file == NULL) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "%s:%d:%d: schedule 'custom' needs a 'file'", sc->path ? sc->path : "",
                    spec->mark.line, spec->mark.col);
        return NULL;
    }
    /* a regular file is mapped, not copied: the page cache already holds it (its size is
     * checked by the reader); anything else (a pipe, a device) is read with the size limit
     * checked while reading, as is a file that cannot be mapped (for the usual message) */
    struct stat st;
    gboolean regular = g_stat(spec->file, &st) == 0 && S_ISREG(st.st_mode);
    g_autoptr(GMappedFile) map = regular ? g_mapped_file_new(spec->file, FALSE, NULL) : NULL;
    g_autofree char *text = NULL;
    gsize len = 0;
    if (map == NULL &&
        !ppsim_read_file(spec->file, PPSIM_CSV_MAX_BYTES, "a schedule CSV", &text, &len, error))
        return NULL;
    const char *data = map ? g_mapped_file_get_contents(map) : text;
    if (map != NULL)
        len = g_mapped_file_get_length(map);
    g_autoptr(PpsimSchedule) sched =
        ppsim_schedule_from_csv(data ? data : "", len, spec->file, error);
    if (sched == NULL)
        return NULL;
    g_autofree char *what = g_strdup_printf("schedule file '%s'", spec->file);
    if (!sim_check_shape(sc, sched, what, error))
        return NULL;
    return g_steal_pointer(&sched);
}

/* The runner's replay for generators choosing between plans (generator.h). With @keep, the
 * replay of the best candidate so far (fits, then fastest; ties: the first) is kept in
 * @kept with a copy of its schedule, so that the run can take it if the generator returns
 * that schedule: a guess at what a generator picks by replay, never needed for the result
 * (another choice is replayed as usual). */
typedef struct {
    const PpsimScenario *sc;
    const PpsimCosts *costs;
    PpsimSimFlags flags;
    gboolean keep;
    PpsimRunResult *kept; /* nullable */
} Measure;

static gboolean
sim_measure(const PpsimSchedule *candidate, PpsimTime *makespan_ps, gboolean *fits,
            gpointer user_data, GError **error)
{
    Measure *m = user_data;
    g_autoptr(PpsimRunResult) res = ppsim_sim_replay_borrowed(
        m->sc, m->costs, candidate, "candidate", "candidate", m->flags, error);
    if (res == NULL)
        return FALSE;
    *makespan_ps = res->makespan_ps;
    *fits = ppsim_run_result_fits(res);
    const PpsimRunResult *k = m->kept;
    gboolean k_fits = k != NULL && ppsim_run_result_fits(k);
    /* only a candidate of the run's shape can become its schedule */
    gboolean run_shape = candidate->n_devices == m->sc->training.pp &&
                         candidate->n_microbatches == m->sc->training.microbatches;
    if (m->keep && run_shape &&
        (k == NULL || (*fits && !k_fits) ||
         (*fits == k_fits && res->makespan_ps < k->makespan_ps))) {
        res->schedule = ppsim_schedule_copy(candidate);
        ppsim_run_result_free(m->kept);
        m->kept = g_steal_pointer(&res);
    }
    return TRUE;
}

/* What the run decided that the scenario did not say, beyond the generator's own choices:
 * the layer split over stages (hardware mode, no model.stage_layers). */
static void
sim_note_split(const PpsimScenario *sc, const PpsimCosts *costs, GArray *choices)
{
    if (costs->explicit_mode || sc->model.stage_layers != NULL || choices == NULL)
        return;
    int S = costs->n_stages, lo = G_MAXINT, hi = 0;
    for (int i = 0; i < S; i++) {
        lo = MIN(lo, costs->stage[i].layers);
        hi = MAX(hi, costs->stage[i].layers);
    }
    g_autoptr(GString) s = g_string_new(NULL);
    for (int i = 0; i < S; i++)
        g_string_append_printf(s, "%s%d", i ? "," : "", costs->stage[i].layers);
    if (lo == hi)
        ppsim_choice_add(choices, "stage_layers", s->str, "even split: %d layer%s per stage", lo,
                         lo == 1 ? "" : "s");
    else
        ppsim_choice_add(choices, "stage_layers", s->str,
                         "as even as %d layers over %d stages allow", sc->model.layers, S);
}

/* The keys the scenario's framework set (it did not write them): one choice, "framework". */
static void
sim_note_framework(const PpsimScenario *sc, GArray *choices)
{
    const PpsimFramework *fw = ppsim_framework_nth(sc->framework);
    if (fw == NULL || sc->framework_applied == 0 || choices == NULL)
        return;
    g_autoptr(GString) set = g_string_new(NULL);
    for (guint i = 0; fw->settings[i].key != NULL; i++)
        if (sc->framework_applied & (1u << i))
            g_string_append_printf(set, "%s%s %s", set->len ? ", " : "", fw->settings[i].key,
                                   fw->settings[i].value);
    ppsim_choice_add(choices, "framework", fw->name, "it set %s", set->str);
}

PpsimSchedule *
ppsim_sim_build(const PpsimScenario *sc, const PpsimScheduleSpec *spec, PpsimCosts **costs_out,
                GArray *choices, PpsimSolverReport *solver, PpsimSimFlags flags,
                PpsimRunResult **replayed, GError **error)
{
    const char *path = spec->origin ? spec->origin : sc->path ? sc->path : "";
    if (g_strcmp0(spec->name, "custom") == 0) {
        g_autoptr(PpsimSchedule) sched = sim_build_custom(sc, spec, error);
        if (sched == NULL)
            return NULL;
        int pipes = sched->pipe_stages > 0 ? sched->n_stages / sched->pipe_stages : 1;
        PpsimCosts *costs = ppsim_costs_new(sc, sched->n_stages / pipes, error);
        if (costs == NULL)
            return NULL;
        ppsim_costs_repeat(costs, pipes);
        if (costs_out)
            *costs_out = costs;
        else
            ppsim_costs_free(costs);
        return g_steal_pointer(&sched);
    }
    GError *local = NULL;
    const PpsimScheduleClass *klass = ppsim_sched_registry_find(spec->name, &local);
    if (klass == NULL) {
        g_propagate_prefixed_error(error, local, "%s:%d:%d: ", path, spec->mark.line,
                                   spec->mark.col);
        return NULL;
    }
    g_autoptr(PpsimOptions) opts = ppsim_options_new(klass, spec->options, path, error);
    if (opts == NULL)
        return NULL;
    PpsimPipelineShape shape = {.p = sc->training.pp,
                                .v = klass->chunks > 0 ? klass->chunks : sc->training.chunks,
                                .m = sc->training.microbatches};
    int pipes = MAX(klass->pipes, 1);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, shape.p * shape.v / pipes, error);
    if (costs == NULL)
        return NULL;
    ppsim_costs_repeat(costs, pipes);
    if (klass->chunks == 0 && !sc->training.chunks_set)
        ppsim_choice_add(choices, "v", "1", "training.chunks unset");
    Measure measure = {sc, costs, flags, replayed != NULL, NULL};
    PpsimScheduleParams params = {.options = opts,
                                  .costs = &costs->estimates,
                                  .choices = choices,
                                  .measure = sim_measure,
                                  .measure_data = &measure,
                                  .solver = solver};
    PpsimSchedule *raw = NULL;
    gboolean made = klass->generate(&shape, &params, &raw, error);
    g_autoptr(PpsimRunResult) kept = measure.kept;
    if (!made)
        return NULL;
    sim_note_split(sc, costs, choices);
    sim_note_framework(sc, choices);
    ppsim_sim_note_parallel(sc, choices);
    g_autoptr(PpsimSchedule) sched = raw;
    g_assert(sched != NULL);
    if (sched->n_stages != costs->n_stages) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "generator made %d stages, expected %d", sched->n_stages, costs->n_stages);
        return NULL;
    }
    g_autofree char *what = g_strdup_printf("generator '%s' output", klass->name);
    if (!sim_check_shape(sc, sched, what, error))
        return NULL;
    if (replayed != NULL && kept != NULL && ppsim_schedule_equal(kept->schedule, sched)) {
        g_free(kept->label);
        g_free(kept->generator);
        kept->label = g_strdup(spec->label ? spec->label : spec->name);
        kept->generator = g_strdup(spec->name);
        kept->replay_reused = TRUE;
        *replayed = g_steal_pointer(&kept);
    }
    if (costs_out)
        *costs_out = g_steal_pointer(&costs);
    return g_steal_pointer(&sched);
}

PpsimSchedule *
ppsim_sim_build_schedule(const PpsimScenario *sc, const PpsimScheduleSpec *spec,
                         PpsimCosts **costs_out, GError **error)
{
    return ppsim_sim_build(sc, spec, costs_out, NULL, NULL, 0, NULL, error);
}

PpsimSchedule *
ppsim_sim_build_schedule_full(const PpsimScenario *sc, const PpsimScheduleSpec *spec,
                              PpsimCosts **costs_out, PpsimSolverReport *solver, GError **error)
{
    return ppsim_sim_build(sc, spec, costs_out, NULL, solver, 0, NULL, error);
}

gboolean
ppsim_sim_check_schedule_names(const GPtrArray *specs, GError **error)
{
    for (guint i = 0; i < specs->len; i++) {
        const PpsimScheduleSpec *spec = g_ptr_array_index(specs, i);
        if (strcmp(spec->name, "custom") != 0 && !ppsim_sched_registry_find(spec->name, error))
            return FALSE;
    }
    return TRUE;
}

PpsimScheduleSpec *
ppsim_sim_take_schedule(PpsimScenario *scenario, const char *name, GError **error)
{
    for (guint i = 0; i < scenario->schedules->len; i++) {
        PpsimScheduleSpec *s = g_ptr_array_index(scenario->schedules, i);
        if (g_strcmp0(s->label, name) == 0 || g_strcmp0(s->name, name) == 0)
            return g_ptr_array_steal_index(scenario->schedules, i);
    }
    if (strcmp(name, "custom") != 0 && !ppsim_sched_registry_find(name, error)) {
        g_prefix_error(error, "--schedule: ");
        return NULL;
    }
    return ppsim_schedule_spec_new(name);
}
