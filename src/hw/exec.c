/* exec.c: runs a task graph on in-order streams; see exec.h.
 *
 * One engine entity owns every stream: a task's end is one event, a delayed dependency one
 * more, so replay costs about two heap operations per op. Successor edges and memory effects
 * are packed per task (CSR) when the run starts, so the hot loop touches contiguous arrays.
 */
#include "hw/exec.h"
#include "hw/network.h"
#include "engine/engine.h"
#include "util/ppsim-error.h"
#include "util/fmt.h"
#include "util/bigalloc.h"

#include <string.h>

enum { EV_TASK_END = 1, EV_DEP_ARRIVE = 2 };

typedef enum { DEP_LATENCY, DEP_FLOW } DepKind;

typedef struct {
    PpsimTime duration_ps;
    PpsimTime start_ps, end_ps;
    guint64 bytes;   /* transfer tasks */
    gint32 src, dst; /* transfer tasks: endpoints; -1 otherwise */
    gint32 stream;
    gint32 pending; /* inputs not yet arrived */
    guint32 succ_begin, succ_end;
    guint32 mem_begin, mem_end;
} Task;

typedef struct {
    PpsimTaskId from, to;
    guint8 kind; /* DepKind */
    gint32 src, dst;
    PpsimTime latency_ps;
    guint64 bytes;
} Dep;

typedef struct {
    PpsimTaskId task;
    guint8 when; /* PpsimMemWhen */
    guint8 category;
    gint32 pool;
    gint32 tag;
    gint64 delta;
} MemEffect;

typedef struct {
    char *name;
    GArray *order; /* PpsimTaskId */
    guint next;
    gboolean busy;
} Stream;

struct PpsimExec {
    const PpsimTopology *topo;
    GArray *tasks;      /* Task */
    GArray *deps;       /* Dep; sorted by `from` at run start */
    GArray *mem;        /* MemEffect; sorted by task at run start */
    GPtrArray *streams; /* Stream* */
    GArray *pools;      /* PpsimPoolStats */
    int n_tags;
    gint64 *tag_current, *tag_peak;
    gboolean recording;
    GArray *samples;     /* PpsimMemSample */
    GArray *flows;       /* PpsimFlowRecord */
    PpsimTime *arrival;  /* [deps]: when each input reached its task */
    guint32 *succ_order; /* dependency indices grouped by producer (CSR, see exec_index) */
    guint32 *mem_order;  /* memory-effect indices grouped by task */
    PpsimEngine *engine;
    PpsimNetwork *net;
    guint32 entity;
    guint64 events;
    gboolean ran;
    PpsimExecDescribeFunc describe;
    gpointer describe_data;
};

static void
stream_free(gpointer p)
{
    Stream *s = p;
    g_free(s->name);
    g_array_free(s->order, TRUE);
    g_free(s);
}

PpsimExec *
ppsim_exec_new(const PpsimTopology *topo, int n_tags, gsize expected_tasks)
{
    PpsimExec *exec = g_new0(PpsimExec, 1);
    exec->topo = topo;
    /* sized up front: a pipeline has about two dependencies and two memory effects per op */
    exec->tasks = ppsim_bigalloc_array(sizeof(Task), expected_tasks);
    exec->deps = ppsim_bigalloc_array(sizeof(Dep), 2 * expected_tasks);
    exec->mem = ppsim_bigalloc_array(sizeof(MemEffect), 2 * expected_tasks);
    exec->streams = g_ptr_array_new_with_free_func(stream_free);
    exec->pools = g_array_new(FALSE, TRUE, sizeof(PpsimPoolStats));
    exec->n_tags = n_tags;
    exec->tag_current = g_new0(gint64, MAX(n_tags, 1));
    exec->tag_peak = g_new0(gint64, MAX(n_tags, 1));
    exec->samples = g_array_new(FALSE, FALSE, sizeof(PpsimMemSample));
    exec->flows = g_array_new(FALSE, FALSE, sizeof(PpsimFlowRecord));
    return exec;
}

