/* exec-graph.c: building the executor's task graph (streams, tasks, dependencies, memory
 * effects, pools) and sealing it into the packed layout the run loop reads; see exec.h for
 * the API and exec.c for the run.
 */
#include "hw/exec-internal.h"
#include "util/bigalloc.h"

#include <string.h>

/* Grows @v (and the parallel arrays @extra[i], of element sizes @extra_size[i]) to hold one
 * more element; returns the new element's index. */
static G_GNUC_NO_INLINE void
vec_grow(Vec *v, gsize size, gpointer *extra[], const gsize extra_size[], int n_extra)
{
    g_assert(v->cap < G_MAXUINT32 / 2);
    v->cap = v->cap ? 2 * v->cap : 64;
    v->data = g_realloc_n(v->data, v->cap, size);
    for (int i = 0; i < n_extra; i++)
        *extra[i] = g_realloc_n(*extra[i], v->cap, extra_size[i]);
}

static inline guint32
vec_push(Vec *v, gsize size, gpointer *extra[], const gsize extra_size[], int n_extra)
{
    if (G_UNLIKELY(v->len == v->cap))
        vec_grow(v, size, extra, extra_size, n_extra);
    return v->len++;
}

static void
vec_reserve(Vec *v, gsize size, gsize n, gpointer *extra[], const gsize extra_size[], int n_extra)
{
    if (n == 0)
        return;
    g_assert(n < G_MAXUINT32 / 2);
    v->cap = (guint32)n;
    v->data = ppsim_bigalloc(n * size);
    for (int i = 0; i < n_extra; i++)
        *extra[i] = ppsim_bigalloc(n * extra_size[i]);
}

#define DEP_EXTRA(exec)                                                                            \
    gpointer *extra[] = {(gpointer *)&(exec)->dep_to, (gpointer *)&(exec)->dep_code};              \
    const gsize extra_size[] = {sizeof(guint32), sizeof(gint32)}
#define MEM_EXTRA(exec)                                                                            \
    gpointer *extra[] = {(gpointer *)&(exec)->mem_task};                                           \
    const gsize extra_size[] = {sizeof(guint32)}

static void
stream_free(gpointer p)
{
    Stream *s = p;
    g_free(s->name);
    g_free(s);
}

PpsimExec *
ppsim_exec_new(const PpsimTopology *topo, int n_tags, gsize expected_tasks)
{
    PpsimExec *exec = g_new0(PpsimExec, 1);
    exec->topo = topo;
    /* sized up front: a pipeline has at most about two dependencies and two memory effects
     * per op; untouched capacity costs address space, not memory */
    vec_reserve(&exec->tasks, sizeof(Task), expected_tasks + 1, NULL, NULL, 0);
    {
        DEP_EXTRA(exec);
        vec_reserve(&exec->deps, sizeof(guint32), 2 * expected_tasks, extra, extra_size, 2);
    }
    vec_reserve(&exec->mem, sizeof(MemEffect), 2 * expected_tasks, NULL, NULL, 0);
    exec->transfers = g_array_new(FALSE, FALSE, sizeof(Transfer));
    exec->flow_deps = g_array_new(FALSE, FALSE, sizeof(FlowDep));
    exec->gates = g_array_new(FALSE, FALSE, 2 * sizeof(guint32));
    exec->latencies = g_array_new(FALSE, FALSE, sizeof(PpsimTime));
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
    g_free(exec->tasks.data);
    g_array_free(exec->transfers, TRUE);
    g_free(exec->deps.data);
    g_free(exec->dep_to);
    g_free(exec->dep_code);
    g_array_free(exec->latencies, TRUE);
    if (exec->latency_lookup)
        g_hash_table_destroy(exec->latency_lookup);
    g_array_free(exec->flow_deps, TRUE);
    g_array_free(exec->gates, TRUE);
    g_free(exec->mem.data);
    g_free(exec->mem_task);
    g_ptr_array_free(exec->streams, TRUE);
    g_array_free(exec->pools, TRUE);
    g_free(exec->tag_current);
    g_free(exec->tag_peak);
    g_array_free(exec->samples, TRUE);
    g_array_free(exec->flows, TRUE);
    g_free(exec->edges);
    g_free(exec->order);
    g_free(exec);
}

