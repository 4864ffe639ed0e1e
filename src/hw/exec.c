/* exec.c: runs a task graph on in-order streams; see exec.h.
 *
 * One engine entity owns every stream: a task's end is one event, a delayed dependency one
 * more, so replay costs about two heap operations per op. The hot loop reads a task's
 * 32-byte record, its successor edges (packed by producer when the run starts: 8 bytes,
 * consumer and latency class side by side) and its memory effects (grouped by task), each
 * contiguous, with 32-bit indices throughout. Latencies are interned (a graph has a handful
 * of distinct ones). What only transfers and flows need (endpoints, bytes, when they
 * finished) lives in side tables that explicit-cost runs never touch.
 *
 * A task's end is its start plus its duration (a transfer's end is stored), and a latency
 * dependency arrives at its producer's end plus the latency, so neither is stored.
 */
#include "hw/exec-internal.h"
#include "util/ppsim-error.h"
#include "util/fmt.h"
#include "util/bigalloc.h"

#include <string.h>

enum { EV_TASK_END = 1, EV_DEP_ARRIVE = 2 };

static inline PpsimTime
exec_end(const PpsimExec *exec, PpsimTaskId id)
{
    const Task *t = &exec_tasks(exec)[id];
    if (t->duration_ps < 0)
        return g_array_index(exec->transfers, Transfer, -t->duration_ps - 1).end_ps;
    return t->start_ps >= 0 ? t->start_ps + t->duration_ps : -1;
}

static void
exec_apply_mem(PpsimExec *exec, PpsimTaskId id, const Task *t, PpsimMemWhen when, PpsimTime now)
{
    const MemEffect *mem = exec_mem(exec);
    PpsimPoolStats *pools = (PpsimPoolStats *)(gpointer)exec->pools->data;
    for (guint32 k = t->mem_begin, end = t[1].mem_begin; k < end; k++) {
        const MemEffect *e = &mem[k];
        if (e->when != when)
            continue;
        PpsimPoolStats *st = &pools[e->pool];
        ppsim_pool_stats_change(st, e->category, e->delta, now, id);
        if (e->tag >= 0 && e->category != PPSIM_MEM_STATIC && e->category != PPSIM_MEM_WORKSPACE) {
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

static void
exec_try_start(PpsimExec *exec, int stream, PpsimTime now)
{
    Stream *s = g_ptr_array_index(exec->streams, stream);
    if (s->busy || s->next >= s->len)
        return;
    PpsimTaskId id = exec->order[s->begin + s->next];
    Task *task = &exec_tasks(exec)[id];
    if (task->pending > 0)
        return;
    s->busy = TRUE;
    task->start_ps = now;
    if (task->mem_begin != task[1].mem_begin)
        exec_apply_mem(exec, id, task, PPSIM_MEM_AT_START, now);
    PpsimTime d = task->duration_ps;
    if (d < 0) {
        const Transfer *t = &g_array_index(exec->transfers, Transfer, -d - 1);
        ppsim_network_start(exec->net, exec->engine, t->src, t->dst, t->bytes, -(gint64)id - 1);
    } else {
        ppsim_engine_post(exec->engine, d, exec->entity, EV_TASK_END, id, 0);
    }
}

/* An input of task @to arrived (@flow: the flow dependency's index + 1, or 0). */
static void
exec_dep_arrived(PpsimExec *exec, PpsimTaskId to, gint64 flow, PpsimTime now)
{
    if (flow > 0) {
        FlowDep *f = &g_array_index(exec->flow_deps, FlowDep, flow - 1);
        f->arrival_ps = now;
        if (f->waiter != PPSIM_EXEC_NO_TASK) { /* a blocking send: its sender's next task */
            Task *w = &exec_tasks(exec)[f->waiter];
            g_assert(w->pending > 0);
            if (--w->pending == 0)
                exec_try_start(exec, w->stream, now);
        }
    }
    Task *t = &exec_tasks(exec)[to];
    g_assert(t->pending > 0);
    if (--t->pending == 0)
        exec_try_start(exec, t->stream, now);
}

static void
exec_task_end(PpsimExec *exec, PpsimTaskId id, PpsimTime now)
{
    const Task *t = &exec_tasks(exec)[id];
    if (t->duration_ps < 0)
        g_array_index(exec->transfers, Transfer, -t->duration_ps - 1).end_ps = now;
    if (t->mem_begin != t[1].mem_begin)
        exec_apply_mem(exec, id, t, PPSIM_MEM_AT_END, now);
    int stream = t->stream;
    for (guint32 k = t->succ_begin, end = t[1].succ_begin; k < end; k++) {
        const Edge *e = &exec->edges[k];
        if (e->code < 0) {
            FlowDep *f = &g_array_index(exec->flow_deps, FlowDep, -e->code - 1);
            if (--f->starts > 0) /* a rendezvous: its other producer has not ended yet */
                continue;
            ppsim_network_start(exec->net, exec->engine, f->src, f->dst, f->bytes, -e->code - 1);
            continue;
        }
        PpsimTime latency = g_array_index(exec->latencies, PpsimTime, e->code);
        if (latency == 0)
            exec_dep_arrived(exec, e->to, 0, now);
        else
            ppsim_engine_post(exec->engine, latency, exec->entity, EV_DEP_ARRIVE, e->to, 0);
    }
    Stream *s = g_ptr_array_index(exec->streams, stream);
    s->busy = FALSE;
    s->next++;
    exec_try_start(exec, stream, now);
}

static void
exec_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    (void)engine;
    PpsimExec *exec = state;
    if (ev->kind == EV_TASK_END)
        exec_task_end(exec, (PpsimTaskId)ev->a, ev->time_ps);
    else
        exec_dep_arrived(exec, (PpsimTaskId)ev->a, ev->b, ev->time_ps);
}

/* A flow finished: cookie >= 0 is a flow dependency's index, < 0 a transfer task (-id - 1). */
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
        target = exec->dep_to[g_array_index(exec->flow_deps, FlowDep, cookie).dep];
        kind = EV_DEP_ARRIVE;
        payload = cookie + 1;
    }
    if (exec->recording && exec->flows->len > 0) {
        PpsimFlowRecord *rec = &g_array_index(exec->flows, PpsimFlowRecord, exec->flows->len - 1);
        rec->from = cookie < 0
                        ? target
                        : exec_dep_from(exec)[g_array_index(exec->flow_deps, FlowDep, cookie).dep];
        rec->to = target;
    }
    if (kind == EV_TASK_END)
        ppsim_engine_post(engine, latency_ps, exec->entity, kind, payload, 0);
    else
        ppsim_engine_post(engine, latency_ps, exec->entity, kind, target, payload);
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
    exec_graph_seal(exec);
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
        exec_try_start(exec, s, 0);
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
        if (s->next >= s->len)
            continue;
        PpsimTaskId id = exec->order[s->begin + s->next];
        exec_describe(exec, why, id);
        g_string_append_printf(why, " on '%s' is blocked", s->name);
        for (guint i = 0; i < exec->deps.len; i++) {
            PpsimTaskId from = exec_dep_from(exec)[i];
            if (exec->dep_to[i] != id || exec_end(exec, from) >= 0)
                continue;
            const Stream *fs = g_ptr_array_index(exec->streams, exec_tasks(exec)[from].stream);
            g_string_append(why, " waiting for ");
            exec_describe(exec, why, from);
            g_string_append_printf(why, " on '%s' (%s)", fs->name,
                                   exec_tasks(exec)[from].start_ps >= 0 ? "running"
                                                                        : "not started");
            break;
        }
        for (guint i = 0; i < exec->flow_deps->len; i++) { /* a blocking send of its own */
            const FlowDep *f = &g_array_index(exec->flow_deps, FlowDep, i);
            if (f->waiter != id || f->arrival_ps >= 0)
                continue;
            g_string_append(why, " waiting for the send of ");
            exec_describe(exec, why, exec_dep_from(exec)[f->dep]);
            g_string_append(why, " to reach ");
            exec_describe(exec, why, exec->dep_to[f->dep]);
            break;
        }
        g_string_append(why, " at t=");
        ppsim_fmt_ms(why, ppsim_engine_now(engine));
        g_string_append(why, " ms");
        return TRUE;
    }
    return FALSE;
}

