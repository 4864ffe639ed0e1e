/* validate.c: the schedule checker (src/README.md "Semantics"); see ppsim_schedule_validate() in
 * schedule.h.
 *
 * Structural rules first (every op has what it needs, same-device order rules), then a
 * cyclic-wait check: Kahn's algorithm over the graph of per-list order edges plus the
 * dependencies of schedule-index.c. O(ops + dependencies).
 */
#include "schedule/schedule-index.h"
#include "util/bigalloc.h"
#include "util/ppsim-error.h"

#include <string.h>

static gboolean
validate_fail(GError **error, const char *problem, const PpsimOp *op, int device)
{
    g_autoptr(GString) what = g_string_new(NULL);
    ppsim_op_describe(what, op);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID, "'%s' on device %d %s",
                what->str, device, problem);
    return FALSE;
}

/* With two pipelines (schedule.h pipe_stages): whether microbatch @j runs through the
 * pipeline holding stage @s, i.e. has its forward at that pipeline's first stage. */
static gboolean
validate_in_pipe(const PpsimSchedule *sched, const gint32 *tf, int s, int j)
{
    int first, last;
    ppsim_schedule_pipe_bounds(sched, s, &first, &last);
    return tf != NULL && tf[(gsize)first * sched->n_microbatches + j] >= 0;
}

/* With two pipelines: every microbatch starts in exactly one of them. */
static gboolean
validate_pipes(const PpsimSchedule *sched, const gint32 *tf, GError **error)
{
    int ps = sched->pipe_stages, S = sched->n_stages;
    if (ps <= 0 || ps == S)
        return TRUE;
    if (S % ps != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "%d stages do not split into pipelines of %d", S, ps);
        return FALSE;
    }
    for (int j = 0; j < sched->n_microbatches; j++) {
        int starts = 0;
        for (int first = 0; first < S; first += ps)
            starts += tf != NULL && tf[(gsize)first * sched->n_microbatches + j] >= 0;
        if (starts != 1) {
            PpsimOp op = {.kind = PPSIM_OP_F, .stage = 0, .microbatch = j};
            return validate_fail(error,
                                 starts == 0 ? "is missing (nor does the microbatch start in "
                                               "the other pipeline)"
                                             : "starts a pipeline, but its microbatch also "
                                               "starts the other one",
                                 &op, sched->stage_device[0]);
        }
    }
    return TRUE;
}

/* F&B pairs (schedule.h PPSIM_OP_FLAG_OVERLAP): an F with the flag, then a BW with it, next
 * to each other in one compute list; no other op carries it. */
static gboolean
validate_overlap(const PpsimSchedule *sched, GError **error)
{
    for (int d = 0; d < sched->n_devices; d++) {
        const GArray *ops = sched->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (!(op->flags & PPSIM_OP_FLAG_OVERLAP))
                continue;
            const PpsimOp *next = i + 1 < ops->len ? &g_array_index(ops, PpsimOp, i + 1) : NULL;
            if (op->kind != PPSIM_OP_F)
                return validate_fail(
                    error, "is marked overlapped (F&B) but follows no overlapped F", op, d);
            if (next == NULL || next->kind != PPSIM_OP_BW || !(next->flags & PPSIM_OP_FLAG_OVERLAP))
                return validate_fail(error,
                                     "is marked overlapped (F&B) but the next op of its device "
                                     "is no overlapped BW",
                                     op, d);
            i++; /* its BW half */
        }
    }
    for (int d = 0; d < sched->n_devices; d++)
        for (guint i = 0; i < sched->copy[d]->len; i++) {
            const PpsimOp *op = &g_array_index(sched->copy[d], PpsimOp, i);
            if (op->flags & PPSIM_OP_FLAG_OVERLAP)
                return validate_fail(error, "is a copy op marked overlapped (F&B)", op, d);
        }
    return TRUE;
}

/* Every (stage, microbatch) has exactly one F and one backward; W, R, OFF, RL appear only
 * with the ops they need and in a consistent order on their device. The ops of one
 * (stage, microbatch) sit on the stage's device (the index checked it), F, B, BW, W and R in
 * its compute list, OFF and RL in its copy list, and ids follow list order: comparing ids
 * compares places in the list. */
