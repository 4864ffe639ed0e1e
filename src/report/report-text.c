/* report-text.c: the human table printed by `ppsim run`: one row per schedule, then the
 * peak activation of each device, so schedules compare at a glance. */
#include "report/report.h"
#include "report/columns.h"
#include "util/fmt.h"

#include <math.h>
#include <string.h>

/* Devices shown one by one up to this many; beyond, only min and max. */
#define TEXT_MAX_DEVICE_COLUMNS 16

static void
text_mem(GString *out, const PpsimRunResult *res, gint64 value)
{
    if (res->mem_scale == 1.0) {
        ppsim_fmt_fixed(out, (double)value / (1024.0 * 1024.0 * 1024.0), 2);
    } else {
        ppsim_fmt_fixed(out, (double)value / res->mem_scale, 2);
    }
}

static void
text_pad(GString *out, gsize from, gsize width)
{
    while (out->len - from < width)
        g_string_append_c(out, ' ');
    g_string_append_c(out, ' ');
}

/* Appends @cell right-aligned in @width. */
static void
text_cell_right(GString *out, const char *cell, int width)
{
    g_string_append_printf(out, "%*s ", width, cell);
}

static int
text_label_width(const GPtrArray *results)
{
    int w = 8;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        w = MAX(w, (int)strlen(res->label));
    }
    return w;
}

static void
text_summary(GString *out, const GPtrArray *results, int lw, const char *mem_unit)
{
    gsize start = out->len;
    g_string_append(out, "schedule");
    text_pad(out, start, lw);
    const PpsimRunResult *first = g_ptr_array_index(results, 0);
    gboolean mfu = first->parallel; /* a column only for 3D scenarios: others stay as they were */
    gboolean tput = !first->explicit_mode; /* tokens/s and TFLOP/s per GPU: hardware mode */
    g_string_append_printf(out, "%14s ", "makespan(ms)");
    if (tput)
        g_string_append_printf(out, "%11s %10s ", "tokens/s", "TFLOP/s");
    if (mfu)
        g_string_append_printf(out, "%7s ", "mfu");
    g_string_append_printf(out, "%7s %7s %14s %14s %s\n", "bubble", "span", "peak_act", "peak_mem",
                           "oom");
    g_string_append_printf(out, "%*s %14s ", lw, "", "");
    if (tput)
        g_string_append_printf(out, "%11s %10s ", "", "per GPU");
    if (mfu)
        g_string_append_printf(out, "%7s ", "");
    g_string_append_printf(out, "%7s %7s %14s %14s\n", "", "", mem_unit, mem_unit);
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        g_autoptr(GString) cell = g_string_new(NULL);
        gsize row = out->len;
        g_string_append(out, res->label);
        text_pad(out, row, lw);
        ppsim_fmt_fixed(cell, (double)res->makespan_ps / PPSIM_PS_PER_MS, 3);
        text_cell_right(out, cell->str, 14);
        g_string_truncate(cell, 0);
        if (tput) {
            ppsim_fmt_fixed(cell, res->tokens_per_s, 0);
            text_cell_right(out, cell->str, 11);
            g_string_truncate(cell, 0);
            ppsim_fmt_fixed(cell, res->tflops_per_gpu, 1);
            text_cell_right(out, cell->str, 10);
            g_string_truncate(cell, 0);
        }
        if (mfu) {
            ppsim_fmt_fixed(cell, res->mfu, 4);
            text_cell_right(out, cell->str, 7);
            g_string_truncate(cell, 0);
        }
        ppsim_fmt_fixed(cell, res->bubble_ratio, 4);
        text_cell_right(out, cell->str, 7);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, res->bubble_ratio_span, 4);
        text_cell_right(out, cell->str, 7);
        g_string_truncate(cell, 0);
        text_mem(cell, res, ppsim_run_result_max_peak_activation(res));
        text_cell_right(out, cell->str, 14);
        g_string_truncate(cell, 0);
        text_mem(cell, res, ppsim_run_result_max_peak_memory(res));
        text_cell_right(out, cell->str, 14);
        g_string_truncate(cell, 0);
        for (int d = 0; d < res->p; d++)
            if (res->devices[d].oom)
                g_string_append_printf(cell, "%s%d", cell->len ? "," : "dev ", d);
        gboolean tight = FALSE; /* at risk: over the limit, within it without fragmentation */
        for (int d = 0; d < res->p; d++)
            if (res->devices[d].memory_verdict == PPSIM_MEM_TIGHT) {
                g_string_append_printf(cell, "%s%d",
                                       tight       ? ","
                                       : cell->len ? " tight "
                                                   : "tight ",
                                       d);
                tight = TRUE;
            }
        for (int h = 0; h < res->n_hosts; h++)
            if (res->hosts[h].oom)
                g_string_append_printf(cell, "%shost %d", cell->len ? " " : "", h);
        g_string_append_printf(out, "%s\n", cell->len ? cell->str : "-");
    }
}