guint32
ppsim_exec_n_deps(const PpsimExec *exec)
{
    return exec->deps.len;
}

PpsimTaskId
ppsim_exec_dep_from(const PpsimExec *exec, guint32 dep)
{
    g_return_val_if_fail(dep < exec->deps.len, G_MAXUINT32);
    return exec_dep_from(exec)[dep];
}

PpsimTaskId
ppsim_exec_dep_to(const PpsimExec *exec, guint32 dep)
{
    g_return_val_if_fail(dep < exec->deps.len, G_MAXUINT32);
    return exec->dep_to[dep];
}

const PpsimTaskId *
ppsim_exec_dep_consumers(const PpsimExec *exec)
{
    return exec->dep_to;
}

void
ppsim_exec_task_times(const PpsimExec *exec, PpsimTaskId first, guint32 n, PpsimTime *out)
{
    g_return_if_fail(first <= exec->tasks.len && n <= exec->tasks.len - first);
    for (guint32 i = 0; i < n; i++) {
        out[2 * i] = exec_tasks(exec)[first + i].start_ps;
        out[2 * i + 1] = exec_end(exec, first + i);
    }
}

PpsimTime
ppsim_exec_task_start(const PpsimExec *exec, PpsimTaskId task)
{
    g_return_val_if_fail(task < exec->tasks.len, -1);
    return exec_tasks(exec)[task].start_ps;
}

PpsimTime
ppsim_exec_task_end(const PpsimExec *exec, PpsimTaskId task)
{
    g_return_val_if_fail(task < exec->tasks.len, -1);
    return exec_end(exec, task);
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
    g_return_val_if_fail(exec->ran && dep < exec->deps.len, -1);
    gint32 code = exec->dep_code[dep];
    if (code < 0)
        return g_array_index(exec->flow_deps, FlowDep, -code - 1).arrival_ps;
    PpsimTime end = exec_end(exec, exec_dep_from(exec)[dep]);
    return end >= 0 ? end + g_array_index(exec->latencies, PpsimTime, code) : -1;
}