gboolean
ppsim_schedule_validate_rules(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                              GError **error)
{
    static const PpsimOpKind kinds[] = {PPSIM_OP_F, PPSIM_OP_B,   PPSIM_OP_BW, PPSIM_OP_W,
                                        PPSIM_OP_R, PPSIM_OP_OFF, PPSIM_OP_RL};
    const gint32 *table[G_N_ELEMENTS(kinds)];
    for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
        table[k] = ppsim_schedule_index_table(idx, kinds[k]);
    gsize m = (gsize)sched->n_microbatches, slots = (gsize)sched->n_stages * m;
    if ((ppsim_schedule_index_flags(idx) & PPSIM_OP_FLAG_OVERLAP) &&
        !validate_overlap(sched, error))
        return FALSE;
    if (!validate_pipes(sched, table[0], error))
        return FALSE;
    /* the usual shapes first, as one scan: F with BW, or F with B and W, and nothing else;
     * on any miss the full loop below finds the first offender and names it */
    const gint32 *tf = table[0], *tb = table[1], *tbw = table[2], *tw = table[3];
    if (tf != NULL && table[4] == NULL && table[5] == NULL && table[6] == NULL) {
        gboolean ok = TRUE;
        if (tbw != NULL && tb == NULL && tw == NULL) {
            for (gsize k = 0; k < slots; k++)
                ok &= (tf[k] >= 0) & (tbw[k] >= 0);
            if (ok)
                return TRUE;
        } else if (tbw == NULL && tb != NULL && tw != NULL) {
            for (gsize k = 0; k < slots; k++)
                ok &= (tf[k] >= 0) & (tb[k] >= 0) & (tw[k] >= tb[k]);
            if (ok)
                return TRUE;
        }
    }
    for (int s = 0; s < sched->n_stages; s++) {
        int d = sched->stage_device[s];
        for (gsize j = 0; j < m; j++) {
            gsize slot = (gsize)s * m + j;
            gint64 at[G_N_ELEMENTS(kinds)];
            for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
                at[k] = table[k] != NULL ? table[k][slot] : -1;
            gint64 f = at[0], b = at[1], bw = at[2], w = at[3], r = at[4], off = at[5], rl = at[6];
            if (sched->pipe_stages > 0 && !validate_in_pipe(sched, tf, s, (int)j)) {
                for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
                    if (at[k] >= 0) {
                        PpsimOp op = {.kind = kinds[k], .stage = s, .microbatch = (gint32)j};
                        return validate_fail(error,
                                             "is in a pipeline its microbatch does not run "
                                             "through (no forward at that pipeline's first stage)",
                                             &op, d);
                    }
                continue;
            }
            if (G_LIKELY(f >= 0 && (b < 0) != (bw < 0) && (w >= 0) == (b >= 0) && r < 0 &&
                         off < 0 && rl < 0 && w >= b))
                continue; /* the usual (stage, microbatch): F, then B and W or BW */
            PpsimOp op = {.kind = PPSIM_OP_F, .stage = s, .microbatch = (gint32)j};
            if (f < 0)
                return validate_fail(error, "is missing", &op, d);
            if (b < 0 && bw < 0)
                return validate_fail(error, "has no backward (B or BW)", &op, d);
            op.kind = PPSIM_OP_B;
            if (b >= 0 && bw >= 0)
                return validate_fail(error, "has both B and BW", &op, d);
            if (b >= 0 && w < 0)
                return validate_fail(error, "has no W", &op, d);
            op.kind = PPSIM_OP_W;
            if (w >= 0 && b < 0)
                return validate_fail(error, "has no B (a BW needs no W)", &op, d);
            if (w >= 0 && w < b)
                return validate_fail(error, "comes before its B", &op, d);
            op.kind = PPSIM_OP_R;
            if (r >= 0 && r > MAX(b, bw))
                return validate_fail(error, "comes after its backward", &op, d);
            if (r >= 0 && r < f)
                return validate_fail(error, "comes before its F", &op, d);
            op.kind = PPSIM_OP_RL;
            if (rl >= 0 && off < 0)
                return validate_fail(error, "has no OFF", &op, d);
            if (rl >= 0 && rl < off)
                return validate_fail(error, "comes before its OFF", &op, d);
            op.kind = PPSIM_OP_OFF;
            if (off >= 0 && rl < 0)
                return validate_fail(error, "is never reloaded (no RL)", &op, d);
        }
    }
    return TRUE;
}

typedef struct {
    guint32 *indegree;
    guint32 *head; /* CSR of successors, built in two passes */
    guint32 *succ;
    guint8 *kind; /* [edges] PpsimDepKind, only when a caller wants edges */
    gboolean counting;
} DepGraph;