static void
text_devices(GString *out, const GPtrArray *results, int lw, const char *mem_unit)
{
    const PpsimRunResult *first = g_ptr_array_index(results, 0);
    int p = first->p;
    gboolean all = p <= TEXT_MAX_DEVICE_COLUMNS;
    g_string_append_printf(out, "\npeak activation per device (%s)\n", mem_unit);
    gsize start = out->len;
    g_string_append(out, "schedule");
    text_pad(out, start, lw);
    if (all)
        for (int d = 0; d < p; d++)
            g_string_append_printf(out, "%8s%d ", "d", d);
    else
        g_string_append_printf(out, "%9s %9s %9s", "min", "max", "d0");
    g_string_append_c(out, '\n');
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        gsize row = out->len;
        g_string_append(out, res->label);
        text_pad(out, row, lw);
        g_autoptr(GString) cell = g_string_new(NULL);
        gint64 lo = G_MAXINT64, hi = 0;
        for (int d = 0; d < res->p; d++) {
            gint64 v = res->devices[d].peak_activation;
            lo = MIN(lo, v);
            hi = MAX(hi, v);
            if (all) {
                g_string_truncate(cell, 0);
                text_mem(cell, res, v);
                text_cell_right(out, cell->str, 9);
            }
        }
        if (!all) {
            gint64 vals[3] = {lo, hi, res->devices[0].peak_activation};
            for (int k = 0; k < 3; k++) {
                g_string_truncate(cell, 0);
                text_mem(cell, res, vals[k]);
                text_cell_right(out, cell->str, 9);
            }
        }
        g_string_append_c(out, '\n');
    }
}

/* One row of a per-schedule table: @label padded to @lw, then @n times in ms, 12 wide. */
static void
text_ms_row(GString *out, const char *label, int lw, const PpsimTime *v, guint n)
{
    gsize row = out->len;
    g_string_append(out, label);
    text_pad(out, row, lw);
    g_autoptr(GString) cell = g_string_new(NULL);
    for (guint k = 0; k < n; k++) {
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, (double)v[k] / PPSIM_PS_PER_MS, 3);
        text_cell_right(out, cell->str, 12);
    }
    g_string_append_c(out, '\n');
}

/* The bubble breakdown (run-result.h) summed over devices, in ms: recompute, imbalance and
 * warm-up/cool-down ([HP] B_R, B_I, B_P), then transfer and offload stalls. */
static void
text_bubbles(GString *out, const GPtrArray *results, int lw)
{
    g_string_append(out, "\nbubbles summed over devices (ms): [HP] B_R, B_I, B_P, then stalls\n");
    gsize start = out->len;
    g_string_append(out, "schedule");
    text_pad(out, start, lw);
    for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++)
        if (c->flags & PPSIM_COLUMN_TEXT_BUBBLES)
            g_string_append_printf(out, "%12s ", c->text);
    g_string_append_c(out, '\n');
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        PpsimTime sum[8] = {0};
        guint n = 0;
        for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++) {
            if (!(c->flags & PPSIM_COLUMN_TEXT_BUBBLES))
                continue;
            g_assert(n < G_N_ELEMENTS(sum));
            for (int d = 0; d < res->p; d++)
                sum[n] += ppsim_device_column_time(c, &res->devices[d]);
            n++;
        }
        text_ms_row(out, res->label, lw, sum, n);
    }
}

/* 3D scenarios: the layout, then per schedule the largest per-device TP, ZeRO-3 and DP
 * communication times and how much of the DP reduction ran past the device's compute. */
