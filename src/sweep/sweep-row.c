/* sweep-row.c: a sweep's rows: the CSV header, one row formatted as CSV or JSON (and kept
 * for summaries), and reading such rows back (resume, merge); see sweep.h. */
#include "sweep/sweep-run-internal.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <stdio.h>
#include <string.h>

void
ppsim_sweep_row_free(PpsimSweepRow *row)
{
    if (row == NULL)
        return;
    g_strfreev(row->labels);
    g_free(row->schedule);
    g_free(row->status);
    g_free(row->memory_unit);
    g_free(row);
}

/* ---- formatting ---------------------------------------------------------------------------- */

gboolean
ppsim_sweep_axis_is_column(const PpsimSweepAxis *a)
{
    return strcmp(a->path, "schedule") != 0; /* the schedule column shows it */
}

/* One field of a row: rows are read back one line each (merge, --resume), so a line break
 * inside a field (an error message's) becomes a space. */
static void
csv_field(GString *out, const char *s)
{
    ppsim_fmt_csv_field(out, s, TRUE);
}

char *
ppsim_sweep_csv_header(const PpsimSweep *s)
{
    GString *h = g_string_new("point");
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (ppsim_sweep_axis_is_column(a)) {
            g_string_append_c(h, ',');
            csv_field(h, a->path);
        }
    }
    for (guint i = 0; s->rung_paths != NULL && i < s->rung_paths->len; i++) {
        g_string_append_c(h, ',');
        csv_field(h, g_ptr_array_index(s->rung_paths, i));
    }
    g_string_append(h, ",schedule,status");
    for (guint i = 0; i < s->metrics->len; i++)
        g_string_append_printf(h, ",%s", (const char *)g_ptr_array_index(s->metrics, i));
    g_string_append(h, ",error\n");
    return g_string_free(h, FALSE);
}

/* memory_<kind>: the part of the fullest device's peak (its breakdown), or memory_free: the
 * least headroom of any device; 0 without a breakdown (explicit mode). */
static gint64
metric_memory_part(const char *name, const PpsimRunResult *res)
{
    if (res->p == 0 || !res->devices[0].has_breakdown)
        return 0;
    int top = 0;
    gint64 free = G_MAXINT64;
    for (int d = 0; d < res->p; d++) {
        if (res->devices[d].peak_memory > res->devices[top].peak_memory)
            top = d;
        free = MIN(free, res->devices[d].mem_free);
    }
    const PpsimDeviceResult *dev = &res->devices[top];
    static const char *const kinds[] = {"weights", "gradients", "optimizer", "activations",
                                        "logits",  "buffers",   "overheads", NULL};
    const gint64 parts[] = {dev->mem_weights,     dev->mem_gradients, dev->mem_optimizer,
                            dev->mem_activations, dev->mem_logits,    dev->mem_buffers,
                            dev->mem_overheads};
    for (int i = 0; kinds[i] != NULL; i++)
        if (strcmp(name + strlen("memory_"), kinds[i]) == 0)
            return parts[i];
    return free; /* memory_free */
}

/* One metric of @res as text (CSV and JSON share it; JSON quotes memory_unit itself). */
/* A column of `run --samples` (makespan_mean_ms, makespan_p50_ms, ...): empty without it.
 * makespan_ms, the deterministic makespan, is not one. */
static gboolean
is_sample_column(const char *name)
{
    return g_str_has_prefix(name, "makespan_") && strcmp(name, "makespan_ms") != 0;
}

