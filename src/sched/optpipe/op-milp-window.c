/* op-milp-window.c: a rolling-horizon window of OptPipe's MILP (op-rolling.c): which of the
 * model's binaries and times a window fixes to the warm start, and which rows it can leave
 * out because the fixed part implies them. Without a window everything is free. */
#include "sched/optpipe/op-milp-model.h"
#include "sched/optpipe/op-milp.h"
#include "sched/co-schedule.h"
#include "util/ppsim-error.h"

#include <stdlib.h>

/* The order "op (@ka, @a) runs before op (@kb, @b)" on device @i: -1 when free (no window, or
 * both ops open), else the warm start's (1 or 0). */
int
ppsim_op_fx_order(const OpModel *mo, int i, int ka, int a, int kb, int b)
{
    const OpFix *f = mo->fix;
    if (f == NULL || (f->open[CI(mo, i, ka, a)] && f->open[CI(mo, i, kb, b)]))
        return -1;
    return f->cpos[CI(mo, i, ka, a)] < f->cpos[CI(mo, i, kb, b)];
}

/* Whether a fixed order between those two ops needs its precedence row: the closed ops are
 * one chain (each after the one before it in the warm start's list) and the open run sits
 * between the closed ops at lo - 1 and hi; every other fixed order follows from those rows
 * and the ones every model has (dependencies, each kind in microbatch order). */
gboolean
ppsim_op_fx_needed(const OpModel *mo, int i, int ka, int a, int kb, int b)
{
    const OpFix *f = mo->fix;
    if (f == NULL)
        return TRUE;
    gboolean oa = f->open[CI(mo, i, ka, a)], ob = f->open[CI(mo, i, kb, b)];
    int pa = f->cpos[CI(mo, i, ka, a)], pb = f->cpos[CI(mo, i, kb, b)];
    int lo = f->lo[i], hi = f->hi[i];
    if (oa && ob)
        return TRUE;
    if (oa || ob) {
        int closed = oa ? pb : pa;
        return closed == lo - 1 || closed == hi;
    }
    int x = MIN(pa, pb), y = MAX(pa, pb);
    return y == x + 1 || (x == lo - 1 && y == hi);
}

/* Whether the rows ordering copy ops @ca and @cb (indices in [2m]: OFF j, then RL j) of
 * device @i are needed: not when both choices are fixed and the two are not neighbours
 * among the fixed copy ops (the chain of neighbours implies the rest). */
gboolean
ppsim_op_fx_copy_needed(const OpModel *mo, int i, int ca, int cb)
{
    const OpFix *f = mo->fix;
    if (f == NULL)
        return TRUE;
    int ra = f->xrank[i * 2 * mo->m + ca], rb = f->xrank[i * 2 * mo->m + cb];
    return ra < 0 || rb < 0 || abs(ra - rb) == 1;
}

int
ppsim_op_fx_x(const OpModel *mo, int i, int j)
{
    return mo->fix == NULL ? -1 : mo->fix->xfix[AT(mo, i, j)];
}

/* The value of z (microbatch @b away on the host around compute op (@kx, @jx), which needs
 * the order binaries @need1 = 1 and @need0 = 0; -1: none): -1 when free (no window, or the
 * op is open and b's offload is possible), 0 when b is not offloaded or the order rules it
 * out, else the warm start's. */
int
ppsim_op_fx_away(const OpModel *mo, int i, int b, int kx, int jx, int need1, int need0)
{
    const OpFix *f = mo->fix;
    if (f == NULL)
        return -1;
    if (f->xfix[AT(mo, i, b)] == 0 || need1 == K0 || need0 == K1)
        return 0;
    /* free where the op is open and b's offload can change (its choice, or an open F or B,
     * whose copy ops then move with the window); else the warm start's */
    if (f->open[CI(mo, i, kx, jx)] &&
        (f->xfix[AT(mo, i, b)] < 0 || f->open[CI(mo, i, 0, b)] || f->open[CI(mo, i, 1, b)]))
        return -1;
    int m = mo->m, ob = f->xpos[i * 2 * m + b], rb = f->xpos[i * 2 * m + m + b];
    if (ob < 0 || rb < 0)
        return 0;
    guint32 cb = ppsim_schedule_index_base(f->idx, i, 0),
            xb = ppsim_schedule_index_base(f->idx, i, 1);
    guint32 x = cb + f->cpos[CI(mo, i, kx, jx)];
    return f->en[xb + ob] <= f->st[x] && f->st[xb + rb] >= f->en[x];
}