static void
text_parallel(GString *out, const PpsimScenario *sc, const GPtrArray *results, int lw)
{
    const PpsimRunResult *first = g_ptr_array_index(results, 0);
    if (!first->parallel || first->explicit_mode)
        return;
    const PpsimParallel *par = &sc->parallel;
    /* parallel.grad_sync: all_reduce (ZeRO 1-2 only; a no-op with ZeRO 0) */
    gboolean whole =
        (par->zero == 1 || par->zero == 2) && par->grad_sync == PPSIM_GRAD_SYNC_ALL_REDUCE;
    g_string_append_printf(out,
                           "\n3D parallelism: tp=%d pp=%d dp=%d, %d GPUs, sequence_parallel %s, "
                           "zero %d%s, placement %s",
                           par->tp, sc->training.pp, par->dp, first->gpus,
                           par->sequence_parallel ? "on" : "off", par->zero,
                           whole ? " (gradients all-reduced)" : "",
                           par->placement == PPSIM_PLACEMENT_TP_DP_PP ? "tp-dp-pp" : "tp-pp-dp");
    if (par->cp > 1)
        g_string_append_printf(out, ", cp %d", par->cp);
    if (par->ep > 1)
        g_string_append_printf(out, ", ep %d (%s dispatch%s)", par->ep,
                               par->ep_dispatch == PPSIM_EP_DISPATCH_DEEPEP ? "deepep" : "alltoall",
                               par->ep_fp8_dispatch ? ", FP8" : "");
    if (par->etp != par->tp)
        g_string_append_printf(out, ", etp %d", par->etp);
    g_string_append_c(out, '\n');
    gboolean pg = ppsim_scenario_overlaps_param_gather(sc);
    g_string_append_printf(out,
                           "communication per device, max over devices (ms): TP collectives are "
                           "inside F/B (not hidden); %s; DP reduction overlaps the cool-down, "
                           "'exposed' is what ran past the last compute op\n",
                           pg ? "the weights' all-gather (overlap_param_gather) runs before each "
                                "stage's first F, layer by layer"
                              : "ZeRO-3 gathers run before each F/B, one op ahead");
    gsize start = out->len;
    g_string_append(out, "schedule");
    text_pad(out, start, lw);
    gboolean first_head = TRUE;
    for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++)
        if (c->flags & PPSIM_COLUMN_TEXT_COMM) {
            g_string_append_printf(out, "%s%12s", first_head ? "" : " ", c->text);
            first_head = FALSE;
        }
    g_string_append_c(out, '\n');
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        PpsimTime mx[8] = {0};
        guint n = 0;
        for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++) {
            if (!(c->flags & PPSIM_COLUMN_TEXT_COMM))
                continue;
            g_assert(n < G_N_ELEMENTS(mx));
            for (int d = 0; d < res->p; d++)
                mx[n] = MAX(mx[n], ppsim_device_column_time(c, &res->devices[d]));
            n++;
        }
        text_ms_row(out, res->label, lw, mx, n);
    }
}

/* F&B pairs and MoE all-to-alls (only when some schedule has either): per schedule the
 * largest per-device all-to-all time, the time F&B pairs saved, and the all-to-alls' share
 * of it. */
static void
text_overlap(GString *out, const GPtrArray *results, int lw)
{
    gboolean any = FALSE;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        for (int d = 0; d < res->p; d++)
            any |= res->devices[d].ep_comm_ps > 0 || res->devices[d].fb_hidden_ps > 0;
    }
    if (!any)
        return;
    g_string_append(out, "\nF&B pairs and MoE all-to-alls per device, max over devices (ms): "
                         "ep_comm = the all-to-alls' flows, fb_hidden = what the pairs saved, "
                         "ep_hidden = the all-to-alls' share of it\n");
    gsize start = out->len;
    g_string_append(out, "schedule");
    text_pad(out, start, lw);
    g_string_append_printf(out, "%12s %12s %12s\n", "ep_comm", "fb_hidden", "ep_hidden");
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        PpsimTime mx[3] = {0, 0, 0};
        for (int d = 0; d < res->p; d++) {
            const PpsimDeviceResult *dev = &res->devices[d];
            mx[0] = MAX(mx[0], dev->ep_comm_ps);
            mx[1] = MAX(mx[1], dev->fb_hidden_ps);
            mx[2] = MAX(mx[2], dev->ep_comm_hidden_ps);
        }
        text_ms_row(out, res->label, lw, mx, G_N_ELEMENTS(mx));
    }
}

