/* op-milp-extract.c: OptPipe's MILP and schedule IR both ways: a warm start's orders,
 * offload choices and away indicators as the MIP start, and the solver's incumbent as a
 * schedule (ops in the order of their start times, reloads anchored, the offload waits and
 * Eq. 18's cross-device waits that keep the replay to the model). */
#include "sched/optpipe/op-milp-model.h"
#include "sched/co-schedule.h"

#include <stdlib.h>

/* A MIP start value, for a column (a window's fixed binaries have none). */
static void
set_start(PpsimMilp *milp, int c, double v)
{
    if (c >= 0)
        ppsim_milp_set_start(milp, c, v);
}

/* Whether microbatch @b (copy positions @xpos, ids from @xb) is on the host for the whole
 * of op @x on the estimated timeline @st, @en. */
static gboolean
start_away(const int *xpos, guint32 xb, int m, int b, const PpsimTime *st, const PpsimTime *en,
           guint32 x)
{
    int ob = xpos[b], rb = xpos[m + b];
    return ob >= 0 && rb >= 0 && en[xb + ob] <= st[x] && st[xb + rb] >= en[x];
}

/* The warm start's binaries (CBC completes the times): its orders, its offload choices, and
 * z where its estimated timeline has b on the host around F(a). */
void
ppsim_op_model_start(PpsimMilp *milp, const OpModel *mo, const PpsimSchedule *warm,
                     const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(warm, NULL);
    if (idx == NULL)
        return;
    guint32 n = ppsim_schedule_index_n_ops(idx);
    g_autofree PpsimTime *st = g_new(PpsimTime, n + 1), *en = g_new(PpsimTime, n + 1);
    if (!ppsim_schedule_estimate(warm, idx, c, st, en, NULL, NULL))
        return;
    g_autofree int *cpos = g_new(int, 3 * m), *xpos = g_new(int, 2 * m);
    for (int i = 0; i < p; i++)
        if (!ppsim_op_positions(warm, i, cpos, xpos) || (!mo->off && warm->copy[i]->len > 0))
            return;
    for (int i = 0; i < p; i++) {
        ppsim_op_positions(warm, i, cpos, xpos);
        guint32 cb = ppsim_schedule_index_base(idx, i, 0),
                xb = ppsim_schedule_index_base(idx, i, 1);
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) {
                int k = AT2(mo, i, a, b);
                set_start(milp, mo->yFB[k], cpos[a] < cpos[m + b]);
                set_start(milp, mo->yFW[k], cpos[a] < cpos[2 * m + b]);
                set_start(milp, mo->yBW[k], cpos[m + a] < cpos[2 * m + b]);
                if (!mo->off)
                    continue;
                int oa = xpos[a], rb = xpos[m + b];
                set_start(milp, mo->h[k], oa >= 0 && rb >= 0 && oa < rb);
                /* b away around F(a); a away around B(b), W(b) */
                guint32 f = cb + cpos[a], bb = cb + cpos[m + b], wb = cb + cpos[2 * m + b];
                set_start(milp, mo->zF[k], start_away(xpos, xb, m, b, st, en, f));
                set_start(milp, mo->zB[k], start_away(xpos, xb, m, a, st, en, bb));
                set_start(milp, mo->zW[k], start_away(xpos, xb, m, a, st, en, wb));
            }
        for (int j = 0; mo->off && j < m; j++)
            set_start(milp, mo->X[AT(mo, i, j)], xpos[j] >= 0);
    }
    g_autofree int *xpos2 = g_new(int, 2 * m);
    for (guint k = 0; mo->pairs != NULL && k < mo->pairs->len; k++) {
        const OpSwitchPair *sp = &g_array_index(mo->pairs, OpSwitchPair, k);
        ppsim_op_positions(warm, sp->i1, cpos, xpos);
        ppsim_op_positions(warm, sp->i2, cpos, xpos2);
        int a = xpos[sp->dir * m + sp->j1], b = xpos2[sp->dir * m + sp->j2];
        gboolean first = a >= 0 && b >= 0 &&
                         st[ppsim_schedule_index_base(idx, sp->i1, 1) + a] <
                             st[ppsim_schedule_index_base(idx, sp->i2, 1) + b];
        set_start(milp, sp->col, first);
    }
}

typedef struct {
    double t;
    int device, index;
} LinkTransfer;

static int
link_cmp(const void *x, const void *y)
{
    const LinkTransfer *a = x, *b = y;
    if (fabs(a->t - b->t) > 1e-7)
        return a->t < b->t ? -1 : 1;
    return a->device != b->device ? a->device - b->device : a->index - b->index;
}

/* Eq. 18 in the replay: on each shared switch, each transfer of one direction waits for the
 * one before it (in the solution's order) when that one is another GPU's. */
