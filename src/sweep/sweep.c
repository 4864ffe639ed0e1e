/* sweep.c: the sweep itself, apart from the file that describes it: axes and their values
 * (each tried on the base scenario as a `--set` override), point numbering over zipped
 * groups, the base scenario, constraints, the metric columns. sweep-file.c reads sweep files
 * and --grid into it. */
#include "sweep/sweep-internal.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <string.h>

/* Most points one sweep may have. */
#define SWEEP_MAX_POINTS G_GUINT64_CONSTANT(100000000)

static const char *const metric_names[] = {
    "makespan_ms",
    "bubble_ratio",
    "bubble_ratio_span",
    "peak_activation",
    "peak_memory",
    "memory_unit",
    "oom",
    "tokens_per_s",   /* tokens of one iteration over the makespan */
    "tflops_per_gpu", /* model FLOPs (3 x forward) per second and GPU; empty in explicit mode */
    "mfu",            /* not a default column: sweeps without it keep their columns */
    /* --samples (scenarios/README.md "Variability"): the Monte-Carlo makespans; empty without it */
    "makespan_mean_ms",
    "makespan_p50_ms",
    "makespan_p90_ms",
    "makespan_p99_ms",
    /* hardware mode, not default columns: the fullest device's memory by kind (src/README.md "How
     * memory is modelled") and the least headroom of any device; 0 in explicit mode */
    "memory_weights",
    "memory_gradients",
    "memory_optimizer",
    "memory_activations",
    "memory_logits",
    "memory_buffers",
    "memory_overheads",
    "memory_free",
    "memory_verdict", /* the worst device's: fits | tight | oom (the `oom` column counts tight) */
    NULL,
};
#define SWEEP_DEFAULT_METRICS 9

const char *const *
ppsim_sweep_metric_names(void)
{
    return metric_names;
}

static void
axis_free(gpointer p)
{
    PpsimSweepAxis *a = p;
    g_free(a->path);
    g_ptr_array_unref(a->values);
    g_ptr_array_unref(a->labels);
    g_free(a);
}

PpsimSweepAxis *
ppsim_sweep_axis_new(const char *path, PpsimMark mark, int group)
{
    PpsimSweepAxis *a = g_new0(PpsimSweepAxis, 1);
    a->path = g_strdup(path);
    a->values = g_ptr_array_new_with_free_func(g_free);
    a->labels = g_ptr_array_new_with_free_func(g_free);
    a->mark = mark;
    a->group = group;
    return a;
}

PpsimSweep *
ppsim_sweep_new_empty(const char *display)
{
    PpsimSweep *s = g_new0(PpsimSweep, 1);
    s->display = g_strdup(display);
    s->sets = g_ptr_array_new_with_free_func(g_free);
    s->axes = g_ptr_array_new_with_free_func(axis_free);
    s->constraints = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_expr_free);
    s->metrics = g_ptr_array_new();
    return s;
}

void
ppsim_sweep_free(PpsimSweep *s)
{
    if (s == NULL)
        return;
    g_free(s->display);
    g_free(s->scenario_path);
    g_free(s->basedir);
    g_free(s->base);
    g_ptr_array_unref(s->sets);
    g_ptr_array_unref(s->axes);
    g_free(s->group_len);
    g_ptr_array_unref(s->constraints);
    g_ptr_array_unref(s->metrics);
    ppsim_scenario_free(s->base_sc);
    g_clear_error(&s->base_error);
    if (s->rung_paths != NULL)
        g_ptr_array_unref(s->rung_paths);
    if (s->rungs != NULL)
        g_ptr_array_unref(s->rungs);
    g_free(s);
}

void
ppsim_sweep_point_values(const PpsimSweep *s, guint64 point, guint *index)
{
    guint64 rest = point;
    g_autofree guint *at = g_new0(guint, MAX(s->n_groups, 1));
    for (int g = s->n_groups - 1; g >= 0; g--) {
        at[g] = (guint)(rest % s->group_len[g]);
        rest /= s->group_len[g];
    }
    for (guint i = 0; i < s->axes->len; i++)
        index[i] = at[((PpsimSweepAxis *)g_ptr_array_index(s->axes, i))->group];
}

gboolean
ppsim_sweep_check_schedules(const PpsimSweep *s, const char *value, const char *where,
                            GError **error)
{
    GError *local = NULL;
    g_autoptr(GPtrArray) specs = ppsim_schedule_specs_parse(value, where, s->basedir, &local);
    if (specs != NULL)
        ppsim_sim_check_schedule_names(specs, &local);
    if (local == NULL)
        return TRUE;
    g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE, "%s: %s", where,
                local->message);
    g_error_free(local);
    return FALSE;
}