/* Choice @key of @res, or NULL. */
static const PpsimChoice *
text_choice(const PpsimRunResult *res, const char *key)
{
    for (guint i = 0; res->choices != NULL && i < res->choices->len; i++) {
        const PpsimChoice *c = &g_array_index(res->choices, PpsimChoice, i);
        if (strcmp(c->key, key) == 0)
            return c;
    }
    return NULL;
}

static gboolean
text_choice_same(const PpsimChoice *a, const PpsimChoice *b)
{
    return a != NULL && b != NULL && strcmp(a->value, b->value) == 0 &&
           strcmp(a->note, b->note) == 0;
}

/* @value, with a long list of one repeated item ("2,2,...,2") as "2 x 16". */
static void
text_choice_value(GString *out, const char *value)
{
    g_auto(GStrv) items = g_strsplit(value, ",", -1);
    guint n = g_strv_length(items), same = 1;
    while (same < n && strcmp(items[same], items[0]) == 0)
        same++;
    if (n > 3 && same == n)
        g_string_append_printf(out, "%s x %u", items[0], n);
    else
        g_string_append(out, value);
}

/* What the generators and the run chose that the scenario did not set, by key (in order of
 * first appearance), then by value, each value with the schedules that got it ("all" when
 * every schedule did). */
static void
text_choices(GString *out, const GPtrArray *results)
{
    g_autoptr(GPtrArray) keys = g_ptr_array_new(); /* const char *, borrowed */
    int kw = 0;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        for (guint k = 0; res->choices != NULL && k < res->choices->len; k++) {
            const char *key = g_array_index(res->choices, PpsimChoice, k).key;
            if (!g_ptr_array_find_with_equal_func(keys, key, g_str_equal, NULL)) {
                g_ptr_array_add(keys, (gpointer)key);
                kw = MAX(kw, (int)strlen(key));
            }
        }
    }
    if (keys->len == 0)
        return;
    g_string_append(out, "chosen for you (set these to override):\n");
    for (guint k = 0; k < keys->len; k++) {
        const char *key = g_ptr_array_index(keys, k);
        gboolean first = TRUE;
        for (guint i = 0; i < results->len; i++) {
            const PpsimChoice *c = text_choice(g_ptr_array_index(results, i), key);
            gboolean seen = c == NULL;
            for (guint j = 0; j < i && !seen; j++)
                seen = text_choice_same(c, text_choice(g_ptr_array_index(results, j), key));
            if (seen)
                continue;
            g_string_append_printf(out, "  %-*s ", kw, first ? key : "");
            text_choice_value(out, c->value);
            g_string_append_printf(out, " (%s):", c->note);
            first = FALSE;
            guint n = 0;
            for (guint j = 0; j < results->len; j++)
                n += text_choice_same(c, text_choice(g_ptr_array_index(results, j), key));
            for (guint j = 0; j < results->len && !(n == results->len && n > 1); j++) {
                const PpsimRunResult *res = g_ptr_array_index(results, j);
                if (text_choice_same(c, text_choice(res, key)))
                    g_string_append_printf(out, " %s", res->label);
            }
            g_string_append(out, n == results->len && n > 1 ? " all\n" : "\n");
        }
    }
}

static void
text_number(GString *out, const char *what, double v, int decimals, const char *unit)
{
    g_string_append_printf(out, ", %s ", what);
    if (isfinite(v))
        ppsim_fmt_fixed(out, v, decimals);
    else
        g_string_append(out, "-");
    g_string_append(out, unit);
}

/* One line per schedule made by a solver-backed generator: the path that produced it, the
 * solver's status, objective, bound and gap (its wall time, which varies from run to run, is
 * in JSON and in `--timings`, so that the text stays byte-identical between runs). */
static void
text_solvers(GString *out, const GPtrArray *results)
{
    gboolean any = FALSE;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        if (!res->solver.present)
            continue;
        if (!any)
            g_string_append(out, "\nsolver\n");
        any = TRUE;
        g_string_append_printf(out, "%s: path %s, status %s", res->label, res->solver.path,
                               res->solver.status);
        text_number(out, "objective", res->solver.objective_ms, 3, " ms");
        text_number(out, "bound", res->solver.bound_ms, 3, " ms");
        text_number(out, "gap", res->solver.gap, 4, "");
        if (strcmp(res->solver.path, "milp") != 0 && res->solver.milp_status[0]) {
            g_string_append_printf(out, "; the solver's own: status %s", res->solver.milp_status);
            text_number(out, "objective", res->solver.milp_objective_ms, 3, " ms");
        }
        if (res->solver.note[0])
            g_string_append_printf(out, " (%s)", res->solver.note);
        g_string_append_c(out, '\n');
    }
}

