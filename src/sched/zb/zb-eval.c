/* zb-eval.c: the timing of zb-auto.c's candidates (one stage per device) on the cost
 * estimates, as the explicit-mode replay runs them; see zb-auto.h. */
#include "sched/zb-auto.h"

/* Start of the op if its inputs are done, else -1. */
static PpsimTime
eval_ready(const PpsimOp *op, int S, int m, const PpsimTime *tf, const PpsimTime *tb,
           PpsimTime comm)
{
    int s = op->stage, j = op->microbatch;
    switch (op->kind) {
    case PPSIM_OP_F:
        return s == 0 ? 0 : tf[(s - 1) * m + j] < 0 ? -1 : tf[(s - 1) * m + j] + comm;
    case PPSIM_OP_B:
        if (tf[s * m + j] < 0)
            return -1;
        return s + 1 == S                ? tf[s * m + j]
               : tb[(s + 1) * m + j] < 0 ? -1
                                         : tb[(s + 1) * m + j] + comm;
    case PPSIM_OP_W:
        return tb[s * m + j];
    default:
        return -1;
    }
}

gboolean
ppsim_zb_auto_evaluate_bounded(const PpsimSchedule *sched, const PpsimCostEstimates *costs,
                               const gint64 *limit, PpsimZbEvalBound *bound, PpsimTime *makespan,
                               PpsimTime *span, gint64 *peak)
{
    int S = sched->n_stages, m = sched->n_microbatches;
    g_return_val_if_fail(S == sched->n_devices, FALSE);
    g_autofree PpsimTime *rest = g_new0(PpsimTime, S); /* compute left per device */
    gboolean bounded = bound->span > 0 || bound->makespan > 0;
    for (int d = 0; bounded && d < S; d++) {
        GArray *ops = sched->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            const PpsimStageEstimate *st = &costs->stage[op->stage];
            rest[d] += op->kind == PPSIM_OP_F   ? st->f_ps
                       : op->kind == PPSIM_OP_B ? st->b_ps
                                                : st->w_ps;
        }
    }
    bound->stopped = FALSE;
    g_autofree PpsimTime *t = g_new(PpsimTime, 2 * S * m + 2 * S);
    PpsimTime *tf = t, *tb = t + S * m, *end = t + 2 * S * m, *first = end + S;
    for (int i = 0; i < 2 * S * m; i++)
        t[i] = -1;
    g_autofree guint *pos = g_new0(guint, S);
    g_autofree gint64 *mem = g_new0(gint64, S);
    /* devices to visit, a ring: each runs its list until an op's input is missing; an F
     * done may unblock the next device, a B the previous one (the times do not depend on
     * the visiting order, only on the lists and the inputs) */
    g_autofree int *queue = g_new(int, S);
    g_autofree gboolean *queued = g_new(gboolean, S);
    int head = 0, n_queued = S;
    for (int d = 0; d < S; d++)
        queue[d] = d, queued[d] = TRUE;
    *peak = 0;
    *makespan = *span = 0;
    while (n_queued > 0) {
        int d = queue[head];
        head = (head + 1) % S, n_queued--;
        queued[d] = FALSE;
        GArray *ops = sched->compute[d];
        for (; pos[d] < ops->len; pos[d]++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, pos[d]);
            const PpsimStageEstimate *st = &costs->stage[op->stage];
            PpsimTime r = eval_ready(op, S, m, tf, tb, costs->comm_ps);
            if (r < 0)
                break;
            PpsimTime start = pos[d] == 0 ? r : MAX(r, end[d]);
            if (pos[d] == 0)
                first[d] = start;
            int k = op->stage * m + op->microbatch, wake = -1;
            if (op->kind == PPSIM_OP_F) {
                end[d] = tf[k] = start + st->f_ps;
                mem[d] += st->act;
                *peak = MAX(*peak, mem[d]);
                if (limit != NULL && limit[d] > 0 && mem[d] > limit[d])
                    return FALSE;
                wake = op->stage + 1;
            } else if (op->kind == PPSIM_OP_B) {
                end[d] = tb[k] = start + st->b_ps;
                mem[d] -= st->act - st->act_w;
                wake = op->stage - 1;
            } else {
                end[d] = start + st->w_ps;
                mem[d] -= st->act_w;
            }
            bound->n_ops++;
            if (bounded) {
                rest[d] -= end[d] - start;
                if ((bound->makespan > 0 && end[d] + rest[d] > bound->makespan) ||
                    (bound->span > 0 && end[d] + rest[d] - first[d] > bound->span)) {
                    bound->stopped = TRUE;
                    return FALSE;
                }
            }
            if (wake >= 0 && wake < S && wake != d && !queued[wake]) {
                queue[(head + n_queued++) % S] = wake;
                queued[wake] = TRUE;
            }
        }
    }
    for (int d = 0; d < S; d++) {
        if (pos[d] < sched->compute[d]->len)
            return FALSE; /* deadlock */
        if (sched->compute[d]->len == 0)
            continue;
        *makespan = MAX(*makespan, end[d]);
        *span = MAX(*span, end[d] - first[d]);
    }
    return TRUE;
}
