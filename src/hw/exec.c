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
#include "hw/exec.h"
#include "hw/network.h"
#include "engine/engine.h"
#include "util/ppsim-error.h"
#include "util/fmt.h"
#include "util/bigalloc.h"

#include <string.h>

enum { EV_TASK_END = 1, EV_DEP_ARRIVE = 2 };

/* One task, 32 bytes. */
typedef struct {
    PpsimTime duration_ps; /* < 0: a transfer, -index - 1 */
    PpsimTime start_ps;    /* -1 until started */
    guint32 succ_begin;    /* until the run: its successor count; then edges[succ_begin ..
                            * next task's succ_begin) */
    guint32 mem_begin;     /* until the run: its memory effect count; then mem[mem_begin ..) */
    gint32 stream;
    guint32 pending; /* inputs not yet arrived */
} Task;

G_STATIC_ASSERT(sizeof(PpsimTime) != 8 || sizeof(Task) == 32);

/* A successor edge, packed by producer at run start: 8 bytes. */
typedef struct {
    PpsimTaskId to;
    gint32 code; /* >= 0: latency class; < 0: flow -index - 1 */
} Edge;

G_STATIC_ASSERT(sizeof(Edge) == 8);

/* A transfer task (its duration slot holds -index - 1). */
typedef struct {
    guint64 bytes;
    gint32 src, dst; /* endpoints */
    PpsimTime end_ps;
} Transfer;

/* A flow dependency (its code holds -index - 1). */
typedef struct {
    guint64 bytes;
    gint32 src, dst;
    guint32 dep; /* its dependency index */
    PpsimTime arrival_ps;
} FlowDep;

/* One memory change of a task, 16 bytes. */
typedef struct {
    gint64 delta;
    gint32 tag;
    guint32 pool : 29;
    guint32 when : 1; /* PpsimMemWhen */
    guint32 category : 2;
} MemEffect;
G_STATIC_ASSERT(sizeof(MemEffect) == 16);

typedef struct {
    char *name;
    guint32 begin, len; /* its tasks are order[begin .. begin + len), in the order added */
    guint32 next;
    gboolean busy;
} Stream;

/* A growable array of fixed-size elements (cheaper than GArray in the add_* paths). */
typedef struct {
    gpointer data;
    guint32 len, cap;
} Vec;

struct PpsimExec {
    const PpsimTopology *topo;
    Vec tasks;         /* Task, plus one sentinel at run start */
    GArray *transfers; /* Transfer */
    /* dependencies: parallel arrays of deps.len */
    Vec deps;                   /* guint32 from */
    guint32 *dep_to;            /* [cap] */
    gint32 *dep_code;           /* [cap] >= 0: latency class; < 0: flow -index - 1 */
    GArray *latencies;          /* PpsimTime per latency class */
    GHashTable *latency_lookup; /* gint64 latency -> class + 1, once there are many */
    GArray *flow_deps;          /* FlowDep */
    /* memory effects: parallel arrays of mem.len, grouped by task at run start */
    Vec mem;            /* MemEffect */
    guint32 *mem_task;  /* [cap] task of each effect; NULL while they come in task order */
    guint32 mem_last;   /* task of the last effect added */
    GPtrArray *streams; /* Stream* */
    GArray *pools;      /* PpsimPoolStats */
    int n_tags;
    gint64 *tag_current, *tag_peak;
    gboolean recording;
    GArray *samples; /* PpsimMemSample */
    GArray *flows;   /* PpsimFlowRecord */
    /* built at run start */
    Edge *edges;    /* [deps] grouped by producer */
    guint32 *order; /* [tasks] grouped by stream */
    PpsimEngine *engine;
    PpsimNetwork *net;
    guint32 entity;
    gboolean ran;
    PpsimExecDescribeFunc describe;
    gpointer describe_data;
};

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

static inline Task *
exec_tasks(const PpsimExec *exec)
{
    return exec->tasks.data;
}

static inline guint32 *
exec_dep_from(const PpsimExec *exec)
{
    return exec->deps.data;
}

static inline MemEffect *
exec_mem(const PpsimExec *exec)
{
    return exec->mem.data;
}

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
    FlowDep f = {.bytes = bytes, .src = src, .dst = dst, .arrival_ps = -1};
    f.dep = exec_append_dep(exec, from, to, -(gint32)exec->flow_deps->len - 1);
    g_array_append_val(exec->flow_deps, f);
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

/* ---- run ------------------------------------------------------------------------------ */

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
 * counts were kept as dependencies were added). */
static void
exec_index_deps(PpsimExec *exec)
{
    guint32 n = exec->tasks.len, len = exec->deps.len, at = 0;
    const guint32 *from = exec_dep_from(exec);
    Task *task = exec_tasks(exec);
    for (guint32 t = 0; t <= n; t++) { /* counts -> starts, through the sentinel */
        guint32 c = task[t].succ_begin;
        task[t].succ_begin = at;
        at += c;
    }
    Edge *edges = ppsim_bigalloc(MAX(len, 1) * sizeof(Edge));
    /* fill each block in order, moving task[t].succ_begin up to t's end (t + 1's start) */
    for (guint32 i = 0; i < len; i++)
        edges[task[from[i]].succ_begin++] =
            (Edge){.to = exec->dep_to[i], .code = exec->dep_code[i]};
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
    if (flow > 0)
        g_array_index(exec->flow_deps, FlowDep, flow - 1).arrival_ps = now;
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
            const FlowDep *f = &g_array_index(exec->flow_deps, FlowDep, -e->code - 1);
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
    /* a sentinel task closes the last task's edge and memory ranges */
    vec_push(&exec->tasks, sizeof(Task), NULL, NULL, 0);
    exec->tasks.len--;
    exec_tasks(exec)[exec->tasks.len] = (Task){0};
    exec_index_deps(exec);
    exec_index_streams(exec);
    exec_index_mem(exec);
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
    return exec->tasks.len;
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
