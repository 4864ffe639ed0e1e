/* exec-internal.h: the executor's records, shared by the graph builder (exec-graph.c) and
 * the run loop (exec.c) only. See exec.c for the layout's rationale.
 */
#pragma once

#include "hw/exec.h"
#include "hw/network.h"
#include "engine/engine.h"

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
    guint32 starts;     /* producer ends still needed before the flow starts: 1, or 2 with a gate */
    PpsimTaskId waiter; /* a second task waiting for its arrival, or PPSIM_EXEC_NO_TASK */
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
    GArray *gates;              /* guint32 pairs (gate task, flow index): extra start conditions
                                 * of rendezvous flows, packed into the edges at run start */
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

/* Closes the graph before the run (exec-graph.c): appends a sentinel task, packs the
 * successor edges by producer, the tasks by stream and the memory effects by task. */
void exec_graph_seal(PpsimExec *exec);