static void
extract_switch(PpsimSchedule *s, const OpModel *mo, const PpsimCostEstimates *c, const double *x)
{
    g_autoptr(GArray) ts = g_array_new(FALSE, FALSE, sizeof(LinkTransfer));
    for (int link = 0; link < mo->p; link++)
        for (int dir = 0; dir < 2; dir++) {
            g_array_set_size(ts, 0);
            for (int i = 0; i < mo->p; i++) {
                if (c->host_link[i] != link)
                    continue;
                for (guint k = 0; k < s->copy[i]->len; k++) {
                    const PpsimOp *op = &g_array_index(s->copy[i], PpsimOp, k);
                    if ((op->kind == PPSIM_OP_RL) != dir)
                        continue;
                    const int *t = dir == 0 ? mo->O : mo->R;
                    LinkTransfer lt = {op_tval(mo, x, t[AT(mo, i, op->microbatch)]), i, (int)k};
                    g_array_append_val(ts, lt);
                }
            }
            if (ts->len > 1)
                qsort(ts->data, ts->len, sizeof(LinkTransfer), link_cmp);
            for (guint k = 1; k < ts->len; k++) {
                const LinkTransfer *a = &g_array_index(ts, LinkTransfer, k - 1);
                const LinkTransfer *b = &g_array_index(ts, LinkTransfer, k);
                if (a->device != b->device)
                    ppsim_schedule_add_copy_sync(s, b->device, b->index, a->device, a->index);
            }
        }
}

typedef struct {
    double t;
    int rank; /* tie-break: kind order within a microbatch, then microbatch */
    PpsimOp op;
} TimedOp;

static int
timed_cmp(const void *x, const void *y)
{
    const TimedOp *a = x, *b = y;
    if (fabs(a->t - b->t) > 1e-7)
        return a->t < b->t ? -1 : 1;
    return a->rank - b->rank;
}

/* The incumbent as IR: each device's ops in the order of their start times; each reload
 * anchored to the last compute op that ends by its start. */
PpsimSchedule *
ppsim_op_model_extract(const OpModel *mo, const PpsimCostEstimates *c, const double *x)
{
    int p = mo->p, m = mo->m;
    PpsimSchedule *s = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(s);
    g_autofree TimedOp *ops = g_new(TimedOp, 3 * m);
    g_autofree double *ends = g_new(double, 3 * m);
    /* the solver's times are exact only to its tolerances (a big-M row with a binary at
     * 1 - 1e-6 moves a time by 1e-6 M): comparisons of times allow that much */
    double eps = 1e-6 * mo->big_m;
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        const int *col[3] = {mo->sF, mo->sB, mo->sW};
        const PpsimOpKind kinds[3] = {PPSIM_OP_F, PPSIM_OP_B, PPSIM_OP_W};
        int n = 0;
        for (int kind = 0; kind < 3; kind++)
            for (int j = 0; j < m; j++)
                ops[n++] = (TimedOp){op_tval(mo, x, col[kind][AT(mo, i, j)]),
                                     j * 3 + kind,
                                     {.kind = kinds[kind], .stage = i, .microbatch = j}};
        qsort(ops, n, sizeof(TimedOp), timed_cmp);
        for (int k = 0; k < n; k++) {
            ppsim_schedule_push_op(s, i, ops[k].op);
            ends[k] = ops[k].t + op_ms(ppsim_estimate_op_ps(c, &ops[k].op));
        }
        if (!mo->off)
            continue;
        g_autofree TimedOp *cp = g_new(TimedOp, 2 * m);
        int nc = 0;
        for (int j = 0; j < m; j++)
            if (op_value(x, mo->X[AT(mo, i, j)]) > 0.5) {
                PpsimOp off = {.kind = PPSIM_OP_OFF, .stage = i, .microbatch = j};
                cp[nc++] = (TimedOp){op_tval(mo, x, mo->O[AT(mo, i, j)]), 2 * j, off};
                off.kind = PPSIM_OP_RL;
                cp[nc++] = (TimedOp){op_tval(mo, x, mo->R[AT(mo, i, j)]), 2 * j + 1, off};
            }
        qsort(cp, nc, sizeof(TimedOp), timed_cmp);
        g_autofree int *wait = g_new(int, n); /* per compute op: the latest OFF it waits for */
        for (int q = 0; q < n; q++)
            wait[q] = -1;
        for (int k = 0; k < nc; k++) {
            int anchor = -1;
            if (cp[k].op.kind == PPSIM_OP_RL)
                for (int q = 0; q < n; q++)
                    if (ends[q] <= cp[k].t + eps)
                        anchor = q;
            ppsim_schedule_push_copy(s, i, cp[k].op, anchor);
            if (cp[k].op.kind != PPSIM_OP_OFF)
                continue;
            /* the first compute op that starts once the offload has ended waits for it: the
             * model counts the activation away from there on, and without the wait the
             * replay (every op as early as it can) may start that op while the copy runs */
            double off_end = cp[k].t + op_ms(st->off_ps);
            for (int q = 0; q < n; q++)
                if (ops[q].t >= off_end - eps) {
                    wait[q] = MAX(wait[q], k);
                    break;
                }
        }
        for (int q = 0; q < n; q++)
            if (wait[q] >= 0)
                ppsim_schedule_add_compute_wait(s, i, q, wait[q]);
    }
    if (mo->pairs != NULL)
        extract_switch(s, mo, c, x);
    return s;
}
