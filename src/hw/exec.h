/* exec.h: executes a graph of tasks on modelled hardware. Knows nothing of pipelines.
 *
 * A task runs on one in-order stream (a GPU's compute stream, a copy engine, a CPU worker):
 * it starts at max(end of the stream's previous task, arrival of its inputs), and lasts a
 * fixed duration or, for a transfer task, as long as its flow takes over the topology's
 * links. A dependency is local (ready at the producer's end), a pure latency, or a flow of
 * bytes between endpoints sharing links max-min fairly with concurrent flows. Tasks allocate
 * and free memory in pools (per GPU, per host) at their start or end; the executor tracks
 * the current and peak bytes per pool, per category and per tag (stage).
 */
#pragma once

#include <glib.h>
#include "hw/topology.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_MEM_STATIC,     /* weights, gradients, optimizer states */
    PPSIM_MEM_ACTIVATION, /* stashed activations */
    PPSIM_MEM_BUFFER,     /* reload and recompute buffers */
    PPSIM_MEM_WORKSPACE,  /* transients of one running op (the logits' gradient), counted in
                           * the total but not in the activations */
    PPSIM_MEM_N_CATEGORIES
} PpsimMemCategory;

typedef enum {
    PPSIM_MEM_AT_START,
    PPSIM_MEM_AT_END,
} PpsimMemWhen;

typedef guint32 PpsimTaskId;

typedef struct {
    gint64 peak_total; /* max over time of the sum of all categories */
    PpsimTime peak_total_time_ps;
    PpsimTaskId peak_total_task; /* task whose start/end reached the peak; G_MAXUINT32: none */
    gint64 peak_active;          /* max over time of ACTIVATION + BUFFER */
    PpsimTime peak_active_time_ps;
    PpsimTaskId peak_active_task;
    gint64 current[PPSIM_MEM_N_CATEGORIES];
    gint64 at_peak[PPSIM_MEM_N_CATEGORIES]; /* current[] when peak_total was reached */
    gint64 limit;                           /* 0 = none */
} PpsimPoolStats;

/* Applies one change of @delta bytes of @category to the pool stats @st at @now, by @task:
 * the current bytes, and the peaks of the total and of the active (ACTIVATION + BUFFER)
 * bytes, each remembering when and by which task it was first reached. The executor's own
 * rule, shared with replays that keep pool stats of their own. */
static inline void
ppsim_pool_stats_change(PpsimPoolStats *st, PpsimMemCategory category, gint64 delta, PpsimTime now,
                        guint32 task)
{
    st->current[category] += delta;
    gint64 active = st->current[PPSIM_MEM_ACTIVATION] + st->current[PPSIM_MEM_BUFFER];
    gint64 total = active + st->current[PPSIM_MEM_STATIC] + st->current[PPSIM_MEM_WORKSPACE];
    if (total > st->peak_total) {
        st->peak_total = total;
        st->peak_total_time_ps = now;
        st->peak_total_task = task;
        for (int c = 0; c < PPSIM_MEM_N_CATEGORIES; c++)
            st->at_peak[c] = st->current[c];
    }
    if (active > st->peak_active) {
        st->peak_active = active;
        st->peak_active_time_ps = now;
        st->peak_active_task = task;
    }
}

/* A new pool's stats: no bytes, no peak task, @limit (0 = none). */
static inline PpsimPoolStats
ppsim_pool_stats_init(gint64 limit)
{
    return (PpsimPoolStats){
        .limit = limit, .peak_total_task = G_MAXUINT32, .peak_active_task = G_MAXUINT32};
}

/* Sets the pool's initial bytes of @category, raising the total's peak (no task). */
static inline void
ppsim_pool_stats_set_base(PpsimPoolStats *st, PpsimMemCategory category, gint64 bytes)
{
    st->current[category] = bytes;
    gint64 total = 0;
    for (int c = 0; c < PPSIM_MEM_N_CATEGORIES; c++)
        total += st->current[c];
    if (total > st->peak_total) {
        st->peak_total = total;
        for (int c = 0; c < PPSIM_MEM_N_CATEGORIES; c++)
            st->at_peak[c] = st->current[c];
    }
}

/* One recorded memory change (when recording is on): @value is the pool's new total of
 * @category after the change. */
typedef struct {
    PpsimTime time_ps;
    gint32 pool;
    gint32 category;
    gint64 value;
} PpsimMemSample;

/* One flow that ran over the links (when recording is on). */
typedef struct {
    PpsimTime start_ps, end_ps; /* bytes moving; arrival = end + latency */
    gint32 src, dst;            /* endpoints */
    guint64 bytes;
    PpsimTaskId from, to; /* producer and consumer task (to = the task itself for a
                             transfer task) */
} PpsimFlowRecord;

typedef struct PpsimExec PpsimExec;