void
ppsim_exec_free(PpsimExec *exec)
{
    if (exec == NULL)
        return;
    ppsim_network_free(exec->net);
    ppsim_engine_free(exec->engine);
    g_array_free(exec->tasks, TRUE);
    g_array_free(exec->deps, TRUE);
    g_array_free(exec->mem, TRUE);
    g_ptr_array_free(exec->streams, TRUE);
    g_array_free(exec->pools, TRUE);
    g_free(exec->tag_current);
    g_free(exec->tag_peak);
    g_array_free(exec->samples, TRUE);
    g_array_free(exec->flows, TRUE);
    g_free(exec->arrival);
    g_free(exec->succ_order);
    g_free(exec->mem_order);
    g_free(exec);
}

int
ppsim_exec_add_pool(PpsimExec *exec, gint64 limit)
{
    PpsimPoolStats st = {
        .limit = limit, .peak_total_task = G_MAXUINT32, .peak_active_task = G_MAXUINT32};
    g_array_append_val(exec->pools, st);
    return exec->pools->len - 1;
}

void
ppsim_exec_set_pool_base(PpsimExec *exec, int pool, PpsimMemCategory category, gint64 bytes)
{
    PpsimPoolStats *st = &g_array_index(exec->pools, PpsimPoolStats, pool);
    st->current[category] = bytes;
    gint64 total = 0;
    for (int c = 0; c < PPSIM_MEM_N_CATEGORIES; c++)
        total += st->current[c];
    st->peak_total = MAX(st->peak_total, total);
}

int
ppsim_exec_add_stream(PpsimExec *exec, const char *name)
{
    Stream *s = g_new0(Stream, 1);
    s->name = g_strdup(name);
    s->order = g_array_new(FALSE, FALSE, sizeof(PpsimTaskId));
    g_ptr_array_add(exec->streams, s);
    return exec->streams->len - 1;
}

static PpsimTaskId
exec_append_task(PpsimExec *exec, int stream, const Task *proto)
{
    g_assert(stream >= 0 && (guint)stream < exec->streams->len);
    g_assert(!exec->ran);
    Task t = *proto;
    t.stream = stream;
    t.start_ps = t.end_ps = -1;
    g_array_append_val(exec->tasks, t);
    PpsimTaskId id = exec->tasks->len - 1;
    Stream *s = g_ptr_array_index(exec->streams, stream);
    g_array_append_val(s->order, id);
    return id;
}

PpsimTaskId
ppsim_exec_add_task(PpsimExec *exec, int stream, PpsimTime duration_ps)
{
    g_assert(duration_ps >= 0);
    Task t = {.duration_ps = duration_ps, .src = -1, .dst = -1};
    return exec_append_task(exec, stream, &t);
}

PpsimTaskId
ppsim_exec_add_transfer(PpsimExec *exec, int stream, int src, int dst, guint64 bytes)
{
    g_assert(exec->topo != NULL);
    Task t = {.bytes = bytes, .src = src, .dst = dst};
    return exec_append_task(exec, stream, &t);
}

void
ppsim_exec_add_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, PpsimTime latency_ps)
{
    g_assert(from < exec->tasks->len && to < exec->tasks->len && latency_ps >= 0);
    Dep d = {.from = from,
             .to = to,
             .kind = DEP_LATENCY,
             .latency_ps = latency_ps,
             .src = -1,
             .dst = -1};
    g_array_append_val(exec->deps, d);
}

void
ppsim_exec_add_flow_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, int src, int dst,
                        guint64 bytes)
{
    g_assert(exec->topo != NULL);
    g_assert(from < exec->tasks->len && to < exec->tasks->len);
    Dep d = {.from = from, .to = to, .kind = DEP_FLOW, .src = src, .dst = dst, .bytes = bytes};
    g_array_append_val(exec->deps, d);
}

void
ppsim_exec_add_mem(PpsimExec *exec, PpsimTaskId task, PpsimMemWhen when, int pool, int tag,
                   PpsimMemCategory category, gint64 delta)
{
    g_assert(task < exec->tasks->len && pool >= 0 && (guint)pool < exec->pools->len);
    g_assert(tag < exec->n_tags);
    MemEffect e = {
        .task = task, .when = when, .category = category, .pool = pool, .tag = tag, .delta = delta};
    g_array_append_val(exec->mem, e);
}