static void
metric_text(GString *out, const char *name, const PpsimRunResult *res)
{
    if (strcmp(name, "makespan_ms") == 0)
        ppsim_fmt_ms(out, res->makespan_ps);
    else if (strcmp(name, "bubble_ratio") == 0)
        ppsim_fmt_double(out, res->bubble_ratio);
    else if (strcmp(name, "bubble_ratio_span") == 0)
        ppsim_fmt_double(out, res->bubble_ratio_span);
    else if (strcmp(name, "peak_activation") == 0)
        ppsim_fmt_mem(out, ppsim_run_result_max_peak_activation(res), res->mem_scale);
    else if (strcmp(name, "peak_memory") == 0)
        ppsim_fmt_mem(out, ppsim_run_result_max_peak_memory(res), res->mem_scale);
    else if (strcmp(name, "memory_unit") == 0)
        g_string_append(out, res->memory_unit);
    else if (strcmp(name, "oom") == 0)
        g_string_append(out, ppsim_run_result_fits(res) ? "false" : "true");
    else if (strcmp(name, "mfu") == 0)
        ppsim_fmt_double(out, res->mfu);
    else if (strcmp(name, "memory_verdict") == 0)
        g_string_append(out, ppsim_mem_verdict_name(ppsim_run_result_verdict(res)));
    else if (is_sample_column(name) && res->samples == NULL)
        return; /* a sample column without --samples: empty (JSON: null) */
    else if (strcmp(name, "makespan_mean_ms") == 0)
        ppsim_fmt_fixed(out, res->samples->mean_ps / PPSIM_PS_PER_MS, 6);
    else if (strcmp(name, "makespan_p50_ms") == 0)
        ppsim_fmt_ms(out, res->samples->p50_ps);
    else if (strcmp(name, "makespan_p90_ms") == 0)
        ppsim_fmt_ms(out, res->samples->p90_ps);
    else if (strcmp(name, "makespan_p99_ms") == 0)
        ppsim_fmt_ms(out, res->samples->p99_ps);
    else if (strcmp(name, "tokens_per_s") == 0) {
        if (res->tokens > 0) /* empty: explicit costs without a sequence length */
            ppsim_fmt_double(out, res->tokens_per_s);
    } else if (strcmp(name, "tflops_per_gpu") == 0) {
        if (!res->explicit_mode) /* empty: no FLOPs without a model */
            ppsim_fmt_double(out, res->tflops_per_gpu);
    } else if (g_str_has_prefix(name, "memory_"))
        ppsim_fmt_mem(out, metric_memory_part(name, res), res->mem_scale);
    else
        g_assert_not_reached();
}

/* Formats one row into @out and keeps it in @rows. @res is NULL for a row without metrics;
 * @rung: the ladder rung's values (NULL: empty cells; ignored without a ladder); @bound
 * (bytes, > 0 for a pruned row): shown as its peak_memory. */