int
ppsim_exec_add_pool(PpsimExec *exec, gint64 limit)
{
    g_assert(exec->pools->len < (1u << 29) - 1);
    PpsimPoolStats st = ppsim_pool_stats_init(limit);
    g_array_append_val(exec->pools, st);
    return exec->pools->len - 1;
}

void
ppsim_exec_set_pool_base(PpsimExec *exec, int pool, PpsimMemCategory category, gint64 bytes)
{
    ppsim_pool_stats_set_base(&g_array_index(exec->pools, PpsimPoolStats, pool), category, bytes);
}

int
ppsim_exec_add_stream(PpsimExec *exec, const char *name)
{
    Stream *s = g_new0(Stream, 1);
    s->name = g_strdup(name);
    g_ptr_array_add(exec->streams, s);
    return exec->streams->len - 1;
}

static PpsimTaskId
exec_append_task(PpsimExec *exec, int stream, PpsimTime duration)
{
    g_assert(stream >= 0 && (guint)stream < exec->streams->len);
    g_assert(!exec->ran);
    PpsimTaskId id = vec_push(&exec->tasks, sizeof(Task), NULL, NULL, 0);
    exec_tasks(exec)[id] = (Task){.duration_ps = duration, .start_ps = -1, .stream = stream};
    ((Stream *)g_ptr_array_index(exec->streams, stream))->len++;
    return id;
}

PpsimTaskId
ppsim_exec_add_task(PpsimExec *exec, int stream, PpsimTime duration_ps)
{
    g_assert(duration_ps >= 0);
    return exec_append_task(exec, stream, duration_ps);
}

PpsimTaskId
ppsim_exec_add_transfer(PpsimExec *exec, int stream, int src, int dst, guint64 bytes)
{
    g_assert(exec->topo != NULL);
    Transfer t = {.bytes = bytes, .src = src, .dst = dst, .end_ps = -1};
    g_array_append_val(exec->transfers, t);
    return exec_append_task(exec, stream, -(PpsimTime)exec->transfers->len);
}

static guint32
exec_append_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, gint32 code)
{
    g_assert(from < exec->tasks.len && to < exec->tasks.len);
    DEP_EXTRA(exec);
    guint32 i = vec_push(&exec->deps, sizeof(guint32), extra, extra_size, 2);
    exec_dep_from(exec)[i] = from;
    exec->dep_to[i] = to;
    exec->dep_code[i] = code;
    exec_tasks(exec)[from].succ_begin++; /* counts until the run */
    exec_tasks(exec)[to].pending++;
    return i;
}

/* The class of @latency: its index in exec->latencies, added if new. A graph has a handful
 * of distinct latencies, in runs, so the last hit is tried first, then a short scan; past
 * LATENCY_SCAN classes a hash table keeps adding dependencies O(1). */
#define LATENCY_SCAN 16
static gint32
exec_latency_class(PpsimExec *exec, PpsimTime latency)
{
    GArray *lat = exec->latencies;
    static const guint none = G_MAXUINT;
    guint last = exec->deps.len > 0 && exec->dep_code[exec->deps.len - 1] >= 0
                     ? (guint)exec->dep_code[exec->deps.len - 1]
                     : none;
    if (last != none && g_array_index(lat, PpsimTime, last) == latency)
        return (gint32)last;
    if (exec->latency_lookup != NULL) {
        gpointer hit = g_hash_table_lookup(exec->latency_lookup, &latency);
        if (hit != NULL)
            return GPOINTER_TO_INT(hit) - 1;
    } else {
        for (guint i = 0; i < lat->len; i++)
            if (g_array_index(lat, PpsimTime, i) == latency)
                return (gint32)i;
    }
    g_assert(lat->len < G_MAXINT32 - 1);
    g_array_append_val(lat, latency);
    if (lat->len > LATENCY_SCAN && exec->latency_lookup == NULL) {
        exec->latency_lookup = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        for (guint i = 0; i + 1 < lat->len; i++)
            g_hash_table_insert(exec->latency_lookup,
                                g_memdup2(&g_array_index(lat, PpsimTime, i), sizeof(PpsimTime)),
                                GINT_TO_POINTER(i + 1));
    }
    if (exec->latency_lookup != NULL)
        g_hash_table_insert(exec->latency_lookup, g_memdup2(&latency, sizeof(PpsimTime)),
                            GINT_TO_POINTER(lat->len));
    return (gint32)(lat->len - 1);
}

