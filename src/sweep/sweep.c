/* sweep.c: the sweep itself, apart from the file that describes it: axes and their values
 * (each tried on the base scenario as a `--set` override), point numbering over zipped
 * groups, the base scenario, constraints, the metric columns. sweep-file.c reads sweep files
 * and --grid into it. */
#include "sweep/sweep-internal.h"
#include "util/ppsim-error.h"

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
    "mfu", /* not a default column: sweeps without it keep their columns */
    /* hardware mode, not default columns: the fullest device's memory by kind (README "How
     * memory is modelled") and the least headroom of any device; 0 in explicit mode */
    "memory_weights",
    "memory_gradients",
    "memory_optimizer",
    "memory_activations",
    "memory_logits",
    "memory_buffers",
    "memory_overheads",
    "memory_free",
    NULL,
};
#define SWEEP_DEFAULT_METRICS 7

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
ppsim_sweep_axis_add(PpsimSweep *s, PpsimSweepAxis *a, const char *value, const char *label,
                     const char *where, GError **error)
{
    if (where == NULL) { /* the caller vouches for it */
        g_ptr_array_add(a->values, g_strdup(value));
        g_ptr_array_add(a->labels, g_strdup(label));
        return TRUE;
    }
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
        g_set_error(error, PPSIM_SCENARIO_ERROR, local->code, "%s: axis '%s' value '%s': %s", where,
                    a->path, label, msg);
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

gboolean
ppsim_sweep_base(PpsimSweep *s, GError **error)
{
    g_autoptr(GPtrArray) ov = g_ptr_array_new();
    for (guint i = 0; i < s->sets->len; i++)
        g_ptr_array_add(ov, g_ptr_array_index(s->sets, i));
    g_ptr_array_add(ov, NULL);
    s->base_sc = ppsim_scenario_parse(s->base, strlen(s->base), s->scenario_path, s->basedir,
                                      (const char *const *)ov->pdata, error);
    return s->base_sc != NULL;
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
