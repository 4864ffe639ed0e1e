/* sweep-run.c: running a sweep's points on a thread pool and writing their rows in point
 * order; reading such rows back (resume, merge); see sweep.h.
 *
 * Workers compute batches of consecutive points (scenario, every schedule, formatted rows)
 * into a window of slots; the caller's thread writes slot after slot in point order, so the
 * output is the same bytes whatever the thread count, and a run killed mid-way has written a
 * prefix of it. A batch hands off many cheap points at once (one lock and one wake-up each,
 * instead of one per point), and stays small enough that the last batches still share the
 * threads.
 */
#include "sweep/sweep.h"
#include "sim/sim.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"

#include <string.h>

/* Batches computed ahead of the one being written, per thread. */
#define SWEEP_WINDOW_PER_THREAD 8
/* Points per batch: at most this many, and at least this many batches per thread. */
#define SWEEP_BATCH_MAX 32
#define SWEEP_BATCHES_PER_THREAD 16

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

static gboolean
axis_is_column(const PpsimSweepAxis *a)
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
        if (axis_is_column(a)) {
            g_string_append_c(h, ',');
            csv_field(h, a->path);
        }
    }
    g_string_append(h, ",schedule,status");
    for (guint i = 0; i < s->metrics->len; i++)
        g_string_append_printf(h, ",%s", (const char *)g_ptr_array_index(s->metrics, i));
    g_string_append(h, ",error\n");
    return g_string_free(h, FALSE);
}

/* One metric of @res as text (CSV and JSON share it; JSON quotes memory_unit itself). */
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
        g_string_append(out, ppsim_run_result_any_oom(res) ? "true" : "false");
    else if (strcmp(name, "mfu") == 0)
        ppsim_fmt_double(out, res->mfu);
    else
        g_assert_not_reached();
}