void
ppsim_exec_add_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, PpsimTime latency_ps)
{
    g_assert(latency_ps >= 0);
    exec_append_dep(exec, from, to, exec_latency_class(exec, latency_ps));
}

void
ppsim_exec_add_flow_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, int src, int dst,
                        guint64 bytes)
{
    g_assert(exec->topo != NULL);
    g_assert(exec->flow_deps->len < G_MAXINT32);
    FlowDep f = {.bytes = bytes,
                 .src = src,
                 .dst = dst,
                 .arrival_ps = -1,
                 .starts = 1,
                 .waiter = PPSIM_EXEC_NO_TASK};
    f.dep = exec_append_dep(exec, from, to, -(gint32)exec->flow_deps->len - 1);
    g_array_append_val(exec->flow_deps, f);
}

void
ppsim_exec_add_flow_dep_sync(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, int src, int dst,
                             guint64 bytes, PpsimTaskId gate, PpsimTaskId waiter)
{
    g_assert(gate == PPSIM_EXEC_NO_TASK || gate < exec->tasks.len);
    g_assert(waiter == PPSIM_EXEC_NO_TASK || waiter < exec->tasks.len);
    ppsim_exec_add_flow_dep(exec, from, to, src, dst, bytes);
    guint32 index = exec->flow_deps->len - 1;
    FlowDep *f = &g_array_index(exec->flow_deps, FlowDep, index);
    if (gate != PPSIM_EXEC_NO_TASK) {
        guint32 pair[2] = {gate, index};
        g_array_append_val(exec->gates, pair);
        f->starts++;
        exec_tasks(exec)[gate].succ_begin++; /* an edge of its own: counts until the run */
    }
    if (waiter != PPSIM_EXEC_NO_TASK) {
        f->waiter = waiter;
        exec_tasks(exec)[waiter].pending++;
    }
}

void
ppsim_exec_add_mem(PpsimExec *exec, PpsimTaskId task, PpsimMemWhen when, int pool, int tag,
                   PpsimMemCategory category, gint64 delta)
{
    g_assert(task < exec->tasks.len && pool >= 0 && (guint)pool < exec->pools->len);
    g_assert(tag < exec->n_tags);
    if (exec->mem_task == NULL && exec->mem.len > 0 && task < exec->mem_last) {
        /* out of task order: from now on, keep each effect's task, for a sort at run start
         * (the effects so far are in task order, so their counts say whose they are) */
        exec->mem_task = g_new(guint32, MAX(exec->mem.cap, 1));
        guint32 k = 0;
        for (guint32 t = 0; t <= exec->mem_last; t++)
            for (guint32 c = 0; c < exec_tasks(exec)[t].mem_begin; c++)
                exec->mem_task[k++] = t;
        g_assert(k == exec->mem.len);
    }
    guint32 i;
    if (exec->mem_task != NULL) {
        MEM_EXTRA(exec);
        i = vec_push(&exec->mem, sizeof(MemEffect), extra, extra_size, 1);
        exec->mem_task[i] = task;
    } else {
        i = vec_push(&exec->mem, sizeof(MemEffect), NULL, NULL, 0);
    }
    exec_mem(exec)[i] = (MemEffect){
        .delta = delta, .tag = tag, .pool = (guint32)pool, .when = when, .category = category};
    exec_tasks(exec)[task].mem_begin++; /* counts until the run */
    exec->mem_last = task;
}

void
ppsim_exec_set_recording(PpsimExec *exec, gboolean on)
{
    exec->recording = on;
}