/* @topo (nullable, borrowed): needed only for flows. @n_tags: tags are 0..n_tags-1.
 * @expected_tasks sizes the internal arrays up front (0 when unknown). */
PpsimExec *ppsim_exec_new(const PpsimTopology *topo, int n_tags, gsize expected_tasks);
void ppsim_exec_free(PpsimExec *exec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimExec, ppsim_exec_free)

/* Adds a memory pool with a @limit (0 = none); returns its id. */
int ppsim_exec_add_pool(PpsimExec *exec, gint64 limit);
/* Sets a pool's initial bytes of @category (static memory); no task is charged. */
void ppsim_exec_set_pool_base(PpsimExec *exec, int pool, PpsimMemCategory category, gint64 bytes);
/* Adds an in-order stream; @name is copied. Returns its id. */
int ppsim_exec_add_stream(PpsimExec *exec, const char *name);

/* Appends a task to @stream's order. */
PpsimTaskId ppsim_exec_add_task(PpsimExec *exec, int stream, PpsimTime duration_ps);
/* Appends a transfer task: it holds @stream while @bytes flow from endpoint @src to @dst. */
PpsimTaskId ppsim_exec_add_transfer(PpsimExec *exec, int stream, int src, int dst, guint64 bytes);
/* @to may start only after @from ended plus @latency_ps. */
void ppsim_exec_add_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, PpsimTime latency_ps);
/* @to may start only after @bytes flowed from endpoint @src to @dst, starting when @from
 * ended (plus the route's latency). Needs a topology. */
void ppsim_exec_add_flow_dep(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, int src, int dst,
                             guint64 bytes);
/* A flow dependency as a rendezvous (a blocking send): the flow starts only once both @from
 * and @gate have ended, and besides @to, @waiter may start only after the flow arrived.
 * @gate and @waiter may be PPSIM_EXEC_NO_TASK (none). It counts as one dependency, @from ->
 * @to, for ppsim_exec_dep_arrival() and the rest. */
#define PPSIM_EXEC_NO_TASK G_MAXUINT32
void ppsim_exec_add_flow_dep_sync(PpsimExec *exec, PpsimTaskId from, PpsimTaskId to, int src,
                                  int dst, guint64 bytes, PpsimTaskId gate, PpsimTaskId waiter);
/* @task changes @pool's @category by @delta at its start or end, attributed to @tag. */
void ppsim_exec_add_mem(PpsimExec *exec, PpsimTaskId task, PpsimMemWhen when, int pool, int tag,
                        PpsimMemCategory category, gint64 delta);

/* Keep every memory change and flow for traces (off by default; costs memory). */
void ppsim_exec_set_recording(PpsimExec *exec, gboolean on);

/* Describes a task for error messages. */
typedef void (*PpsimExecDescribeFunc)(GString *out, PpsimTaskId task, gpointer user_data);

/* Runs the graph. Errors: PPSIM_SIM_ERROR_DEADLOCK naming a blocked task (via @describe),
 * what it waits for, its stream and the time. Can be called once. */
gboolean ppsim_exec_run(PpsimExec *exec, PpsimExecDescribeFunc describe, gpointer user_data,
                        GError **error);

/* When the @dep-th dependency added (0-based, over add_dep and add_flow_dep) reached its
 * consumer; -1 if it never did. */
PpsimTime ppsim_exec_dep_arrival(const PpsimExec *exec, guint32 dep);
/* Number of dependencies added; producer and consumer of the @dep-th. */
guint32 ppsim_exec_n_deps(const PpsimExec *exec);
PpsimTaskId ppsim_exec_dep_from(const PpsimExec *exec, guint32 dep);
PpsimTaskId ppsim_exec_dep_to(const PpsimExec *exec, guint32 dep);
/* The consumer of every dependency, [n_deps], for walking them in bulk. Returns: (transfer
 * none). */
const PpsimTaskId *ppsim_exec_dep_consumers(const PpsimExec *exec);
/* Start and end of tasks @first .. @first + @n - 1 into @out[2 i], @out[2 i + 1]. */
void ppsim_exec_task_times(const PpsimExec *exec, PpsimTaskId first, guint32 n, PpsimTime *out);
PpsimTime ppsim_exec_task_start(const PpsimExec *exec, PpsimTaskId task);
PpsimTime ppsim_exec_task_end(const PpsimExec *exec, PpsimTaskId task);
const PpsimPoolStats *ppsim_exec_pool_stats(const PpsimExec *exec, int pool);
/* Peak of ACTIVATION + BUFFER bytes attributed to @tag, over all pools. */
gint64 ppsim_exec_tag_peak(const PpsimExec *exec, int tag);
guint64 ppsim_exec_events_processed(const PpsimExec *exec);
/* Recorded data (empty unless recording was on). Returns: (transfer none). */
const GArray *ppsim_exec_mem_samples(const PpsimExec *exec);
const GArray *ppsim_exec_flows(const PpsimExec *exec);

G_END_DECLS