gboolean
ppsim_sweep_axis_add(PpsimSweep *s, PpsimSweepAxis *a, const char *value, const char *label,
                     const char *where, GError **error)
{
    if (where == NULL) { /* the caller vouches for it */
        g_ptr_array_add(a->values, g_strdup(value));
        g_ptr_array_add(a->labels, g_strdup(label));
        return TRUE;
    }
    if (strcmp(a->path, "schedule") == 0 && !ppsim_sweep_check_schedules(s, value, where, error))
        return FALSE;
    g_autofree char *override = g_strdup_printf("%s=%s", a->path, value);
    g_autoptr(GPtrArray) ov = g_ptr_array_new();
    for (guint i = 0; i < s->sets->len; i++)
        g_ptr_array_add(ov, g_ptr_array_index(s->sets, i));
    g_ptr_array_add(ov, override);
    g_ptr_array_add(ov, NULL);
    GError *local = NULL;
    if (!ppsim_scenario_check_values(s->base, strlen(s->base), s->scenario_path, s->basedir,
                                     (const char *const *)ov->pdata, &local)) {
        /* "--set key.path: msg" -> "msg": the sweep names the place itself */
        const char *msg = local->message, *prefix_end = NULL;
        if (g_str_has_prefix(msg, "--set ") && (prefix_end = strstr(msg, ": ")) != NULL)
            msg = prefix_end + 2;
        g_autofree char *q_path = ppsim_quote(a->path), *q_label = ppsim_quote(label);
        g_set_error(error, PPSIM_SCENARIO_ERROR, local->code, "%s: axis '%s' value '%s': %s", where,
                    q_path, q_label, msg);
        g_error_free(local);
        return FALSE;
    }
    g_ptr_array_add(a->values, g_strdup(value));
    g_ptr_array_add(a->labels, g_strdup(label));
    return TRUE;
}

/* Counts points and checks the zip groups' lengths. */
gboolean
ppsim_sweep_finish(PpsimSweep *s, GError **error)
{
    int n = 0;
    for (guint i = 0; i < s->axes->len; i++)
        n = MAX(n, ((PpsimSweepAxis *)g_ptr_array_index(s->axes, i))->group + 1);
    s->n_groups = n;
    s->group_len = g_new0(guint, MAX(n, 1));
    for (guint i = 0; i < s->axes->len; i++) {
        PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        guint len = a->values->len;
        if (s->group_len[a->group] != 0 && s->group_len[a->group] != len) {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s:%d:%d: zipped axis '%s' has %u values, the others of its group %u",
                        s->display, a->mark.line, a->mark.col, a->path, len,
                        s->group_len[a->group]);
            return FALSE;
        }
        s->group_len[a->group] = len;
    }
    s->n_points = 1;
    for (int g = 0; g < n; g++) {
        if (s->n_points > SWEEP_MAX_POINTS / s->group_len[g]) {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s: the sweep has more than %" G_GUINT64_FORMAT " points", s->display,
                        SWEEP_MAX_POINTS);
            return FALSE;
        }
        s->n_points *= s->group_len[g];
    }
    if (s->metrics->len == 0)
        for (int i = 0; i < SWEEP_DEFAULT_METRICS; i++)
            g_ptr_array_add(s->metrics, (gpointer)metric_names[i]);
    return TRUE;
}

void
ppsim_sweep_set_samples(PpsimSweep *s, int samples, guint64 seed)
{
    s->samples = samples;
    s->seed = seed;
    if (samples <= 0)
        return;
    for (int i = SWEEP_DEFAULT_METRICS + 1; metric_names[i] != NULL; i++) {
        gboolean have = FALSE;
        for (guint k = 0; k < s->metrics->len; k++)
            have |= strcmp(g_ptr_array_index(s->metrics, k), metric_names[i]) == 0;
        if (!have)
            g_ptr_array_add(s->metrics, (gpointer)metric_names[i]);
    }
}

gboolean
ppsim_sweep_base(PpsimSweep *s, GError **error)
{
    g_autoptr(GPtrArray) ov = g_ptr_array_new();
    for (guint i = 0; i < s->sets->len; i++)
        g_ptr_array_add(ov, g_ptr_array_index(s->sets, i));
    g_ptr_array_add(ov, NULL);
    GError *local = NULL;
    s->base_sc = ppsim_scenario_parse(s->base, strlen(s->base), s->scenario_path, s->basedir,
                                      (const char *const *)ov->pdata, &local);
    if (s->base_sc != NULL)
        return TRUE;
    if (local->domain == PPSIM_SCENARIO_ERROR && local->code == PPSIM_SCENARIO_ERROR_VALUE) {
        /* a value that may hold once the axes set the rest of the layout (hardware.nodes=8
         * in `set:` with dp on an axis): judged on the first point, in
         * ppsim_sweep_base_on_points */
        s->base_error = local;
        return TRUE;
    }
    g_propagate_error(error, local);
    return FALSE;
}

/* The base with the fixed overrides and the values of point @point (groups of @group_len,
 * the last varying fastest), or NULL. */