void
ppsim_exec_set_recording(PpsimExec *exec, gboolean on)
{
    exec->recording = on;
}

/* ---- run ------------------------------------------------------------------------------ */

/* Builds a CSR index: @order lists the record indices of @arr grouped by task (stable), and
 * each task's [begin, end) range into @order is written at @begin_offset / @end_offset.
 * Records stay where they are; only 4-byte indices move, so the pass is cache-friendly.
 * O(records + tasks). */
static guint32 *
exec_index(PpsimExec *exec, const GArray *arr, gsize size, gsize key_offset, gsize begin_offset,
           gsize end_offset)
{
    guint n_tasks = exec->tasks->len;
    guint32 *count = ppsim_bigalloc0((n_tasks + 1) * sizeof(guint32));
    const char *data = arr->data;
    for (guint i = 0; i < arr->len; i++)
        count[*(const PpsimTaskId *)(data + i * size + key_offset) + 1]++;
    for (guint t = 0; t < n_tasks; t++) {
        count[t + 1] += count[t];
        char *task = (char *)&g_array_index(exec->tasks, Task, t);
        *(guint32 *)(task + begin_offset) = count[t];
        *(guint32 *)(task + end_offset) = count[t + 1];
    }
    guint32 *order = ppsim_bigalloc(MAX(arr->len, 1) * sizeof(guint32));
    for (guint i = 0; i < arr->len; i++)
        order[count[*(const PpsimTaskId *)(data + i * size + key_offset)]++] = i;
    g_free(count);
    return order;
}

static void
exec_apply_mem(PpsimExec *exec, PpsimTaskId id, PpsimMemWhen when)
{
    const Task *t = &g_array_index(exec->tasks, Task, id);
    PpsimTime now = ppsim_engine_now(exec->engine);
    for (guint k = t->mem_begin; k < t->mem_end; k++) {
        const MemEffect *e = &g_array_index(exec->mem, MemEffect, exec->mem_order[k]);
        if (e->when != when)
            continue;
        PpsimPoolStats *st = &g_array_index(exec->pools, PpsimPoolStats, e->pool);
        st->current[e->category] += e->delta;
        gint64 active = st->current[PPSIM_MEM_ACTIVATION] + st->current[PPSIM_MEM_BUFFER];
        gint64 total = active + st->current[PPSIM_MEM_STATIC];
        if (total > st->peak_total) {
            st->peak_total = total;
            st->peak_total_time_ps = now;
            st->peak_total_task = id;
        }
        if (active > st->peak_active) {
            st->peak_active = active;
            st->peak_active_time_ps = now;
            st->peak_active_task = id;
        }
        if (e->tag >= 0 && e->category != PPSIM_MEM_STATIC) {
            exec->tag_current[e->tag] += e->delta;
            exec->tag_peak[e->tag] = MAX(exec->tag_peak[e->tag], exec->tag_current[e->tag]);
        }
        if (exec->recording) {
            PpsimMemSample s = {.time_ps = now,
                                .pool = e->pool,
                                .category = e->category,
                                .value = st->current[e->category]};
            g_array_append_val(exec->samples, s);
        }
    }
}

static void exec_try_start(PpsimExec *exec, int stream);

static void
exec_dep_arrived(PpsimExec *exec, guint32 dep)
{
    const Dep *d = &g_array_index(exec->deps, Dep, dep);
    exec->arrival[dep] = ppsim_engine_now(exec->engine);
    Task *t = &g_array_index(exec->tasks, Task, d->to);
    g_assert(t->pending > 0);
    if (--t->pending == 0)
        exec_try_start(exec, t->stream);
}