void
ppsim_sweep_row_emit_rung(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point,
                          const guint *index, char **rung, const char *schedule, const char *status,
                          const PpsimRunResult *res, gint64 bound, const char *error, GString *out,
                          GPtrArray *rows)
{
    PpsimSweepRow *row = g_new0(PpsimSweepRow, 1);
    row->point = point;
    guint n_rung = s->rung_paths != NULL ? s->rung_paths->len : 0;
    row->labels = g_new0(char *, s->axes->len + n_rung + 1); /* the axis columns' values */
    guint c = 0;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (ppsim_sweep_axis_is_column(a))
            row->labels[c++] = g_strdup(g_ptr_array_index(a->labels, index[i]));
    }
    for (guint i = 0; i < n_rung; i++)
        row->labels[c++] = g_strdup(rung != NULL ? rung[i] : "");
    row->schedule = g_strdup(schedule);
    row->status = g_strdup(status);
    if (res != NULL) {
        row->has_metrics = TRUE;
        row->makespan_ms = (double)res->makespan_ps / PPSIM_PS_PER_MS;
        row->bubble_ratio = res->bubble_ratio;
        row->peak_activation = (double)ppsim_run_result_max_peak_activation(res) / res->mem_scale;
        row->peak_memory = (double)ppsim_run_result_max_peak_memory(res) / res->mem_scale;
        row->oom = !ppsim_run_result_fits(res);
        row->memory_unit = g_strdup(res->memory_unit);
        row->tokens_per_s = res->tokens_per_s;
        row->tokens = res->tokens;
        row->mfu = res->mfu;
    } else if (bound > 0) {
        row->peak_memory = (double)bound;
    }
    g_ptr_array_add(rows, row);

    g_autoptr(GString) cell = g_string_new(NULL);
    if (fmt == PPSIM_SWEEP_CSV) {
        g_string_append_printf(out, "%" G_GUINT64_FORMAT, point);
        for (char **l = row->labels; *l; l++) {
            g_string_append_c(out, ',');
            csv_field(out, *l);
        }
        g_string_append_c(out, ',');
        csv_field(out, schedule);
        g_string_append_printf(out, ",%s", status);
        for (guint i = 0; i < s->metrics->len; i++) {
            g_string_append_c(out, ',');
            if (res != NULL)
                metric_text(out, g_ptr_array_index(s->metrics, i), res);
            else if (bound > 0 && strcmp(g_ptr_array_index(s->metrics, i), "peak_memory") == 0)
                g_string_append_printf(out, "%" G_GINT64_FORMAT, bound);
        }
        g_string_append_c(out, ',');
        csv_field(out, error ? error : "");
        g_string_append_c(out, '\n');
        return;
    }
    g_string_append_printf(out, "{\"point\":%" G_GUINT64_FORMAT, point);
    c = 0;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (!ppsim_sweep_axis_is_column(a))
            continue;
        g_string_append_c(out, ',');
        ppsim_fmt_json_string(out, a->path);
        g_string_append_c(out, ':');
        ppsim_fmt_json_string(out, row->labels[c++]);
    }
    for (guint i = 0; i < n_rung; i++) {
        g_string_append_c(out, ',');
        ppsim_fmt_json_string(out, g_ptr_array_index(s->rung_paths, i));
        g_string_append_c(out, ':');
        ppsim_fmt_json_string(out, row->labels[c++]);
    }
    g_string_append(out, ",\"schedule\":");
    ppsim_fmt_json_string(out, schedule);
    g_string_append_printf(out, ",\"status\":\"%s\"", status);
    for (guint i = 0; i < s->metrics->len; i++) {
        const char *name = g_ptr_array_index(s->metrics, i);
        g_string_append_printf(out, ",\"%s\":", name);
        if (res == NULL && bound > 0 && strcmp(name, "peak_memory") == 0) {
            g_string_append_printf(out, "%" G_GINT64_FORMAT, bound);
        } else if (res == NULL || (res->explicit_mode && strcmp(name, "tflops_per_gpu") == 0) ||
                   (res->tokens <= 0 && strcmp(name, "tokens_per_s") == 0)) {
            g_string_append(out, "null");
        } else if (strcmp(name, "memory_unit") == 0) {
            ppsim_fmt_json_string(out, res->memory_unit);
        } else if (strcmp(name, "memory_verdict") == 0) {
            ppsim_fmt_json_string(out, ppsim_mem_verdict_name(ppsim_run_result_verdict(res)));
        } else if (is_sample_column(name) && res->samples == NULL) {
            g_string_append(out, "null");
        } else {
            metric_text(out, name, res);
        }
    }
    g_string_append(out, ",\"error\":");
    if (error != NULL)
        ppsim_fmt_json_string(out, error);
    else
        g_string_append(out, "null");
    g_string_append(out, "}\n");
}

void
ppsim_sweep_row_emit(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, const guint *index,
                     const char *schedule, const char *status, const PpsimRunResult *res,
                     const char *error, GString *out, GPtrArray *rows)
{
    ppsim_sweep_row_emit_rung(s, fmt, point, index, NULL, schedule, status, res, 0, error, out,
                              rows);
}

/* ---- reading rows back ----------------------------------------------------------------------- */

/* Splits one CSV line (no newline) into fields, undoing the quoting of csv_field. */
static GPtrArray *
csv_split(const char *line, gsize len)
{
    GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
    gsize i = 0;
    for (;;) {
        GString *cell = g_string_new(NULL);
        if (i < len && line[i] == '"') {
            for (i++; i < len; i++) {
                if (line[i] == '"' && i + 1 < len && line[i + 1] == '"')
                    g_string_append_c(cell, line[i++]);
                else if (line[i] == '"')
                    break;
                else
                    g_string_append_c(cell, line[i]);
            }
            i++; /* the closing quote */
        } else {
            while (i < len && line[i] != ',')
                g_string_append_c(cell, line[i++]);
        }
        g_ptr_array_add(f, g_string_free(cell, FALSE));
        if (i >= len || line[i] != ',')
            return f;
        i++;
    }
}

static double
field_number(const char *t)
{
    return *t ? g_ascii_strtod(t, NULL) : 0;
}

gsize
ppsim_sweep_shard_line(const char *text, gsize len, int *k, int *n)
{
    static const char tag[] = "# ppsim sweep shard ";
    if (len < sizeof tag - 1 || strncmp(text, tag, sizeof tag - 1) != 0)
        return 0;
    const char *nl = memchr(text, '\n', len);
    if (nl == NULL)
        return 0;
    int kk = 0, nn = 0;
    g_autofree char *line = g_strndup(text, nl - text);
    if (sscanf(line + sizeof tag - 1, "%d/%d", &kk, &nn) != 2 || kk < 1 || kk > nn)
        return 0;
    if (k != NULL)
        *k = kk;
    if (n != NULL)
        *n = nn;
    return (gsize)(nl - text) + 1;
}

