/* sweep-run.c: running a sweep's points on a thread pool and writing their rows in point
 * order; see sweep.h. One point's rows: sweep-point.c (a ladder's: sweep-ladder.c); their
 * format and reading them back: sweep-row.c.
 *
 * Workers compute batches of consecutive points (scenario, every schedule, formatted rows)
 * into a window of slots; the caller's thread writes slot after slot in point order, so the
 * output is the same bytes whatever the thread count, and a run killed mid-way has written a
 * prefix of it. A batch hands off many cheap points at once (one lock and one wake-up each,
 * instead of one per point), and stays small enough that the last batches still share the
 * threads.
 */
#include "sweep/sweep-run-internal.h"

/* Batches computed ahead of the one being written, per thread. */
#define SWEEP_WINDOW_PER_THREAD 8
/* Points per batch: at most this many, and at least this many batches per thread. */
#define SWEEP_BATCH_MAX 32
#define SWEEP_BATCHES_PER_THREAD 16

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
        ppsim_sweep_point_run(R->sweep, R->opts->format, R->first + i * R->step, text, rows);
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