/* In a window, the first and last compute op (list positions) around which each microbatch
 * is fixed away (fx_away = 1) on device @i. */
void
ppsim_op_fix_away_span(const OpModel *mo, int i)
{
    OpFix *f = mo->fix;
    int m = mo->m;
    for (int j = 0; j < m; j++)
        f->zfirst[AT(mo, i, j)] = f->zlast[AT(mo, i, j)] = -1;
    for (int a = 1; a < m; a++)
        for (int b = 0; b < a; b++) {
            int k = AT2(mo, i, a, b);
            /* (microbatch, kind of op, its microbatch) for zF, zB, zW */
            int v[3][3] = {{b, 0, a}, {a, 1, b}, {a, 2, b}};
            int val[3] = {ppsim_op_fx_away(mo, i, b, 0, a, mo->yFB[k], -1),
                          ppsim_op_fx_away(mo, i, a, 1, b, mo->yFB[k], -1),
                          ppsim_op_fx_away(mo, i, a, 2, b, mo->yFW[k], mo->yBW[k])};
            for (int q = 0; q < 3; q++) {
                if (val[q] != 1)
                    continue;
                int kb = AT(mo, i, v[q][0]), pos = f->cpos[CI(mo, i, v[q][1], v[q][2])];
                if (f->zfirst[kb] < 0 || pos < f->zfirst[kb])
                    f->zfirst[kb] = pos;
                f->zlast[kb] = MAX(f->zlast[kb], pos);
            }
        }
}

/* An Eq. 18 order in a window: free when either offload choice is, else the warm start's. */
int
ppsim_op_fx_switch(const OpModel *mo, int i1, int j1, int i2, int j2, int dir)
{
    const OpFix *f = mo->fix;
    if (f == NULL || f->xfix[AT(mo, i1, j1)] < 0 || f->xfix[AT(mo, i2, j2)] < 0)
        return -1;
    int m = mo->m, a = f->xpos[i1 * 2 * m + dir * m + j1], b = f->xpos[i2 * 2 * m + dir * m + j2];
    if (a < 0 || b < 0)
        return 0;
    return f->st[ppsim_schedule_index_base(f->idx, i1, 1) + a] <
           f->st[ppsim_schedule_index_base(f->idx, i2, 1) + b];
}

/* In a window, fixes time column @c to the warm start's when that op (index @op in the warm
 * start's schedule index) starts before the window. */
void
ppsim_op_fix_past(OpModel *mo, int c, gint64 op)
{
    if (mo->fix == NULL || op < 0 || mo->fix->st[op] >= mo->fix->t0)
        return;
    g_array_index(mo->cfix, double, c) = op_ms(mo->fix->st[op]);
}

/* Position of each op of device @d in its list, per kind and microbatch ([3][m] compute,
 * [2][m] copy; -1 when absent). FALSE when the list is not in the model's shape. */
gboolean
ppsim_op_positions(const PpsimSchedule *s, int d, int *cpos, int *xpos)
{
    int m = s->n_microbatches;
    for (int k = 0; k < 3 * m; k++)
        cpos[k] = -1;
    for (int k = 0; k < 2 * m; k++)
        xpos[k] = -1;
    for (guint i = 0; i < s->compute[d]->len; i++) {
        const PpsimOp *op = &g_array_index(s->compute[d], PpsimOp, i);
        int kind = op->kind == PPSIM_OP_F ? 0 : op->kind == PPSIM_OP_B ? 1 : 2;
        if (op->kind != PPSIM_OP_F && op->kind != PPSIM_OP_B && op->kind != PPSIM_OP_W)
            return FALSE;
        cpos[kind * m + op->microbatch] = (int)i;
    }
    for (guint i = 0; i < s->copy[d]->len; i++) {
        const PpsimOp *op = &g_array_index(s->copy[d], PpsimOp, i);
        xpos[(op->kind == PPSIM_OP_RL) * m + op->microbatch] = (int)i;
    }
    for (int kind = 0; kind < 3; kind++) /* the model's fixed microbatch order */
        for (int j = 0; j + 1 < m; j++)
            if (cpos[kind * m + j] < 0 || cpos[kind * m + j] > cpos[kind * m + j + 1])
                return FALSE;
    return TRUE;
}