static void
exec_try_start(PpsimExec *exec, int stream)
{
    Stream *s = g_ptr_array_index(exec->streams, stream);
    if (s->busy || s->next >= s->order->len)
        return;
    PpsimTaskId id = g_array_index(s->order, PpsimTaskId, s->next);
    Task *t = &g_array_index(exec->tasks, Task, id);
    if (t->pending > 0)
        return;
    s->busy = TRUE;
    t->start_ps = ppsim_engine_now(exec->engine);
    exec_apply_mem(exec, id, PPSIM_MEM_AT_START);
    if (t->src >= 0)
        ppsim_network_start(exec->net, exec->engine, t->src, t->dst, t->bytes, -(gint64)id - 1);
    else
        ppsim_engine_post(exec->engine, t->duration_ps, exec->entity, EV_TASK_END, id, 0);
}

static void
exec_task_end(PpsimExec *exec, PpsimTaskId id)
{
    Task *t = &g_array_index(exec->tasks, Task, id);
    t->end_ps = ppsim_engine_now(exec->engine);
    exec_apply_mem(exec, id, PPSIM_MEM_AT_END);
    for (guint k = t->succ_begin; k < t->succ_end; k++) {
        guint32 i = exec->succ_order[k];
        const Dep *d = &g_array_index(exec->deps, Dep, i);
        if (d->kind == DEP_FLOW)
            ppsim_network_start(exec->net, exec->engine, d->src, d->dst, d->bytes, i);
        else if (d->latency_ps == 0)
            exec_dep_arrived(exec, i);
        else
            ppsim_engine_post(exec->engine, d->latency_ps, exec->entity, EV_DEP_ARRIVE, i, 0);
    }
    Stream *s = g_ptr_array_index(exec->streams, t->stream);
    s->busy = FALSE;
    s->next++;
    exec_try_start(exec, t->stream);
}

static void
exec_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    (void)engine;
    PpsimExec *exec = state;
    exec->events++;
    if (ev->kind == EV_TASK_END)
        exec_task_end(exec, (PpsimTaskId)ev->a);
    else
        exec_dep_arrived(exec, (guint32)ev->a);
}

/* A flow finished: cookie >= 0 is a dependency edge, < 0 a transfer task (-id - 1). */
static void
exec_flow_done(gpointer user_data, gint64 cookie, PpsimTime latency_ps, PpsimEngine *engine)
{
    PpsimExec *exec = user_data;
    PpsimTaskId target;
    guint32 kind;
    gint64 payload;
    if (cookie < 0) {
        target = (PpsimTaskId)(-cookie - 1);
        kind = EV_TASK_END;
        payload = target;
    } else {
        const Dep *d = &g_array_index(exec->deps, Dep, cookie);
        target = d->to;
        kind = EV_DEP_ARRIVE;
        payload = cookie;
    }
    if (exec->recording && exec->flows->len > 0) {
        PpsimFlowRecord *rec = &g_array_index(exec->flows, PpsimFlowRecord, exec->flows->len - 1);
        rec->from = cookie < 0 ? target : g_array_index(exec->deps, Dep, cookie).from;
        rec->to = target;
    }
    ppsim_engine_post(engine, latency_ps, exec->entity, kind, payload, 0);
}

static gboolean exec_quiesce(gpointer state, GString *why, PpsimEngine *engine);

static const PpsimEntityClass exec_class = {
    .name = "exec",
    .handle = exec_handle,
    .quiesce = exec_quiesce,
};

gboolean
ppsim_exec_run(PpsimExec *exec, PpsimExecDescribeFunc describe, gpointer user_data, GError **error)
{
    g_return_val_if_fail(!exec->ran, FALSE);
    exec->ran = TRUE;
    exec->succ_order =
        exec_index(exec, exec->deps, sizeof(Dep), G_STRUCT_OFFSET(Dep, from),
                   G_STRUCT_OFFSET(Task, succ_begin), G_STRUCT_OFFSET(Task, succ_end));
    exec->mem_order =
        exec_index(exec, exec->mem, sizeof(MemEffect), G_STRUCT_OFFSET(MemEffect, task),
                   G_STRUCT_OFFSET(Task, mem_begin), G_STRUCT_OFFSET(Task, mem_end));
    for (guint i = 0; i < exec->deps->len; i++)
        g_array_index(exec->tasks, Task, g_array_index(exec->deps, Dep, i).to).pending++;
    exec->arrival = ppsim_bigalloc(MAX(exec->deps->len, 1) * sizeof(PpsimTime));
    for (guint i = 0; i < exec->deps->len; i++)
        exec->arrival[i] = -1;

    exec->engine = ppsim_engine_new();
    exec->entity = ppsim_engine_add_entity(exec->engine, &exec_class, exec);
    if (exec->topo != NULL) {
        exec->net = ppsim_network_new(exec->topo, exec->engine, exec_flow_done, exec);
        if (exec->recording)
            ppsim_network_set_records(exec->net, exec->flows);
    }
    exec->describe = describe;
    exec->describe_data = user_data;
    for (guint s = 0; s < exec->streams->len; s++)
        exec_try_start(exec, s);
    return ppsim_engine_run(exec->engine, 0, error);
}

