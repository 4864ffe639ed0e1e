/* estimate.c: a schedule's timeline on the generators' cost estimates; see co-schedule.h.
 *
 * An op starts at the later of the end of the previous op of its list and the ends of its
 * inputs (+ comm_ps when an activation or a gradient crosses devices): the longest path to it
 * in the wait graph. Without ranks this is one pass over the lists (as the one-pass replay
 * does, sim-fast.c): a list runs until an input is not timed yet, then waits on the input's
 * list, which wakes it once past that op. With ranks, or when lists are left that can never
 * run (a cyclic wait), the topological walk of the checker times the ops instead and names
 * the op that can never start.
 */
#include "sched/co-schedule.h"
#include "schedule/schedule-index-inline.h"

#include <string.h>

PpsimTime
ppsim_estimate_op_ps(const PpsimCostEstimates *costs, const PpsimOp *op)
{
    const PpsimStageEstimate *st = &costs->stage[op->stage];
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        return st->f_ps;
    case PPSIM_OP_B:
        return st->b_ps;
    case PPSIM_OP_W:
        return st->w_ps;
    case PPSIM_OP_BW:
        return st->b_ps + st->w_ps;
    case PPSIM_OP_R:
        return st->r_ps;
    case PPSIM_OP_OFF:
    case PPSIM_OP_RL:
        return st->off_ps;
    default:
        return 0;
    }
}

/* The estimated timeline: every op as early as its inputs and its list allow. */
typedef struct {
    const PpsimScheduleIndex *idx;
    const PpsimCostEstimates *costs;
    PpsimTime *ready, *end; /* [n_ops] */
    guint32 *rank;          /* [n_ops] position in the topological walk */
    guint32 n_seen;
} Estimate;

static void
estimate_visit(guint32 id, gpointer data)
{
    Estimate *e = data;
    e->end[id] = e->ready[id] + ppsim_estimate_op_ps(e->costs, ppsim_schedule_index_op(e->idx, id));
    e->rank[id] = e->n_seen++;
}

static void
estimate_edge(guint32 from, guint32 to, PpsimDepKind kind, int boundary, gpointer data)
{
    (void)boundary;
    Estimate *e = data;
    PpsimTime t = e->end[from];
    if ((kind == PPSIM_DEP_ACTIVATION || kind == PPSIM_DEP_GRADIENT) &&
        ppsim_schedule_index_device(e->idx, from) != ppsim_schedule_index_device(e->idx, to))
        t += e->costs->comm_ps;
    e->ready[to] = MAX(e->ready[to], t);
}

/* One list in the pass: device @device's compute (0) or copy (1) list. */
typedef struct {
    const PpsimOp *ops;
    guint32 len, next, base;
    gint32 device;
    PpsimTime free_at;  /* end of its last op so far */
    guint32 wait_index; /* while waiting: until the list it waits on is past this op */
    gint32 waiters;     /* first list waiting on this one, or -1 */
    gint32 next_waiter; /* next list waiting on the same list as this one */
} Lane;

typedef struct {
    const PpsimScheduleIndex *idx;
    const PpsimCostEstimates *costs;
    Lane *lanes; /* [2p]: device d's compute list is lane 2d, its copy list 2d + 1 */
    PpsimDep *deps;
    PpsimTime *start, *end;
    const PpsimTime *duration; /* [kind * n_stages + stage] */
    int n_stages;
} Pass;

/* Times lane @self's ops until one has an input not timed yet (then registers the wait and
 * returns). */