static void
graph_dep(guint32 from, guint32 to, PpsimDepKind kind, int boundary, gpointer data)
{
    (void)boundary;
    DepGraph *g = data;
    if (g->counting) {
        g->head[from + 1]++;
        g->indegree[to]++;
    } else {
        if (g->kind != NULL)
            g->kind[g->head[from]] = (guint8)kind;
        g->succ[g->head[from]++] = to;
    }
}

/* Kahn's algorithm; the per-list order edge (i -> i+1) is implicit. */
gboolean
ppsim_schedule_topo_walk(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                         PpsimTopoFunc visit, PpsimDepFunc edge, gpointer user_data, GError **error)
{
    guint32 n = ppsim_schedule_index_n_ops(idx);
    DepGraph g = {.indegree = ppsim_bigalloc0((n + 1) * sizeof(guint32)),
                  .head = ppsim_bigalloc0((n + 2) * sizeof(guint32)),
                  .counting = TRUE};
    ppsim_schedule_foreach_dep(idx, graph_dep, &g);
    for (guint32 i = 0; i < n; i++)
        g.head[i + 1] += g.head[i];
    g.succ = ppsim_bigalloc(MAX(g.head[n], 1) * sizeof(guint32));
    if (edge != NULL)
        g.kind = g_malloc(MAX(g.head[n], 1));
    guint32 *start = ppsim_bigalloc((n + 1) * sizeof(guint32));
    memcpy(start, g.head, (n + 1) * sizeof(guint32));
    g.counting = FALSE;
    ppsim_schedule_foreach_dep(idx, graph_dep, &g); /* head[i] ends at start[i+1] */
    /* Order edges: every op but the first of its list waits for its predecessor. */
    guint32 *stack = ppsim_bigalloc(MAX(n, 1) * sizeof(guint32));
    gsize top = 0, done = 0;
    for (int d = 0; d < sched->n_devices; d++)
        for (int list = 0; list < 2; list++) {
            GArray *ops = list == 0 ? sched->compute[d] : sched->copy[d];
            guint32 base = ppsim_schedule_index_base(idx, d, list);
            for (guint i = 1; i < ops->len; i++)
                g.indegree[base + i]++;
            if (ops->len > 0 && g.indegree[base] == 0)
                stack[top++] = base;
        }
    while (top > 0) {
        guint32 id = stack[--top];
        done++;
        if (visit != NULL)
            visit(id, user_data);
        PpsimOpPos pos;
        ppsim_schedule_index_pos(idx, id, &pos);
        GArray *ops = pos.list == 0 ? sched->compute[pos.device] : sched->copy[pos.device];
        if ((guint)pos.index + 1 < ops->len) {
            if (edge != NULL)
                edge(id, id + 1, PPSIM_DEP_LOCAL, -1, user_data);
            if (--g.indegree[id + 1] == 0)
                stack[top++] = id + 1;
        }
        for (guint32 k = start[id]; k < start[id + 1]; k++) {
            if (edge != NULL)
                edge(id, g.succ[k], (PpsimDepKind)g.kind[k], -1, user_data);
            if (--g.indegree[g.succ[k]] == 0)
                stack[top++] = g.succ[k];
        }
    }
    gboolean ok = done == n;
    if (!ok) {
        /* Name the first op (in device order) that can never start. */
        for (guint32 id = 0; id < n; id++) {
            if (g.indegree[id] == 0)
                continue;
            PpsimOpPos pos;
            ppsim_schedule_index_pos(idx, id, &pos);
            validate_fail(error,
                          "can never start: cyclic wait (its inputs depend, directly or not, "
                          "on ops ordered after it)",
                          ppsim_schedule_index_op(idx, id), pos.device);
            break;
        }
    }
    g_free(stack);
    g_free(start);
    g_free(g.kind);
    g_free(g.succ);
    g_free(g.head);
    g_free(g.indegree);
    return ok;
}

gboolean
ppsim_schedule_validate_acyclic(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                                GError **error)
{
    return ppsim_schedule_topo_walk(sched, idx, NULL, NULL, NULL, error);
}

gboolean
ppsim_schedule_validate_indexed(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                                GError **error)
{
    return ppsim_schedule_validate_rules(sched, idx, error) &&
           ppsim_schedule_validate_acyclic(sched, idx, error);
}

gboolean
ppsim_schedule_validate(const PpsimSchedule *sched, GError **error)
{
    g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(sched, error);
    return idx != NULL && ppsim_schedule_validate_indexed(sched, idx, error);
}