/* Formats one row into @out and keeps it in @rows. @res is NULL for a row without metrics. */
static void
row_emit(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, const guint *index,
         const char *schedule, const char *status, const PpsimRunResult *res, const char *error,
         GString *out, GPtrArray *rows)
{
    PpsimSweepRow *row = g_new0(PpsimSweepRow, 1);
    row->point = point;
    row->labels = g_new0(char *, s->axes->len + 1); /* the axis columns' values */
    for (guint i = 0, c = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (axis_is_column(a))
            row->labels[c++] = g_strdup(g_ptr_array_index(a->labels, index[i]));
    }
    row->schedule = g_strdup(schedule);
    row->status = g_strdup(status);
    if (res != NULL) {
        row->has_metrics = TRUE;
        row->makespan_ms = (double)res->makespan_ps / PPSIM_PS_PER_MS;
        row->bubble_ratio = res->bubble_ratio;
        row->peak_activation = (double)ppsim_run_result_max_peak_activation(res) / res->mem_scale;
        row->peak_memory = (double)ppsim_run_result_max_peak_memory(res) / res->mem_scale;
        row->oom = ppsim_run_result_any_oom(res);
        row->memory_unit = g_strdup(res->memory_unit);
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
        }
        g_string_append_c(out, ',');
        csv_field(out, error ? error : "");
        g_string_append_c(out, '\n');
        return;
    }
    g_string_append_printf(out, "{\"point\":%" G_GUINT64_FORMAT, point);
    for (guint i = 0, c = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (!axis_is_column(a))
            continue;
        g_string_append_c(out, ',');
        ppsim_fmt_json_string(out, a->path);
        g_string_append_c(out, ':');
        ppsim_fmt_json_string(out, row->labels[c++]);
    }
    g_string_append(out, ",\"schedule\":");
    ppsim_fmt_json_string(out, schedule);
    g_string_append_printf(out, ",\"status\":\"%s\"", status);
    for (guint i = 0; i < s->metrics->len; i++) {
        const char *name = g_ptr_array_index(s->metrics, i);
        g_string_append_printf(out, ",\"%s\":", name);
        if (res == NULL) {
            g_string_append(out, "null");
        } else if (strcmp(name, "memory_unit") == 0) {
            ppsim_fmt_json_string(out, res->memory_unit);
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

static const char *
status_of(const GError *e)
{
    if (g_error_matches(e, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED))
        return "refused";
    if (e->domain == PPSIM_SCENARIO_ERROR ||
        g_error_matches(e, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNKNOWN))
        return "invalid";
    return "failed";
}

/* Computes every row of @point into @out and @rows. */
static void
point_run(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, GString *out, GPtrArray *rows)
{
    g_autofree guint *index = g_new0(guint, MAX(s->axes->len, 1));
    ppsim_sweep_point_values(s, point, index);
    PointLookup L = {s, index};
    const char *sched_axis = NULL;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (!axis_is_column(a))
            sched_axis = g_ptr_array_index(a->labels, index[i]);
    }
    for (guint c = 0; c < s->constraints->len; c++) {
        gboolean holds = FALSE;
        GError *local = NULL;
        if (!ppsim_sweep_expr_eval(g_ptr_array_index(s->constraints, c), point_lookup, &L, &holds,
                                   &local)) {
            row_emit(s, fmt, point, index, sched_axis ? sched_axis : "", "invalid", NULL,
                     local->message, out, rows);
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
    GError *local = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(s->base, strlen(s->base), s->scenario_path, s->basedir,
                             (const char *const *)ov->pdata, &local);
    if (sc == NULL) {
        row_emit(s, fmt, point, index, sched_axis ? sched_axis : "", "invalid", NULL,
                 local->message, out, rows);
        g_error_free(local);
        return;
    }
    for (guint i = 0; i < sc->schedules->len; i++) {
        const PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
        const char *label = spec->label ? spec->label : spec->name;
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, spec, 0, &local);
        if (res == NULL) {
            row_emit(s, fmt, point, index, label, status_of(local), NULL, local->message, out,
                     rows);
            g_clear_error(&local);
        } else {
            row_emit(s, fmt, point, index, label, "ok", res, NULL, out, rows);
        }
    }
}

/* ---- the pool ------------------------------------------------------------------------------- */

typedef struct {
    gboolean done;
    GString *text;
    GPtrArray *rows;
} Slot;

typedef struct {
    const PpsimSweep *sweep;
    const PpsimSweepRunOptions *opts;
    guint64 first, step; /* the k-th point to do is first + k * step */
    guint64 todo, batch; /* points to do; batch k is points k * batch .. (k + 1) * batch - 1 */
    guint window;
    Slot *slots;
    GMutex lock;
    GCond cond;
} Runner;

static void
runner_work(gpointer task, gpointer user_data)
{
    Runner *R = user_data;
    guint64 k = GPOINTER_TO_SIZE(task) - 1;
    g_autoptr(GString) text = g_string_new(NULL);
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    guint64 end = MIN((k + 1) * R->batch, R->todo);
    for (guint64 i = k * R->batch; i < end; i++)
        point_run(R->sweep, R->opts->format, R->first + i * R->step, text, rows);
    g_mutex_lock(&R->lock);
    Slot *slot = &R->slots[k % R->window];
    slot->text = g_steal_pointer(&text);
    slot->rows = rows;
    slot->done = TRUE;
    g_cond_broadcast(&R->cond);
    g_mutex_unlock(&R->lock);
}

gboolean
ppsim_sweep_run(const PpsimSweep *s, const PpsimSweepRunOptions *opts, GPtrArray *rows,
                GError **error)
{
    g_return_val_if_fail(opts->shard_n >= 1 && opts->shard_k >= 1 &&
                             opts->shard_k <= opts->shard_n && opts->threads >= 1,
                         FALSE);
    Runner R = {.sweep = s, .opts = opts, .step = (guint64)opts->shard_n};
    R.first = (guint64)opts->shard_k - 1;
    if (opts->resume_after != G_MAXUINT64 && R.first <= opts->resume_after)
        R.first += ((opts->resume_after - R.first) / R.step + 1) * R.step;
    guint64 todo = R.first < s->n_points ? (s->n_points - R.first + R.step - 1) / R.step : 0;
    R.todo = todo;
    R.batch = CLAMP(todo / ((guint64)opts->threads * SWEEP_BATCHES_PER_THREAD), 1, SWEEP_BATCH_MAX);
    guint64 batches = (todo + R.batch - 1) / R.batch;
    R.window = (guint)opts->threads * SWEEP_WINDOW_PER_THREAD;
    R.slots = g_new0(Slot, R.window);
    g_mutex_init(&R.lock);
    g_cond_init(&R.cond);
    GThreadPool *pool = NULL;
    if (opts->threads > 1)
        pool = g_thread_pool_new(runner_work, &R, opts->threads, TRUE, NULL);
    guint64 pushed = 0;
    gboolean ok = TRUE;
    for (guint64 next = 0; next < batches && ok; next++) {
        if (pool == NULL) {
            runner_work(GSIZE_TO_POINTER(next + 1), &R);
        } else {
            for (; pushed < batches && pushed < next + R.window; pushed++)
                g_thread_pool_push(pool, GSIZE_TO_POINTER(pushed + 1), NULL);
        }
        g_mutex_lock(&R.lock);
        Slot *slot = &R.slots[next % R.window];
        while (!slot->done)
            g_cond_wait(&R.cond, &R.lock);
        Slot mine = *slot;
        *slot = (Slot){0};
        g_mutex_unlock(&R.lock);
        ok = mine.text->len == 0 ||
             opts->write(mine.text->str, mine.text->len, opts->write_data, error);
        g_string_free(mine.text, TRUE);
        while (rows != NULL && mine.rows->len > 0)
            g_ptr_array_add(rows, g_ptr_array_steal_index(mine.rows, 0));
        g_ptr_array_unref(mine.rows);
        if (opts->progress != NULL)
            opts->progress(MIN((next + 1) * R.batch, todo), todo, opts->progress_data);
    }
    if (pool != NULL)
        g_thread_pool_free(pool, TRUE, TRUE); /* on a write error: drop what is queued */
    for (guint i = 0; i < R.window; i++)
        if (R.slots[i].done) {
            g_string_free(R.slots[i].text, TRUE);
            g_ptr_array_unref(R.slots[i].rows);
        }
    g_free(R.slots);
    g_mutex_clear(&R.lock);
    g_cond_clear(&R.cond);
    return ok;
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

gboolean
ppsim_sweep_parse_csv(const char *text, gsize len, const char *display, const char *header,
                      GPtrArray *rows, GArray *offsets, GError **error)
{
    g_autoptr(GPtrArray) names = NULL;
    int line_no = 0, i_sched = -1, i_status = -1, n_cols = 0;
    int i_metric[5] = {-1, -1, -1, -1, -1}; /* makespan, bubble, peak_act, peak_mem, oom */
    int i_unit = -1;
    static const char *const wanted[] = {"makespan_ms", "bubble_ratio", "peak_activation",
                                         "peak_memory", "oom"};
    for (gsize at = 0; at < len;) {
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
                for (int k = 0; k < 5; k++)
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
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "%s:%d: bad point '%s'",
                        display, line_no, pt);
            return FALSE;
        }
        row->labels = g_new0(char *, i_sched);
        for (int c = 1; c < i_sched; c++)
            row->labels[c - 1] = g_strdup(g_ptr_array_index(f, c));
        row->schedule = g_strdup(g_ptr_array_index(f, i_sched));
        row->status = g_strdup(g_ptr_array_index(f, i_status));
        row->has_metrics = strcmp(row->status, "ok") == 0;
        double *dst[4] = {&row->makespan_ms, &row->bubble_ratio, &row->peak_activation,
                          &row->peak_memory};
        for (int k = 0; k < 4; k++)
            if (i_metric[k] >= 0)
                *dst[k] = field_number(g_ptr_array_index(f, i_metric[k]));
        row->oom = i_metric[4] >= 0 && strcmp(g_ptr_array_index(f, i_metric[4]), "true") == 0;
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