gboolean
ppsim_sweep_parse_csv(const char *text, gsize len, const char *display, const char *header,
                      GPtrArray *rows, GArray *offsets, GError **error)
{
    g_autoptr(GPtrArray) names = NULL;
    int line_no = 0, i_sched = -1, i_status = -1, n_cols = 0;
    /* makespan, bubble, peak_act, peak_mem, tokens/s, mfu, oom */
    int i_metric[7] = {-1, -1, -1, -1, -1, -1, -1};
    int i_unit = -1;
    static const char *const wanted[] = {"makespan_ms", "bubble_ratio", "peak_activation",
                                         "peak_memory", "tokens_per_s", "mfu",
                                         "oom"};
    gsize start = ppsim_sweep_shard_line(text, len, NULL, NULL);
    for (gsize at = start; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        gsize end = nl ? (gsize)(nl - text) : len;
        line_no++;
        g_autoptr(GPtrArray) f = csv_split(text + at, end - at);
        if (names == NULL) {
            if (header != NULL &&
                (strlen(header) != end - at + 1 || strncmp(header, text + at, end - at) != 0)) {
                g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                            "%s:1: the header is not this sweep's (other axes or columns)",
                            display);
                return FALSE;
            }
            names = g_steal_pointer(&f);
            n_cols = (int)names->len;
            for (int c = 0; c < n_cols; c++) {
                const char *n = g_ptr_array_index(names, c);
                if (strcmp(n, "schedule") == 0)
                    i_sched = c;
                else if (strcmp(n, "status") == 0)
                    i_status = c;
                else if (strcmp(n, "memory_unit") == 0)
                    i_unit = c;
                for (int k = 0; k < 7; k++)
                    if (strcmp(n, wanted[k]) == 0)
                        i_metric[k] = c;
            }
            if (n_cols < 4 || strcmp(g_ptr_array_index(names, 0), "point") != 0 || i_sched < 1 ||
                i_status != i_sched + 1) {
                g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                            "%s:1: not a sweep CSV (it starts with point, the axes, schedule, "
                            "status)",
                            display);
                return FALSE;
            }
            at = end + 1;
            continue;
        }
        if ((int)f->len != n_cols) {
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "%s:%d: %u fields, the header has %d", display, line_no, f->len, n_cols);
            return FALSE;
        }
        PpsimSweepRow *row = g_new0(PpsimSweepRow, 1);
        char *endp = NULL;
        const char *pt = g_ptr_array_index(f, 0);
        row->point = g_ascii_strtoull(pt, &endp, 10);
        if (endp == pt || *endp != '\0') {
            ppsim_sweep_row_free(row);
            g_autofree char *q = ppsim_quote(pt);
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "%s:%d: bad point '%s'",
                        display, line_no, q);
            return FALSE;
        }
        row->labels = g_new0(char *, i_sched);
        for (int c = 1; c < i_sched; c++)
            row->labels[c - 1] = g_strdup(g_ptr_array_index(f, c));
        row->schedule = g_strdup(g_ptr_array_index(f, i_sched));
        row->status = g_strdup(g_ptr_array_index(f, i_status));
        row->has_metrics = strcmp(row->status, "ok") == 0;
        double *dst[6] = {&row->makespan_ms, &row->bubble_ratio, &row->peak_activation,
                          &row->peak_memory, &row->tokens_per_s, &row->mfu};
        for (int k = 0; k < 6; k++)
            if (i_metric[k] >= 0)
                *dst[k] = field_number(g_ptr_array_index(f, i_metric[k]));
        /* the work of the iteration, back from its rate (the CSV keeps no token count) */
        row->tokens = row->tokens_per_s * row->makespan_ms / 1e3;
        row->oom = i_metric[6] >= 0 && strcmp(g_ptr_array_index(f, i_metric[6]), "true") == 0;
        row->memory_unit = g_strdup(i_unit >= 0 ? g_ptr_array_index(f, i_unit) : "");
        g_ptr_array_add(rows, row);
        if (offsets != NULL)
            g_array_append_val(offsets, at);
        at = end + 1;
    }
    if (names == NULL && header != NULL) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "%s: empty (no header)", display);
        return FALSE;
    }
    return TRUE;
}