static void
pass_lane(Pass *ps, gint32 self)
{
    Lane *l = &ps->lanes[self];
    PpsimOpPos pos = {l->device, self & 1, 0};
    while (l->next < l->len) {
        guint32 i = l->next;
        const PpsimOp *op = &l->ops[i];
        pos.index = (gint32)i;
        guint n = ppsim_schedule_index_deps_inline(ps->idx, &pos, op, ps->deps);
        PpsimTime ready = l->free_at;
        for (guint k = 0; k < n; k++) {
            const PpsimDep *dep = &ps->deps[k];
            Lane *from = &ps->lanes[2 * dep->device + dep->list];
            if (dep->from - from->base >= from->next) { /* not timed yet: wait for it */
                l->wait_index = dep->from - from->base;
                l->next_waiter = from->waiters;
                from->waiters = self;
                return;
            }
            PpsimTime t = ps->end[dep->from];
            if ((dep->kind == PPSIM_DEP_ACTIVATION || dep->kind == PPSIM_DEP_GRADIENT) &&
                dep->device != l->device)
                t += ps->costs->comm_ps;
            ready = MAX(ready, t);
        }
        ps->start[l->base + i] = ready;
        l->free_at = ps->end[l->base + i] =
            ready + ps->duration[op->kind * ps->n_stages + op->stage];
        l->next = i + 1;
    }
}

/* The pass; FALSE when lists are left that can never run. */
static gboolean
estimate_pass(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
              const PpsimCostEstimates *costs, PpsimTime *start, PpsimTime *end)
{
    int n_lanes = 2 * sched->n_devices;
    g_autofree Lane *lanes = g_new0(Lane, MAX(n_lanes, 1));
    g_autofree PpsimDep *deps = g_new(PpsimDep, ppsim_schedule_index_max_deps(idx));
    g_autofree gint32 *stack = g_new(gint32, MAX(n_lanes, 1));
    int S = sched->n_stages;
    g_autofree PpsimTime *duration = g_new(PpsimTime, (gsize)PPSIM_OP_N_KINDS * S);
    for (int k = 0; k < PPSIM_OP_N_KINDS; k++)
        for (int st = 0; st < S; st++)
            duration[k * S + st] =
                ppsim_estimate_op_ps(costs, &(PpsimOp){.kind = (guint8)k, .stage = st});
    Pass ps = {idx, costs, lanes, deps, start, end, duration, S};
    int top = 0;
    for (int k = n_lanes - 1; k >= 0; k--) {
        const GArray *ops = k & 1 ? sched->copy[k / 2] : sched->compute[k / 2];
        lanes[k] = (Lane){.ops = (const PpsimOp *)(const void *)ops->data,
                          .len = ops->len,
                          .base = ppsim_schedule_index_base(idx, k / 2, k & 1),
                          .device = k / 2,
                          .waiters = -1,
                          .next_waiter = -1};
        if (ops->len > 0)
            stack[top++] = k;
    }
    while (top > 0) {
        gint32 k = stack[--top];
        Lane *l = &lanes[k];
        pass_lane(&ps, k);
        /* wake the lanes waiting for an op this one has now passed */
        for (gint32 *w = &l->waiters; *w >= 0;) {
            Lane *waiter = &lanes[*w];
            if (waiter->wait_index < l->next) {
                stack[top++] = *w;
                *w = waiter->next_waiter;
            } else {
                w = &waiter->next_waiter;
            }
        }
    }
    for (int k = 0; k < n_lanes; k++)
        if (lanes[k].next < lanes[k].len)
            return FALSE;
    return TRUE;
}

gboolean
ppsim_schedule_estimate(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                        const PpsimCostEstimates *costs, PpsimTime *start, PpsimTime *end,
                        guint32 *rank, GError **error)
{
    if (rank == NULL && estimate_pass(sched, idx, costs, start, end))
        return TRUE;
    guint32 n = ppsim_schedule_index_n_ops(idx);
    g_autofree guint32 *own_rank = rank ? NULL : g_new(guint32, MAX(n, 1));
    memset(start, 0, n * sizeof(PpsimTime));
    Estimate e = {idx, costs, start, end, rank ? rank : own_rank, 0};
    return ppsim_schedule_topo_walk(sched, idx, estimate_visit, estimate_edge, &e, error);
}
