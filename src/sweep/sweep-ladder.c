/* sweep-ladder.c: a point of a ladder sweep (the memory plans `ppsim search` tries): per
 * schedule, the first rung that fits, with rungs pruned on their static memory before any
 * replay; see sweep.h. */
#include "sweep/sweep-run-internal.h"
#include "util/fmt.h"

#include <string.h>

/* The smallest static memory (weights, gradients, optimizer states) any device of @sc
 * holds: the average over the pipeline's devices, a lower bound on the largest peak, in
 * bytes; 0 where it is no bound (explicit costs, a schedule that may move the optimizer
 * states to the host). The last stage's copy of the word embedding is left out: a V-shape's
 * device holds it with the first stage's, once (PpsimStageCost.copy_*_mem). */
static gint64
static_bound(const PpsimScenario *sc, const PpsimScheduleSpec *spec)
{
    if (sc->costs.present || strcmp(spec->name, "tpipe") == 0 || strcmp(spec->name, "custom") == 0)
        return 0;
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, sc->training.pp, NULL);
    if (costs == NULL)
        return 0;
    double total = 0;
    for (int i = 0; i < costs->n_stages; i++) {
        const PpsimStageCost *st = &costs->stage[i];
        total +=
            (double)st->static_mem - (st->copy_weights_mem + st->copy_grads_mem + st->copy_opt_mem);
    }
    return (gint64)(total / sc->training.pp);
}

/* Whether rung @r differs from an earlier rung only in parallel.zero. */
static gboolean
rung_only_zero_differs(const PpsimSweep *s, guint r)
{
    char **rung = g_ptr_array_index(s->rungs, r);
    for (guint q = 0; q < r; q++) {
        char **prev = g_ptr_array_index(s->rungs, q);
        gboolean same = TRUE;
        for (guint k = 0; k < s->rung_paths->len && same; k++)
            same = strcmp(g_ptr_array_index(s->rung_paths, k), "parallel.zero") == 0 ||
                   strcmp(rung[k], prev[k]) == 0;
        if (same)
            return TRUE;
    }
    return FALSE;
}

/* A point of a ladder sweep: per schedule, the first rung that fits (see sweep.h). */
void
ppsim_sweep_point_run_ladder(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point,
                             const guint *index, GPtrArray *ov, GString *out, GPtrArray *rows)
{
    guint n_rungs = s->rungs->len, n_paths = s->rung_paths->len;
    guint n_specs = 0;
    gboolean *done = NULL;
    PpsimRunResult **last = NULL; /* per schedule: its last replay (out of memory) */
    guint *last_rung = NULL;
    gint64 *least = NULL; /* per schedule: the smallest pruned bound */
    char **labels = NULL;
    for (guint r = 0; r < n_rungs; r++) {
        char **rung = g_ptr_array_index(s->rungs, r);
        g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i + 1 < ov->len; i++) /* ov ends with NULL */
            g_ptr_array_add(all, g_strdup(g_ptr_array_index(ov, i)));
        for (guint k = 0; k < n_paths; k++)
            g_ptr_array_add(all, g_strdup_printf("%s=%s",
                                                 (const char *)g_ptr_array_index(s->rung_paths, k),
                                                 rung[k]));
        g_ptr_array_add(all, NULL);
        GError *local = NULL;
        g_autoptr(PpsimScenario) sc =
            ppsim_scenario_parse(s->base, strlen(s->base), s->scenario_path, s->basedir,
                                 (const char *const *)all->pdata, &local);
        if (sc == NULL) {
            if (r == 0) { /* the point itself is invalid */
                ppsim_sweep_row_emit_rung(s, fmt, point, index, rung, "", "invalid", NULL, 0,
                                          local->message, out, rows);
                g_error_free(local);
                return;
            }
            g_error_free(local); /* this rung only: the others may hold */
            continue;
        }
        if (r > 0 && sc->parallel.dp * sc->parallel.cp <= 1 && rung_only_zero_differs(s, r)) {
            continue; /* ZeRO shards over dp x cp: with one rank this rung is an earlier one */
        }
        if (done == NULL) {
            n_specs = sc->schedules->len;
            done = g_new0(gboolean, n_specs);
            last = g_new0(PpsimRunResult *, n_specs);
            last_rung = g_new0(guint, n_specs);
            least = g_new0(gint64, n_specs);
            labels = g_new0(char *, n_specs + 1);
            for (guint i = 0; i < n_specs; i++) {
                const PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
                labels[i] = g_strdup(spec->label ? spec->label : spec->name);
            }
        }
        for (guint i = 0; i < n_specs && i < sc->schedules->len; i++) {
            if (done[i])
                continue;
            const PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
            gint64 bound = static_bound(sc, spec);
            if (bound > 0 && sc->memory_limit_bytes > 0 &&
                (guint64)bound > sc->memory_limit_bytes) {
                least[i] = least[i] == 0 ? bound : MIN(least[i], bound);
                continue;
            }
            PpsimRunResult *res = ppsim_sim_run_spec(sc, spec, 0, &local);
            if (res == NULL) {
                ppsim_sweep_row_emit_rung(s, fmt, point, index, rung, labels[i],
                                          ppsim_sweep_status_of(local), NULL, 0, local->message,
                                          out, rows);
                g_clear_error(&local);
                done[i] = TRUE;
                continue;
            }
            if (ppsim_run_result_fits(res)) {
                ppsim_sweep_row_emit_rung(s, fmt, point, index, rung, labels[i], "ok", res, 0, NULL,
                                          out, rows);
                ppsim_run_result_free(res);
                done[i] = TRUE;
                continue;
            }
            if (last[i] != NULL)
                ppsim_run_result_free(last[i]);
            last[i] = res;
            last_rung[i] = r;
        }
    }
    for (guint i = 0; i < n_specs; i++) {
        if (done[i]) { /* a later rung fit: its out-of-memory replay is not a row */
            if (last[i] != NULL)
                ppsim_run_result_free(last[i]);
            continue;
        }
        if (last[i] != NULL) { /* no rung fits: the last one replayed, out of memory */
            ppsim_sweep_row_emit_rung(s, fmt, point, index,
                                      g_ptr_array_index(s->rungs, last_rung[i]), labels[i], "ok",
                                      last[i], 0, NULL, out, rows);
            ppsim_run_result_free(last[i]);
        } else {
            g_autoptr(GString) msg = g_string_new("static memory alone is at least ");
            ppsim_fmt_fixed(msg, (double)least[i] / (1024.0 * 1024.0 * 1024.0), 2);
            g_string_append(msg, " GiB per GPU on every memory plan, over the limit");
            ppsim_sweep_row_emit_rung(s, fmt, point, index, NULL, labels[i], "pruned", NULL,
                                      least[i], msg->str, out, rows);
        }
    }
    g_free(done);
    g_free(last);
    g_free(last_rung);
    g_free(least);
    g_strfreev(labels);
}