/* ---- sealing the graph ----------------------------------------------------------------- */

/* Groups the memory effects by task, keeping their order within a task (a stable counting
 * sort, skipped when they were added in task order, as sim.c does). */
static void
exec_index_mem(PpsimExec *exec)
{
    guint32 n = exec->tasks.len, len = exec->mem.len, at = 0;
    Task *task = exec_tasks(exec);
    for (guint32 t = 0; t <= n; t++) { /* counts -> starts, through the sentinel */
        guint32 c = task[t].mem_begin;
        task[t].mem_begin = at;
        at += c;
    }
    if (exec->mem_task != NULL) {
        MemEffect *out = ppsim_bigalloc(MAX(len, 1) * sizeof(MemEffect));
        guint32 *fill = g_new(guint32, n);
        for (guint32 t = 0; t < n; t++)
            fill[t] = task[t].mem_begin;
        for (guint32 i = 0; i < len; i++)
            out[fill[exec->mem_task[i]]++] = exec_mem(exec)[i];
        g_free(fill);
        g_free(exec->mem.data);
        exec->mem.data = out;
        exec->mem.cap = MAX(len, 1);
    }
    g_clear_pointer(&exec->mem_task, g_free); /* no longer needed */
}

/* Successor edges packed by producer (a stable counting sort; the counts and the input
 * counts were kept as dependencies were added): each dependency's, then each gate's (an edge
 * to the flow's consumer with the flow's code: the flow starts at its last such edge). */
static void
exec_index_deps(PpsimExec *exec)
{
    guint32 n = exec->tasks.len, len = exec->deps.len, n_gates = exec->gates->len, at = 0;
    const guint32 *from = exec_dep_from(exec);
    Task *task = exec_tasks(exec);
    for (guint32 t = 0; t <= n; t++) { /* counts -> starts, through the sentinel */
        guint32 c = task[t].succ_begin;
        task[t].succ_begin = at;
        at += c;
    }
    Edge *edges = ppsim_bigalloc(MAX(len + n_gates, 1) * sizeof(Edge));
    /* fill each block in order, moving task[t].succ_begin up to t's end (t + 1's start) */
    for (guint32 i = 0; i < len; i++)
        edges[task[from[i]].succ_begin++] =
            (Edge){.to = exec->dep_to[i], .code = exec->dep_code[i]};
    for (guint32 i = 0; i < n_gates; i++) {
        const guint32 *pair = &g_array_index(exec->gates, guint32, 2 * i);
        const FlowDep *f = &g_array_index(exec->flow_deps, FlowDep, pair[1]);
        edges[task[pair[0]].succ_begin++] =
            (Edge){.to = exec->dep_to[f->dep], .code = -(gint32)pair[1] - 1};
    }
    for (guint32 t = n; t > 0; t--) /* shift back into place */
        task[t].succ_begin = task[t - 1].succ_begin;
    task[0].succ_begin = 0;
    exec->edges = edges;
}

/* Each stream's tasks, in the order they were added (a stable counting sort by stream). */
static void
exec_index_streams(PpsimExec *exec)
{
    guint32 n = exec->tasks.len, at = 0;
    for (guint i = 0; i < exec->streams->len; i++) {
        Stream *s = g_ptr_array_index(exec->streams, i);
        s->begin = at;
        at += s->len;
        s->len = 0;
    }
    exec->order = ppsim_bigalloc(MAX(n, 1) * sizeof(guint32));
    const Task *task = exec_tasks(exec);
    for (guint32 t = 0; t < n; t++) {
        Stream *s = g_ptr_array_index(exec->streams, task[t].stream);
        exec->order[s->begin + s->len++] = t;
    }
}

void
exec_graph_seal(PpsimExec *exec)
{
    /* a sentinel task closes the last task's edge and memory ranges */
    vec_push(&exec->tasks, sizeof(Task), NULL, NULL, 0);
    exec->tasks.len--;
    exec_tasks(exec)[exec->tasks.len] = (Task){0};
    exec_index_deps(exec);
    exec_index_streams(exec);
    exec_index_mem(exec);
}