static void
exec_describe(PpsimExec *exec, GString *out, PpsimTaskId id)
{
    g_string_append_c(out, '\'');
    if (exec->describe != NULL)
        exec->describe(out, id, exec->describe_data);
    else
        g_string_append_printf(out, "task %u", id);
    g_string_append_c(out, '\'');
}

/* At quiescence, explain the first stream (in id order) that still has work: its head task
 * and one input it still waits for. */
static gboolean
exec_quiesce(gpointer state, GString *why, PpsimEngine *engine)
{
    PpsimExec *exec = state;
    for (guint si = 0; si < exec->streams->len; si++) {
        Stream *s = g_ptr_array_index(exec->streams, si);
        if (s->next >= s->order->len)
            continue;
        PpsimTaskId id = g_array_index(s->order, PpsimTaskId, s->next);
        exec_describe(exec, why, id);
        g_string_append_printf(why, " on '%s' is blocked", s->name);
        for (guint i = 0; i < exec->deps->len; i++) {
            const Dep *d = &g_array_index(exec->deps, Dep, i);
            const Task *from = &g_array_index(exec->tasks, Task, d->from);
            if (d->to != id || from->end_ps >= 0)
                continue;
            const Stream *fs = g_ptr_array_index(exec->streams, from->stream);
            g_string_append(why, " waiting for ");
            exec_describe(exec, why, d->from);
            g_string_append_printf(why, " on '%s' (%s)", fs->name,
                                   from->start_ps >= 0 ? "running" : "not started");
            break;
        }
        g_string_append(why, " at t=");
        ppsim_fmt_ms(why, ppsim_engine_now(engine));
        g_string_append(why, " ms");
        return TRUE;
    }
    return FALSE;
}

gsize
ppsim_exec_n_tasks(const PpsimExec *exec)
{
    return exec->tasks->len;
}

PpsimTime
ppsim_exec_task_start(const PpsimExec *exec, PpsimTaskId task)
{
    return g_array_index(exec->tasks, Task, task).start_ps;
}

PpsimTime
ppsim_exec_task_end(const PpsimExec *exec, PpsimTaskId task)
{
    return g_array_index(exec->tasks, Task, task).end_ps;
}

const PpsimPoolStats *
ppsim_exec_pool_stats(const PpsimExec *exec, int pool)
{
    return &g_array_index(exec->pools, PpsimPoolStats, pool);
}

gint64
ppsim_exec_tag_peak(const PpsimExec *exec, int tag)
{
    g_return_val_if_fail(tag >= 0 && tag < exec->n_tags, 0);
    return exec->tag_peak[tag];
}

guint64
ppsim_exec_events_processed(const PpsimExec *exec)
{
    return exec->engine ? ppsim_engine_events_processed(exec->engine) : 0;
}

const GArray *
ppsim_exec_mem_samples(const PpsimExec *exec)
{
    return exec->samples;
}

const GArray *
ppsim_exec_flows(const PpsimExec *exec)
{
    return exec->flows;
}

PpsimTime
ppsim_exec_dep_arrival(const PpsimExec *exec, guint32 dep)
{
    g_return_val_if_fail(exec->arrival != NULL && dep < exec->deps->len, -1);
    return exec->arrival[dep];
}