void
ppsim_op_fix_free(OpFix *f)
{
    if (f == NULL)
        return;
    g_free(f->cpos), g_free(f->xpos), g_free(f->open), g_free(f->lo), g_free(f->hi);
    g_free(f->xfix), g_free(f->xrank), g_free(f->st), g_free(f->en);
    g_free(f->zfirst), g_free(f->zlast);
    if (f->idx != NULL)
        ppsim_schedule_index_free(f->idx);
    g_free(f);
}

gboolean
ppsim_op_milp_shape_ok(const PpsimSchedule *s, gboolean offload)
{
    int m = s->n_microbatches;
    g_autofree int *cpos = g_new(int, 3 * m), *xpos = g_new(int, 2 * m);
    for (int i = 0; i < s->n_devices; i++)
        if (!ppsim_op_positions(s, i, cpos, xpos) || (!offload && s->copy[i]->len > 0))
            return FALSE;
    return TRUE;
}

/* The window [t0, t1) on @warm's estimated timeline (see OpFix). */
OpFix *
ppsim_op_fix_new(const OpModel *mo, const PpsimSchedule *warm, const PpsimCostEstimates *c,
                 PpsimTime t0, PpsimTime t1, GError **error)
{
    int p = mo->p, m = mo->m;
    if (!ppsim_op_milp_shape_ok(warm, mo->off)) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "a window's warm start is not in the model's shape");
        return NULL;
    }
    OpFix *f = g_new0(OpFix, 1);
    f->t0 = t0;
    f->idx = ppsim_schedule_index_new(warm, error);
    if (f->idx == NULL) {
        ppsim_op_fix_free(f);
        return NULL;
    }
    guint32 n = ppsim_schedule_index_n_ops(f->idx);
    f->st = g_new(PpsimTime, n + 1), f->en = g_new(PpsimTime, n + 1);
    if (!ppsim_schedule_estimate(warm, f->idx, c, f->st, f->en, NULL, error)) {
        ppsim_op_fix_free(f);
        return NULL;
    }
    f->cpos = g_new(int, (gsize)p * 3 * m), f->xpos = g_new(int, (gsize)p * 2 * m);
    f->open = g_new0(guint8, (gsize)p * 3 * m);
    f->lo = g_new(int, p), f->hi = g_new(int, p);
    f->xfix = g_new(int, (gsize)p *m), f->xrank = g_new(int, (gsize)p * 2 * m);
    f->zfirst = g_new(int, (gsize)p *m), f->zlast = g_new(int, (gsize)p *m);
    for (int i = 0; i < p; i++) {
        int *cpos = f->cpos + (gsize)i * 3 * m, *xpos = f->xpos + (gsize)i * 2 * m;
        ppsim_op_positions(warm, i, cpos, xpos);
        guint32 cb = ppsim_schedule_index_base(f->idx, i, 0);
        int len = (int)warm->compute[i]->len;
        f->lo[i] = len, f->hi[i] = 0;
        for (int k = 0; k < 3 * m; k++) {
            PpsimTime t = f->st[cb + cpos[k]];
            if (t >= t0 && t < t1) {
                f->open[i * 3 * m + k] = 1;
                f->lo[i] = MIN(f->lo[i], cpos[k]);
                f->hi[i] = MAX(f->hi[i], cpos[k] + 1);
            }
        }
        if (f->lo[i] > f->hi[i]) /* nothing open: an empty run */
            f->lo[i] = f->hi[i] = 0;
        for (int j = 0; j < m; j++) {
            gboolean free_x = mo->off && f->open[CI(mo, i, 0, j)] && f->open[CI(mo, i, 1, j)];
            f->xfix[AT(mo, i, j)] = free_x ? -1 : xpos[j] >= 0;
        }
        for (int k = 0; k < 2 * m; k++)
            f->xrank[i * 2 * m + k] = -1;
        int r = 0;
        for (guint q = 0; q < warm->copy[i]->len; q++) {
            const PpsimOp *op = &g_array_index(warm->copy[i], PpsimOp, q);
            if (f->xfix[AT(mo, i, op->microbatch)] >= 0)
                f->xrank[i * 2 * m + (op->kind == PPSIM_OP_RL) * m + op->microbatch] = r++;
        }
    }
    return f;
}
