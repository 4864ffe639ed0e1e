/* sweep-point.c: one point of a sweep: its constraints, its scenario and every schedule's
 * replay, as rows (a ladder sweep's points: sweep-ladder.c); see sweep.h. */
#include "sweep/sweep-run-internal.h"
#include "util/ppsim-error.h"

#include <string.h>

/* ---- one point ------------------------------------------------------------------------------ */

typedef struct {
    const PpsimSweep *sweep;
    const guint *index;
} PointLookup;

/* A name in a constraint: the point's value of that axis, else the base scenario's. */
static gboolean
point_lookup(const char *path, double *out, gpointer data)
{
    const PointLookup *L = data;
    for (guint i = 0; i < L->sweep->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(L->sweep->axes, i);
        if (strcmp(a->path, path) == 0) {
            const char *label = g_ptr_array_index(a->labels, L->index[i]);
            char *end = NULL;
            *out = g_ascii_strtod(label, &end);
            return end != label && *end == '\0';
        }
    }
    return ppsim_scenario_lookup_number(L->sweep->base_sc, path, out);
}

const char *
ppsim_sweep_status_of(const GError *e)
{
    if (g_error_matches(e, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED))
        return "refused";
    if (e->domain == PPSIM_SCENARIO_ERROR ||
        g_error_matches(e, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNKNOWN))
        return "invalid";
    return "failed";
}

/* Computes every row of @point into @out and @rows. */
void
ppsim_sweep_point_run(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, GString *out,
                      GPtrArray *rows)
{
    g_autofree guint *index = g_new0(guint, MAX(s->axes->len, 1));
    ppsim_sweep_point_values(s, point, index);
    PointLookup L = {s, index};
    const char *sched_axis = NULL;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (!ppsim_sweep_axis_is_column(a))
            sched_axis = g_ptr_array_index(a->labels, index[i]);
    }
    for (guint c = 0; c < s->constraints->len; c++) {
        gboolean holds = FALSE;
        GError *local = NULL;
        if (!ppsim_sweep_expr_eval(g_ptr_array_index(s->constraints, c), point_lookup, &L, &holds,
                                   &local)) {
            ppsim_sweep_row_emit(s, fmt, point, index, sched_axis ? sched_axis : "", "invalid",
                                 NULL, local->message, out, rows);
            g_error_free(local);
            return;
        }
        if (!holds)
            return; /* not a point of this sweep */
    }
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < s->sets->len; i++)
        g_ptr_array_add(ov, g_strdup(g_ptr_array_index(s->sets, i)));
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        g_ptr_array_add(ov, g_strdup_printf("%s=%s", a->path,
                                            (const char *)g_ptr_array_index(a->values, index[i])));
    }
    g_ptr_array_add(ov, NULL);
    if (s->rungs != NULL) {
        ppsim_sweep_point_run_ladder(s, fmt, point, index, ov, out, rows);
        return;
    }
    GError *local = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(s->base, strlen(s->base), s->scenario_path, s->basedir,
                             (const char *const *)ov->pdata, &local);
    if (sc == NULL) {
        ppsim_sweep_row_emit(s, fmt, point, index, sched_axis ? sched_axis : "", "invalid", NULL,
                             local->message, out, rows);
        g_error_free(local);
        return;
    }
    for (guint i = 0; i < sc->schedules->len; i++) {
        const PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
        const char *label = spec->label ? spec->label : spec->name;
        /* hardware mode: the sampler reads the deterministic replay's transfers */
        PpsimSimFlags flags = s->samples > 0 && !sc->costs.present ? PPSIM_SIM_RECORD : 0;
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, spec, flags, &local);
        PpsimSampleOptions so = {.samples = s->samples, .seed = s->seed, .threads = 1};
        if (res != NULL && s->samples > 0 && !ppsim_sim_sample(sc, res, &so, &local)) {
            g_prefix_error(&local, "schedule '%s': ", label);
            g_clear_pointer(&res, ppsim_run_result_free);
        }
        if (res == NULL) {
            ppsim_sweep_row_emit(s, fmt, point, index, label, ppsim_sweep_status_of(local), NULL,
                                 local->message, out, rows);
            g_clear_error(&local);
        } else {
            ppsim_sweep_row_emit(s, fmt, point, index, label, "ok", res, NULL, out, rows);
        }
    }
}