static PpsimScenario *
base_with_point(const PpsimSweep *s, const guint *group_len, int n_groups, guint64 point)
{
    g_autofree guint *at = g_new0(guint, MAX(n_groups, 1));
    for (int g = n_groups - 1; g >= 0; g--) {
        at[g] = (guint)(point % MAX(group_len[g], 1));
        point /= MAX(group_len[g], 1);
    }
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < s->sets->len; i++)
        g_ptr_array_add(ov, g_strdup(g_ptr_array_index(s->sets, i)));
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (a->values->len > at[a->group])
            g_ptr_array_add(
                ov, g_strdup_printf("%s=%s", a->path,
                                    (const char *)g_ptr_array_index(a->values, at[a->group])));
    }
    g_ptr_array_add(ov, NULL);
    return ppsim_scenario_parse(s->base, strlen(s->base), s->scenario_path, s->basedir,
                                (const char *const *)ov->pdata, NULL);
}

gboolean
ppsim_sweep_base_on_points(PpsimSweep *s, GError **error)
{
    if (s->base_sc != NULL || s->base_error == NULL)
        return TRUE;
    int n_groups = 0;
    for (guint i = 0; i < s->axes->len; i++)
        n_groups = MAX(n_groups, ((PpsimSweepAxis *)g_ptr_array_index(s->axes, i))->group + 1);
    g_autofree guint *group_len = g_new0(guint, MAX(n_groups, 1));
    guint64 points = 1;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        group_len[a->group] = MAX(group_len[a->group], a->values->len);
    }
    for (int g = 0; g < n_groups; g++)
        points = points * MAX(group_len[g], 1) > 4096 ? 4096 : points * MAX(group_len[g], 1);
    /* the first point (of the first 4096) that makes the layout whole stands for the base;
     * the others are judged when they run (a row with status invalid) */
    for (guint64 p = 0; p < points && s->base_sc == NULL; p++)
        s->base_sc = base_with_point(s, group_len, n_groups, p);
    if (s->base_sc == NULL) { /* no point completes the layout: the error as it was */
        g_propagate_error(error, s->base_error);
        s->base_error = NULL;
        return FALSE;
    }
    g_clear_error(&s->base_error);
    return TRUE;
}

static gboolean
base_lookup(const char *path, double *out, gpointer data)
{
    return ppsim_scenario_lookup_number(data, path, out);
}

gboolean
ppsim_sweep_add_constraint(PpsimSweep *s, const char *text, const char *where, GError **error)
{
    GError *local = NULL;
    g_autoptr(PpsimSweepExpr) e = ppsim_sweep_expr_parse(text, &local);
    gboolean holds = FALSE;
    /* every name must be a number of the scenario: tried on the base */
    if (e != NULL)
        ppsim_sweep_expr_eval(e, base_lookup, s->base_sc, &holds, &local);
    if (local != NULL && g_error_matches(local, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE))
        g_clear_error(&local); /* a division by zero on the base only */
    if (local != NULL) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, local->code, "%s: %s", where, local->message);
        g_error_free(local);
        return FALSE;
    }
    g_ptr_array_add(s->constraints, g_steal_pointer(&e));
    return TRUE;
}

PpsimSweep *
ppsim_sweep_new_points(const char *scenario_path, char **sets, char **paths,
                       const GPtrArray *points, char **rung_paths, const GPtrArray *rungs,
                       GError **error)
{
    g_autoptr(PpsimSweep) s = ppsim_sweep_new_empty(scenario_path);
    s->scenario_path = g_strdup(scenario_path);
    s->basedir = g_path_get_dirname(scenario_path);
    if (!g_file_get_contents(scenario_path, &s->base, NULL, error))
        return NULL;
    for (char **set = sets; set && *set; set++)
        g_ptr_array_add(s->sets, g_strdup(*set));
    if (!ppsim_sweep_base(s, error))
        return NULL;
    for (guint k = 0; paths[k] != NULL; k++) {
        PpsimSweepAxis *a = ppsim_sweep_axis_new(paths[k], (PpsimMark){0, 0}, 0);
        g_ptr_array_add(s->axes, a);
        for (guint i = 0; i < points->len; i++) {
            const char *v = ((char **)g_ptr_array_index(points, i))[k];
            ppsim_sweep_axis_add(s, a, v, v, NULL, NULL);
        }
    }
    if (rung_paths != NULL) {
        s->rung_paths = g_ptr_array_new_with_free_func(g_free);
        for (char **r = rung_paths; *r; r++)
            g_ptr_array_add(s->rung_paths, g_strdup(*r));
        s->rungs = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
        for (guint i = 0; i < rungs->len; i++)
            g_ptr_array_add(s->rungs, g_strdupv(g_ptr_array_index(rungs, i)));
    }
    if (!ppsim_sweep_base_on_points(s, error) || !ppsim_sweep_finish(s, error))
        return NULL;
    g_ptr_array_add(s->metrics, (gpointer)metric_names[SWEEP_DEFAULT_METRICS]); /* mfu */
    return g_steal_pointer(&s);
}