/* One row of the breakdown: @label, device @d's peak by kind, the peak and what is left. */
static void
text_breakdown_row(GString *out, const PpsimRunResult *res, int d, const char *label, int lw)
{
    const PpsimDeviceResult *dev = &res->devices[d];
    gint64 v[] = {dev->mem_weights,     dev->mem_gradients, dev->mem_optimizer,
                  dev->mem_activations, dev->mem_logits,    dev->mem_buffers,
                  dev->mem_overheads,   dev->peak_memory,   dev->mem_free};
    gsize row = out->len;
    g_string_append(out, label);
    text_pad(out, row, lw);
    g_string_append_printf(out, "%4d ", d);
    g_autoptr(GString) cell = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(v); i++) {
        g_string_truncate(cell, 0);
        text_mem(cell, res, v[i]);
        text_cell_right(out, cell->str, 8);
    }
    g_string_truncate(out, out->len - 1);
    g_string_append_c(out, '\n');
}

/* Hardware mode: what the memory at the peak is made of (src/README.md "How memory is modelled"):
 * every device of a single schedule, else each schedule's fullest device. */
static void
text_breakdown(GString *out, const GPtrArray *results, int lw)
{
    const PpsimRunResult *first = g_ptr_array_index(results, 0);
    if (first->explicit_mode || first->p == 0 || !first->devices[0].has_breakdown)
        return;
    gboolean one = results->len == 1;
    g_string_append_printf(out, "\nmemory at the peak (GiB)%s\n",
                           one ? "" : ", each schedule's fullest device");
    gsize start = out->len;
    g_string_append(out, "schedule");
    text_pad(out, start, lw);
    g_string_append_printf(out, "%4s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "dev", "weights",
                           "grads", "optim", "activ", "logits", "buffers", "overhead", "peak",
                           "free");
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        int top = 0;
        for (int d = 0; d < res->p; d++) {
            if (one)
                text_breakdown_row(out, res, d, d == 0 ? res->label : "", lw);
            else if (res->devices[d].peak_memory > res->devices[top].peak_memory)
                top = d;
        }
        if (!one)
            text_breakdown_row(out, res, top, res->label, lw);
    }
}

void
ppsim_report_text(GString *out, const PpsimScenario *scenario, const GPtrArray *results)
{
    if (results->len == 0)
        return;
    const PpsimRunResult *first = g_ptr_array_index(results, 0);
    const char *mem_unit = first->mem_scale == 1.0 ? "GiB" : "units";
    static const char *const recipes[] = {"delayed scaling", "current scaling", "block scaling"};
    const char *fp8 = "";
    if (!first->explicit_mode && scenario->training.dtype == PPSIM_DTYPE_FP8)
        fp8 = recipes[CLAMP(scenario->training.fp8_recipe, 0, (int)G_N_ELEMENTS(recipes) - 1)];
    g_string_append_printf(
        out, "scenario %s: p=%d m=%d, %s%s%s%s\n", scenario->name, first->p, first->m,
        first->explicit_mode ? "explicit costs (ms, memory units)" : "hardware model",
        *fp8 ? ", FP8 (" : "", fp8, *fp8 ? ")" : "");
    if (!first->explicit_mode) {
        g_string_append(out, "offload ratio k = ");
        ppsim_fmt_fixed(out, first->offload_ratio_k, 2);
        g_string_append(out, " ([PO] Formula 1, 20 sbh per layer); ");
        ppsim_fmt_fixed(out, first->offload_ratio_k_scenario, 2);
        g_string_append(out, " for the bytes this scenario stores");
        g_string_append(out, first->offload_ratio_k_scenario <= 1.0
                                 ? " (<= 1: full activation offload can hide behind compute)\n"
                                 : " (> 1: offloading every activation would slow compute)\n");
    }
    int lw = text_label_width(results);
    text_choices(out, results);
    text_summary(out, results, lw, mem_unit);
    text_devices(out, results, lw, mem_unit);
    text_breakdown(out, results, lw);
    text_bubbles(out, results, lw);
    text_parallel(out, scenario, results, lw);
    text_overlap(out, results, lw);
    text_solvers(out, results);
}
