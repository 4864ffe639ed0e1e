/* sweep-summary.c: what a sweep's rows say at a glance: counts, the fastest configuration
 * that fits, the Pareto front of makespan against peak memory (the SVG plots of them:
 * sweep-plot.c); see sweep.h. */
#include "sweep/sweep-summary-internal.h"
#include "util/fmt.h"

#include <math.h>
#include <string.h>

/* Rows that ran and fit (no device out of memory). */
gboolean
ppsim_sweep_row_fits(const PpsimSweepRow *r)
{
    return r->has_metrics && !r->oom;
}

gboolean
ppsim_sweep_rows_in_bytes(const GPtrArray *rows)
{
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (r->has_metrics)
            return strcmp(r->memory_unit, "bytes") == 0;
    }
    return FALSE;
}

static void
mem_text(GString *out, double v, gboolean bytes)
{
    if (bytes) {
        ppsim_fmt_fixed(out, v / (1024.0 * 1024.0 * 1024.0), 2);
        g_string_append(out, " GiB");
    } else {
        ppsim_fmt_fixed(out, v, 2);
        g_string_append(out, " units");
    }
}

/* Whether the rows' work differs: then the summary ranks by tokens/s, since a shorter
 * makespan may only mean fewer tokens (fewer microbatches, a smaller microbatch or dp).
 * Rows whose token count is unknown (a CSV without tokens_per_s) keep makespan. */
gboolean
ppsim_sweep_rows_by_throughput(const GPtrArray *rows)
{
    double lo = INFINITY, hi = 0;
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (!r->has_metrics)
            continue;
        if (!(r->tokens > 0) || !(r->tokens_per_s > 0))
            return FALSE;
        lo = MIN(lo, r->tokens);
        hi = MAX(hi, r->tokens);
    }
    /* tokens read back from a CSV are rate x makespan: equal up to rounding */
    return hi > lo * (1 + 1e-6);
}

/* What the summary minimises: makespan, or minus tokens/s. */
static double
row_cost(const PpsimSweepRow *r, gboolean by_tput)
{
    return by_tput ? -r->tokens_per_s : r->makespan_ms;
}

/* "makespan  [tokens/s]  peak  schedule  axis=value ..." */
static void
row_line(GString *out, const PpsimSweepRow *r, char **axis_names, int n_axes, gboolean bytes)
{
    g_autoptr(GString) cell = g_string_new(NULL);
    ppsim_fmt_fixed(cell, r->makespan_ms, 3);
    g_string_append_printf(out, "%14s ms  ", cell->str);
    g_string_truncate(cell, 0);
    if (r->tokens_per_s > 0) {
        ppsim_fmt_fixed(cell, r->tokens_per_s, 0);
        g_string_append_printf(out, "%10s tokens/s  ", cell->str);
        g_string_truncate(cell, 0);
    }
    g_string_append(out, "peak ");
    mem_text(cell, r->peak_memory, bytes);
    g_string_append_printf(out, "%12s  %s", cell->str, r->schedule);
    for (int a = 0; a < n_axes; a++)
        g_string_append_printf(out, "  %s=%s", axis_names[a], r->labels[a]);
    g_string_append_c(out, '\n');
}

static int
cmp_front(gconstpointer pa, gconstpointer pb, gpointer by_tput)
{
    const PpsimSweepRow *a = *(PpsimSweepRow *const *)pa, *b = *(PpsimSweepRow *const *)pb;
    double ca = row_cost(a, by_tput != NULL), cb = row_cost(b, by_tput != NULL);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (a->peak_memory != b->peak_memory)
        return a->peak_memory < b->peak_memory ? -1 : 1;
    if (a->point != b->point)
        return a->point < b->point ? -1 : 1;
    return strcmp(a->schedule, b->schedule);
}

/* The rows on the Pareto front of (makespan or tokens/s, peak memory) among those that
 * fit, fastest first: each is faster than every row with less or equal peak memory.
 * Returns: (transfer container). */
GPtrArray *
ppsim_sweep_pareto_front(const GPtrArray *rows, gboolean by_tput)
{
    g_autoptr(GPtrArray) fit = g_ptr_array_new();
    for (guint i = 0; i < rows->len; i++)
        if (ppsim_sweep_row_fits(g_ptr_array_index(rows, i)))
            g_ptr_array_add(fit, g_ptr_array_index(rows, i));
    g_ptr_array_sort_with_data(fit, cmp_front, by_tput ? GINT_TO_POINTER(1) : NULL);
    GPtrArray *front = g_ptr_array_new();
    double best_peak = INFINITY;
    for (guint i = 0; i < fit->len; i++) {
        PpsimSweepRow *r = g_ptr_array_index(fit, i);
        if (r->peak_memory < best_peak) {
            g_ptr_array_add(front, r);
            best_peak = r->peak_memory;
        }
    }
    return front;
}

void
ppsim_sweep_summary(GString *out, const GPtrArray *rows, char **axis_names, int n_axes)
{
    static const char *const statuses[] = {"ok", "refused", "invalid", "failed"};
    guint count[G_N_ELEMENTS(statuses)] = {0}, fits = 0;
    g_autoptr(GHashTable) points = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        g_hash_table_add(points, (gpointer)&r->point);
        for (guint k = 0; k < G_N_ELEMENTS(statuses); k++)
            count[k] += strcmp(r->status, statuses[k]) == 0;
        fits += ppsim_sweep_row_fits(r);
    }
    g_string_append_printf(out,
                           "sweep: %u points, %u rows: %u ok (%u fit in memory), %u refused, "
                           "%u invalid, %u failed\n",
                           g_hash_table_size(points), rows->len, count[0], fits, count[1], count[2],
                           count[3]);
    if (fits == 0)
        return;
    gboolean bytes = ppsim_sweep_rows_in_bytes(rows);
    gboolean by_tput = ppsim_sweep_rows_by_throughput(rows);
    /* fastest that fits, overall and per schedule (schedules in order of first appearance) */
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    g_autoptr(GPtrArray) best = g_ptr_array_new();
    const PpsimSweepRow *overall = NULL;
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (!ppsim_sweep_row_fits(r))
            continue;
        guint k = 0;
        if (!g_ptr_array_find_with_equal_func(names, r->schedule, g_str_equal, &k)) {
            g_ptr_array_add(names, r->schedule);
            g_ptr_array_add(best, (gpointer)r);
            k = names->len - 1;
        }
        const PpsimSweepRow *b = g_ptr_array_index(best, k);
        if (row_cost(r, by_tput) < row_cost(b, by_tput))
            best->pdata[k] = (gpointer)r;
        if (overall == NULL || row_cost(r, by_tput) < row_cost(overall, by_tput))
            overall = r;
    }
    if (by_tput)
        g_string_append(out, "ranked by tokens/s: the tokens per iteration differ between "
                             "points\n");
    g_string_append(out, "fastest that fits (no device out of memory):\n");
    row_line(out, overall, axis_names, n_axes, bytes);
    if (names->len > 1) {
        g_string_append(out, "fastest that fits, per schedule:\n");
        for (guint k = 0; k < best->len; k++)
            row_line(out, g_ptr_array_index(best, k), axis_names, n_axes, bytes);
    }
    g_autoptr(GPtrArray) front = ppsim_sweep_pareto_front(rows, by_tput);
    g_string_append_printf(out, "Pareto front, %s against peak memory (%u rows):\n",
                           by_tput ? "tokens/s" : "makespan", front->len);
    for (guint i = 0; i < front->len; i++)
        row_line(out, g_ptr_array_index(front, i), axis_names, n_axes, bytes);
}
