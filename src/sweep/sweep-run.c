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
#include "util/quote.h"

#include <stdio.h>
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
    else if (g_str_has_prefix(name, "makespan_") && res->samples == NULL)
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
static void
row_emit_rung(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, const guint *index,
              char **rung, const char *schedule, const char *status, const PpsimRunResult *res,
              gint64 bound, const char *error, GString *out, GPtrArray *rows)
{
    PpsimSweepRow *row = g_new0(PpsimSweepRow, 1);
    row->point = point;
    guint n_rung = s->rung_paths != NULL ? s->rung_paths->len : 0;
    row->labels = g_new0(char *, s->axes->len + n_rung + 1); /* the axis columns' values */
    guint c = 0;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (axis_is_column(a))
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
        if (!axis_is_column(a))
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
        } else if (g_str_has_prefix(name, "makespan_") && res->samples == NULL) {
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

static void
row_emit(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, const guint *index,
         const char *schedule, const char *status, const PpsimRunResult *res, const char *error,
         GString *out, GPtrArray *rows)
{
    row_emit_rung(s, fmt, point, index, NULL, schedule, status, res, 0, error, out, rows);
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

/* The smallest static memory (weights, gradients, optimizer states) any device of @sc
 * holds: the average over the pipeline's devices, a lower bound on the largest peak, in
 * bytes; 0 where it is no bound (explicit costs, a schedule that may move the optimizer
 * states to the host). */
static gint64
static_bound(const PpsimScenario *sc, const PpsimScheduleSpec *spec)
{
    if (sc->costs.present || strcmp(spec->name, "tpipe") == 0 || strcmp(spec->name, "custom") == 0)
        return 0;
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, sc->training.pp, NULL);
    if (costs == NULL)
        return 0;
    double total = 0;
    for (int i = 0; i < costs->n_stages; i++)
        total += (double)costs->stage[i].static_mem;
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
static void
point_run_ladder(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, const guint *index,
                 GPtrArray *ov, GString *out, GPtrArray *rows)
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
                row_emit_rung(s, fmt, point, index, rung, "", "invalid", NULL, 0, local->message,
                              out, rows);
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
                row_emit_rung(s, fmt, point, index, rung, labels[i], status_of(local), NULL, 0,
                              local->message, out, rows);
                g_clear_error(&local);
                done[i] = TRUE;
                continue;
            }
            if (ppsim_run_result_fits(res)) {
                row_emit_rung(s, fmt, point, index, rung, labels[i], "ok", res, 0, NULL, out, rows);
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
            row_emit_rung(s, fmt, point, index, g_ptr_array_index(s->rungs, last_rung[i]),
                          labels[i], "ok", last[i], 0, NULL, out, rows);
            ppsim_run_result_free(last[i]);
        } else {
            g_autoptr(GString) msg = g_string_new("static memory alone is at least ");
            ppsim_fmt_fixed(msg, (double)least[i] / (1024.0 * 1024.0 * 1024.0), 2);
            g_string_append(msg, " GiB per GPU on every memory plan, over the limit");
            row_emit_rung(s, fmt, point, index, NULL, labels[i], "pruned", NULL, least[i], msg->str,
                          out, rows);
        }
    }
    g_free(done);
    g_free(last);
    g_free(last_rung);
    g_free(least);
    g_strfreev(labels);
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
    if (s->rungs != NULL) {
        point_run_ladder(s, fmt, point, index, ov, out, rows);
        return;
    }
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
        /* hardware mode: the sampler reads the deterministic replay's transfers */
        PpsimSimFlags flags = s->samples > 0 && !sc->costs.present ? PPSIM_SIM_RECORD : 0;
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, spec, flags, &local);
        PpsimSampleOptions so = {.samples = s->samples, .seed = s->seed, .threads = 1};
        if (res != NULL && s->samples > 0 && !ppsim_sim_sample(sc, res, &so, &local)) {
            g_prefix_error(&local, "schedule '%s': ", label);
            g_clear_pointer(&res, ppsim_run_result_free);
        }
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
