/* op-milp.c: OptPipe's MILP ([OP] App. C) with the §4.1 reductions; see op-milp.h.
 *
 * Device i runs stage i. Times are start times in ms (App. C uses end times E; a start is
 * E - T). Per device and microbatch: sF, sB, sW; with offload a binary X (App. C's W(i,j,c))
 * and the start times O and R of the offload and the reload. Ordering binaries exist only
 * where the order is not already fixed ([OP] §4.1.1): each kind runs in microbatch order
 * (fixed micro-batch order), F(a) precedes B(b), W(b) for a <= b and B(a) precedes W(b) for
 * a <= b (implied by the dependencies), so yFB, yFW, yBW are defined for a > b only (the
 * upper triangle); their complements are implied (symmetry). The triangle cuts of §4.1.2
 * are added on the implied chains (F(a) < B(b) => F(a-1) < B(b), F(a) < B(b+1), F(a) < W(b);
 * F(a) < B(c) and B(c) < W(b) => F(a) < W(b)).
 *
 * Memory ([OP] Eq. 9) is checked when each F starts (the only compute op that allocates):
 * the device holds act for every F started, less what each earlier microbatch b has freed
 * by then (B before F(a): act - act_w; W before F(a): act_w) and less act for every b that
 * is away on the host (z(a, b): offloaded, its OFF ended before F(a) starts and its RL
 * starts after F(a) ends). The reload is anchored to the last compute op ending before its
 * start, so the replay never reloads earlier than the model counted it; the first compute
 * op starting after an offload ends waits for it (schedule.h compute_wait), so the replay,
 * every op as early as it can, never allocates before the model's offload has freed (see
 * model_queued for the reloads that start in idle gaps). One copy stream per
 * device carries OFF and RL (Eqs. 10-13, with the same fixed microbatch order), the reload
 * ends before its B (Eq. 15), the offload starts after its F (Eq. 14). Eq. 18: where GPUs
 * share a PCIe switch whose uplink they can oversubscribe (hardware mode; explicit mode has
 * no switches), no two of their transfers of one direction overlap; the schedule then
 * carries cross-device waits in the solution's order, so the replay keeps them apart too.
 */
#include "sched/optpipe/op-milp.h"
#include "sched/optpipe/op-milp-model.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

/* Adds sum(coefs[k] x[cols[k]]) @sense @rhs. In a window the fixed binaries (K0, K1) move
 * to the right-hand side, and a row left without columns, or that the columns' bounds
 * already satisfy (a big-M row whose binary is fixed the other way), is not added. */
static void
emit(PpsimMilp *milp, const OpModel *mo, int n, const int *cols, const double *coefs, char sense,
     double rhs)
{
    if (mo->fix == NULL) {
        ppsim_milp_add_row(milp, n, cols, coefs, sense, rhs);
        return;
    }
    int k2 = 0;
    double lo = 0, hi = 0;
    for (int k = 0; k < n; k++) {
        if (cols[k] == K0)
            continue;
        if (cols[k] == K1) {
            rhs -= coefs[k];
            continue;
        }
        double fixed = g_array_index(mo->cfix, double, cols[k]);
        if (!isnan(fixed)) {
            rhs -= coefs[k] * fixed;
            continue;
        }
        double u = g_array_index(mo->ub, double, cols[k]);
        lo += MIN(0, coefs[k] * u);
        hi += MAX(0, coefs[k] * u);
        mo->scols[k2] = cols[k];
        mo->scoefs[k2++] = coefs[k];
    }
    if (k2 == 0 || (sense == 'G' && lo >= rhs) || (sense == 'L' && hi <= rhs))
        return;
    ppsim_milp_add_row(milp, k2, mo->scols, mo->scoefs, sense, rhs);
}

/* sum(coef_k x_k) sense rhs, from @n (col, coef) pairs. */
static void
row(PpsimMilp *milp, const OpModel *mo, char sense, double rhs, int n, ...)
{
    int cols[8];
    double coefs[8];
    va_list ap;
    va_start(ap, n);
    for (int k = 0; k < n; k++) {
        cols[k] = va_arg(ap, int);
        coefs[k] = va_arg(ap, double);
    }
    va_end(ap);
    emit(milp, mo, n, cols, coefs, sense, rhs);
}

/* A column with bounds [0, @ub]. */
static int
col(PpsimMilp *milp, OpModel *mo, double ub, double obj, gboolean integer)
{
    double free_ = NAN;
    g_array_append_val(mo->ub, ub);
    g_array_append_val(mo->cfix, free_);
    return ppsim_milp_add_col(milp, 0, ub, obj, integer);
}

/* x_to >= x_from + d (a precedence). */
static void
after(PpsimMilp *milp, const OpModel *mo, int to, int from, double d)
{
    row(milp, mo, 'G', d, 2, to, 1.0, from, -1.0);
}

/* A binary column, or in a window the constant @fixed (0 or 1) when it is not < 0. */
static int
binary(PpsimMilp *milp, OpModel *mo, int fixed)
{
    if (fixed >= 0)
        return fixed ? K1 : K0;
    mo->n_bin++;
    return col(milp, mo, 1, 0, TRUE);
}

/* Either x_a runs (for @da) before x_b, when y = 1, or x_b (for @db) before x_a. */
static void
disjoint(PpsimMilp *milp, const OpModel *mo, int y, int a, double da, int b, double db)
{
    /* y = 1: b >= a + da;  y = 0: a >= b + db */
    row(milp, mo, 'G', da - mo->big_m, 3, b, 1.0, a, -1.0, y, -mo->big_m);
    row(milp, mo, 'G', db, 3, a, 1.0, b, -1.0, y, mo->big_m);
}

static void
model_free(OpModel *mo)
{
    g_free(mo->sF), g_free(mo->sB), g_free(mo->sW), g_free(mo->O), g_free(mo->R);
    g_free(mo->X), g_free(mo->yFB), g_free(mo->yFW), g_free(mo->yBW), g_free(mo->h);
    g_free(mo->zF), g_free(mo->zB), g_free(mo->zW);
    g_free(mo->scols), g_free(mo->scoefs);
    if (mo->ub != NULL)
        g_array_free(mo->ub, TRUE);
    if (mo->cfix != NULL)
        g_array_free(mo->cfix, TRUE);
    ppsim_op_fix_free(mo->fix);
    if (mo->pairs != NULL)
        g_array_free(mo->pairs, TRUE);
}

static int *
neg_ints(gsize n)
{
    int *v = g_new(int, n);
    for (gsize k = 0; k < n; k++)
        v[k] = -1;
    return v;
}

/* A window's second objective: the open ops' start times, weighted so that together they
 * weigh at most 1e-2 of the horizon, so that among schedules of one makespan the window
 * prefers the one whose open ops start earliest (what the next window builds on). 0 for
 * the other ops and without a window. */
static double
op_pull(const OpModel *mo, int i, int k, int j)
{
    if (mo->fix == NULL || !mo->fix->open[CI(mo, i, k, j)])
        return 0;
    return 1e-2 / (3.0 * mo->p * mo->m);
}

/* Columns, precedences and the compute-stream disjunctions with their cuts. */
static void
model_compute(PpsimMilp *milp, OpModel *mo, const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    double H = mo->horizon;
    mo->C = col(milp, mo, H, 1.0, FALSE);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < m; j++) {
            mo->sF[AT(mo, i, j)] = col(milp, mo, H, op_pull(mo, i, 0, j), FALSE);
            mo->sB[AT(mo, i, j)] = col(milp, mo, H, op_pull(mo, i, 1, j), FALSE);
            mo->sW[AT(mo, i, j)] = col(milp, mo, H, op_pull(mo, i, 2, j), FALSE);
            if (mo->fix != NULL) {
                guint32 cb = ppsim_schedule_index_base(mo->fix->idx, i, 0);
                ppsim_op_fix_past(mo, mo->sF[AT(mo, i, j)], cb + mo->fix->cpos[CI(mo, i, 0, j)]);
                ppsim_op_fix_past(mo, mo->sB[AT(mo, i, j)], cb + mo->fix->cpos[CI(mo, i, 1, j)]);
                ppsim_op_fix_past(mo, mo->sW[AT(mo, i, j)], cb + mo->fix->cpos[CI(mo, i, 2, j)]);
            }
        }
    double comm = op_ms(c->comm_ps);
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double tf = op_ms(st->f_ps), tb = op_ms(st->b_ps), tw = op_ms(st->w_ps);
        for (int j = 0; j < m; j++) {
            int f = mo->sF[AT(mo, i, j)], b = mo->sB[AT(mo, i, j)], w = mo->sW[AT(mo, i, j)];
            if (i > 0) /* Eq. 5 */
                after(milp, mo, f, mo->sF[AT(mo, i - 1, j)], op_ms(c->stage[i - 1].f_ps) + comm);
            if (i < p - 1) /* Eq. 6 */
                after(milp, mo, b, mo->sB[AT(mo, i + 1, j)], op_ms(c->stage[i + 1].b_ps) + comm);
            after(milp, mo, b, f, tf); /* Eq. 8 */
            after(milp, mo, w, b, tb);
            if (j + 1 < m) { /* fixed microbatch order */
                after(milp, mo, mo->sF[AT(mo, i, j + 1)], f, tf);
                after(milp, mo, mo->sB[AT(mo, i, j + 1)], b, tb);
                after(milp, mo, mo->sW[AT(mo, i, j + 1)], w, tw);
            }
        }
        if (mo->stage_span) {
            /* Eq. 3: C >= E(i, m, W) - (E(i, 1, F) - T(i, 1, F)), the span from F(0) to the
             * last W; F(0) starts as soon as its input is there, as in the replay (which
             * cannot hold a device back), so the replay's span is the model's */
            row(milp, mo, 'G', tw, 3, mo->C, 1.0, mo->sW[AT(mo, i, m - 1)], -1.0,
                mo->sF[AT(mo, i, 0)], 1.0);
            if (i > 0)
                row(milp, mo, 'L', op_ms(c->stage[i - 1].f_ps) + comm, 2, mo->sF[AT(mo, i, 0)], 1.0,
                    mo->sF[AT(mo, i - 1, 0)], -1.0);
            else
                row(milp, mo, 'L', 0, 1, mo->sF[AT(mo, 0, 0)], 1.0);
            /* the cut for the LP bound: the span holds all of the device's work */
            row(milp, mo, 'G', m * (tf + tb + tw), 1, mo->C, 1.0);
        } else {
            row(milp, mo, 'G', tw, 2, mo->C, 1.0, mo->sW[AT(mo, i, m - 1)], -1.0); /* Eq. 4 */
            /* a cut for the LP bound (valid: every op of device i starts after its F(0) and
             * they run one at a time): C >= sF(i, 0) + m (F + B + W) */
            row(milp, mo, 'G', m * (tf + tb + tw), 2, mo->C, 1.0, mo->sF[AT(mo, i, 0)], -1.0);
        }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* Eq. 7 where the order is open */
                int k = AT2(mo, i, a, b);
                mo->yFB[k] = binary(milp, mo, ppsim_op_fx_order(mo, i, 0, a, 1, b));
                mo->yFW[k] = binary(milp, mo, ppsim_op_fx_order(mo, i, 0, a, 2, b));
                mo->yBW[k] = binary(milp, mo, ppsim_op_fx_order(mo, i, 1, a, 2, b));
                if (ppsim_op_fx_needed(mo, i, 0, a, 1, b))
                    disjoint(milp, mo, mo->yFB[k], mo->sF[AT(mo, i, a)], tf, mo->sB[AT(mo, i, b)],
                             tb);
                if (ppsim_op_fx_needed(mo, i, 0, a, 2, b))
                    disjoint(milp, mo, mo->yFW[k], mo->sF[AT(mo, i, a)], tf, mo->sW[AT(mo, i, b)],
                             tw);
                if (ppsim_op_fx_needed(mo, i, 1, a, 2, b))
                    disjoint(milp, mo, mo->yBW[k], mo->sB[AT(mo, i, a)], tb, mo->sW[AT(mo, i, b)],
                             tw);
            }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* §4.1.2: transitivity on the implied chains */
                int k = AT2(mo, i, a, b);
                row(milp, mo, 'L', 0, 2, mo->yFB[k], 1.0, mo->yFW[k], -1.0);
                if (a - 1 > b) {
                    row(milp, mo, 'L', 0, 2, mo->yFB[k], 1.0, mo->yFB[AT2(mo, i, a - 1, b)], -1.0);
                    row(milp, mo, 'L', 0, 2, mo->yFW[k], 1.0, mo->yFW[AT2(mo, i, a - 1, b)], -1.0);
                    row(milp, mo, 'L', 0, 2, mo->yBW[k], 1.0, mo->yBW[AT2(mo, i, a - 1, b)], -1.0);
                }
                if (b + 1 < a) {
                    row(milp, mo, 'L', 0, 2, mo->yFB[k], 1.0, mo->yFB[AT2(mo, i, a, b + 1)], -1.0);
                    row(milp, mo, 'L', 0, 2, mo->yFW[k], 1.0, mo->yFW[AT2(mo, i, a, b + 1)], -1.0);
                    row(milp, mo, 'L', 0, 2, mo->yBW[k], 1.0, mo->yBW[AT2(mo, i, a, b + 1)], -1.0);
                }
                for (int cc = b + 1; cc < a; cc++) /* F(a) < B(cc) < W(b) */
                    row(milp, mo, 'G', -1, 3, mo->yFW[k], 1.0, mo->yFB[AT2(mo, i, a, cc)], -1.0,
                        mo->yBW[AT2(mo, i, cc, b)], -1.0);
            }
    }
}

/* z = 1 only if microbatch @b of device @i is away on the host for the whole of the compute
 * op starting at column @x and lasting @dur: offloaded, its OFF ended by x's start, its RL
 * starting after x's end (so the reload, anchored to the last op ending before it, can
 * never start earlier in the replay). */
static int
model_away(PpsimMilp *milp, OpModel *mo, int i, int b, int x, double dur, double to, int fixed,
           int pos)
{
    double M = mo->big_m;
    int kb = AT(mo, i, b);
    int z = binary(milp, mo, fixed);
    row(milp, mo, 'L', 0, 2, z, 1.0, mo->X[kb], -1.0);
    /* fixed away in a window: the first such op's row implies the later ones' (each starts
     * after it), the last one's the earlier ones' */
    if (fixed != 1 || pos == mo->fix->zfirst[kb])
        row(milp, mo, 'L', M - to, 3, mo->O[kb], 1.0, x, -1.0, z, M);
    if (fixed != 1 || pos == mo->fix->zlast[kb])
        row(milp, mo, 'G', dur - M, 3, mo->R[kb], 1.0, x, -1.0, z, -M);
    return z;
}

/* An offload queued behind a reload on the copy stream. The memory rows are checked at
 * compute-op starts, and a reload starting in the idle gap before compute op x is counted
 * at x; an offload that the copy stream runs after that reload and that ends in the same
 * gap frees its memory only after the reload has allocated, so it must not be counted away
 * at x. For c away at x (z = 1) and every offloaded b < c whose reload may start in the gap
 * before x (b's B runs after x), OFF(c) precedes RL(b) (h(c, b) = 1):
 *   x = B(e):  zB(c, e) <= h(c, b) + 1 - X(b)                 for e <= b < c
 *   x = W(e):  zW(c, e) <= h(c, b) + 1 - X(b) + yBW(b, e)     for e < b < c
 *   x = F(a):  zF(a, c) <= h(c, b) + 1 - X(b) + 1 - yFB(a, b) for b < c < a
 * (B(e) at b = e: its own reload precedes it; for b < e, B(b) runs between RL(b) and B(e)).
 * These use only orders (the copy list, the compute list), which the replay keeps. */
static void
model_queued(PpsimMilp *milp, const OpModel *mo, int i)
{
    int m = mo->m;
    for (int c = 1; c < m; c++)
        for (int b = 0; b < c; b++) {
            int h = mo->h[AT2(mo, i, c, b)], xb = mo->X[AT(mo, i, b)];
            for (int e = 0; e <= b; e++) /* c away at B(e) */
                row(milp, mo, 'L', 1, 3, mo->zB[AT2(mo, i, c, e)], 1.0, h, -1.0, xb, 1.0);
            for (int e = 0; e < b; e++) /* c away at W(e), B(b) after W(e) */
                row(milp, mo, 'L', 1, 4, mo->zW[AT2(mo, i, c, e)], 1.0, h, -1.0, xb, 1.0,
                    mo->yBW[AT2(mo, i, b, e)], -1.0);
            for (int a = c + 1; a < m; a++) /* c away at F(a), F(a) before B(b) */
                row(milp, mo, 'L', 2, 4, mo->zF[AT2(mo, i, a, c)], 1.0, h, -1.0, xb, 1.0,
                    mo->yFB[AT2(mo, i, a, b)], 1.0);
        }
}

/* Offload choices and the copy stream (Eqs. 10-17), then the away-on-host indicators z. */
static void
model_offload(PpsimMilp *milp, OpModel *mo, const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    double H = mo->horizon, M = mo->big_m;
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double tf = op_ms(st->f_ps), to = op_ms(st->off_ps);
        for (int j = 0; j < m; j++) {
            int k = AT(mo, i, j);
            mo->X[k] = binary(milp, mo, ppsim_op_fx_x(mo, i, j));
            mo->O[k] = col(milp, mo, H, 0, FALSE);
            mo->R[k] = col(milp, mo, H, 0, FALSE);
            if (mo->fix != NULL && mo->fix->xfix[k] == 1) {
                guint32 xb = ppsim_schedule_index_base(mo->fix->idx, i, 1);
                ppsim_op_fix_past(mo, mo->O[k], xb + mo->fix->xpos[i * 2 * m + j]);
                ppsim_op_fix_past(mo, mo->R[k], xb + mo->fix->xpos[i * 2 * m + m + j]);
            }
            after(milp, mo, mo->O[k], mo->sF[k], tf); /* Eq. 14: offload after its F */
            /* RL after OFF, B after RL (Eq. 15), when offloaded */
            row(milp, mo, 'G', to - M, 3, mo->R[k], 1.0, mo->O[k], -1.0, mo->X[k], -M);
            row(milp, mo, 'G', to - M, 3, mo->sB[k], 1.0, mo->R[k], -1.0, mo->X[k], -M);
        }
        for (int a = 0; a < m; a++)
            for (int b = a + 1; b < m; b++) { /* Eqs. 10-11 in microbatch order */
                int ka = AT(mo, i, a), kb = AT(mo, i, b);
                if (ppsim_op_fx_copy_needed(mo, i, a, b))
                    row(milp, mo, 'G', to - 2 * M, 4, mo->O[kb], 1.0, mo->O[ka], -1.0, mo->X[ka],
                        -M, mo->X[kb], -M);
                if (ppsim_op_fx_copy_needed(mo, i, m + a, m + b))
                    row(milp, mo, 'G', to - 2 * M, 4, mo->R[kb], 1.0, mo->R[ka], -1.0, mo->X[ka],
                        -M, mo->X[kb], -M);
            }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* Eqs. 12-13: OFF(a) against RL(b), a > b */
                int ka = AT(mo, i, a), kb = AT(mo, i, b), k = AT2(mo, i, a, b);
                int fixed = -1;
                if (mo->fix != NULL && ppsim_op_fx_x(mo, i, a) >= 0 &&
                    ppsim_op_fx_x(mo, i, b) >= 0) {
                    int oa = mo->fix->xpos[i * 2 * m + a], rb = mo->fix->xpos[i * 2 * m + m + b];
                    fixed = oa >= 0 && rb >= 0 && oa < rb;
                } else if (mo->fix != NULL && (ppsim_op_fx_x(mo, i, a) == 0 ||
                                               ppsim_op_fx_x(mo, i, b) == 0 || mo->yFB[k] == K0))
                    fixed = 0; /* no such pair, or B(b) (after RL(b)) precedes F(a) (before
                                * OFF(a)) */
                int hh = mo->h[k] = binary(milp, mo, fixed);
                if (!ppsim_op_fx_copy_needed(mo, i, a, m + b))
                    continue;
                /* h = 1: R(b) >= O(a) + to; h = 0: O(a) >= R(b) + to; both offloaded */
                row(milp, mo, 'G', to - 3 * M, 5, mo->R[kb], 1.0, mo->O[ka], -1.0, hh, -M,
                    mo->X[ka], -M, mo->X[kb], -M);
                row(milp, mo, 'G', to - 2 * M, 5, mo->O[ka], 1.0, mo->R[kb], -1.0, hh, M, mo->X[ka],
                    -M, mo->X[kb], -M);
            }
        if (mo->fix != NULL)
            ppsim_op_fix_away_span(mo, i);
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* the away indicators, see model_away */
                int k = AT2(mo, i, a, b);
                const int *cp = mo->fix != NULL ? mo->fix->cpos : NULL;
                mo->zF[k] = model_away(milp, mo, i, b, mo->sF[AT(mo, i, a)], tf, to,
                                       ppsim_op_fx_away(mo, i, b, 0, a, mo->yFB[k], -1),
                                       cp ? cp[CI(mo, i, 0, a)] : -1);
                row(milp, mo, 'L', 0, 2, mo->zF[k], 1.0, mo->yFB[k], -1.0); /* F(a) before B(b) */
                mo->zB[k] = model_away(milp, mo, i, a, mo->sB[AT(mo, i, b)], op_ms(st->b_ps), to,
                                       ppsim_op_fx_away(mo, i, a, 1, b, mo->yFB[k], -1),
                                       cp ? cp[CI(mo, i, 1, b)] : -1);
                row(milp, mo, 'L', 0, 2, mo->zB[k], 1.0, mo->yFB[k], -1.0); /* F(a) before B(b) */
                mo->zW[k] = model_away(milp, mo, i, a, mo->sW[AT(mo, i, b)], op_ms(st->w_ps), to,
                                       ppsim_op_fx_away(mo, i, a, 2, b, mo->yFW[k], mo->yBW[k]),
                                       cp ? cp[CI(mo, i, 2, b)] : -1);
                row(milp, mo, 'L', 0, 2, mo->zW[k], 1.0, mo->yFW[k], -1.0); /* F(a) before W(b) */
                row(milp, mo, 'L', 1, 2, mo->zW[k], 1.0, mo->yBW[k], 1.0);  /* B(a) after W(b) */
            }
        model_queued(milp, mo, i);
    }
}

/* Eq. 18 for the GPUs that share a contended PCIe switch (cost-estimates.h host_link). */
static void
model_switch(PpsimMilp *milp, OpModel *mo, const PpsimCostEstimates *c)
{
    if (c->host_link == NULL || !c->host_link_contended || c->n_devices != mo->p)
        return;
    double M = mo->big_m;
    mo->pairs = g_array_new(FALSE, FALSE, sizeof(OpSwitchPair));
    for (int i1 = 0; i1 < mo->p; i1++)
        for (int i2 = i1 + 1; i2 < mo->p; i2++) {
            if (c->host_link[i1] != c->host_link[i2])
                continue;
            double t1 = op_ms(c->stage[i1].off_ps), t2 = op_ms(c->stage[i2].off_ps);
            for (int dir = 0; dir < 2; dir++)
                for (int j1 = 0; j1 < mo->m; j1++)
                    for (int j2 = 0; j2 < mo->m; j2++) {
                        const int *t = dir == 0 ? mo->O : mo->R;
                        int x1 = t[AT(mo, i1, j1)], x2 = t[AT(mo, i2, j2)];
                        int o1 = mo->X[AT(mo, i1, j1)], o2 = mo->X[AT(mo, i2, j2)];
                        OpSwitchPair sp = {
                            i1, j1,  i2,
                            j2, dir, binary(milp, mo, ppsim_op_fx_switch(mo, i1, j1, i2, j2, dir))};
                        row(milp, mo, 'G', t1 - 3 * M, 5, x2, 1.0, x1, -1.0, sp.col, -M, o1, -M, o2,
                            -M);
                        row(milp, mo, 'G', t2 - 2 * M, 5, x1, 1.0, x2, -1.0, sp.col, M, o1, -M, o2,
                            -M);
                        g_array_append_val(mo->pairs, sp);
                    }
        }
}

/* Eq. 9 at each compute op's start, in units of the stage's activation (w = act_w / act),
 * counting a reload from the start of the compute op during which (or before which) it
 * starts, so the peak at a reload's start is covered too:
 *   at F(a): 1 + sum_{b<a} [(1 - w) yFB(a,b) + w yFW(a,b) - zF(a,b)]
 *   at B(c): (c + 1) + sum_{a>c} [yFB(a,c) - zB(a,c)] - c (1 - w) - w sum_{b<c} (1 - yBW(c,b))
 *   at W(c): (c + 1) + sum_{a>c} [yFW(a,c) - (1 - w) yBW(a,c) - zW(a,c)] - (c + 1)(1 - w) - c w
 * each <= limit / act. Without offload only the F rows can bind (B and W allocate
 * nothing), so the others are left out. */
static void
model_memory(PpsimMilp *milp, const OpModel *mo, const PpsimCostEstimates *c, const gint64 *limit)
{
    int m = mo->m;
    g_autofree int *cols = g_new(int, 3 * m);
    g_autofree double *coefs = g_new(double, 3 * m);
    for (int i = 0; i < mo->p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        if (st->act <= 0)
            continue;
        double wf = (double)st->act_w / (double)st->act, cap = (double)limit[i] / (double)st->act;
        for (int a = 1; a < m; a++) {
            int n = 0;
            for (int b = 0; b < a; b++) {
                int k = AT2(mo, i, a, b);
                cols[n] = mo->yFB[k], coefs[n++] = 1 - wf;
                cols[n] = mo->yFW[k], coefs[n++] = wf;
                if (mo->off)
                    cols[n] = mo->zF[k], coefs[n++] = -1;
            }
            emit(milp, mo, n, cols, coefs, 'L', cap - 1 + 1e-9);
        }
        for (int cc = 0; mo->off && cc < m; cc++) {
            int n = 0;
            double fixed = (cc + 1) - cc * (1 - wf) - wf * cc;
            for (int b = 0; b < cc; b++)
                cols[n] = mo->yBW[AT2(mo, i, cc, b)], coefs[n++] = wf;
            for (int a = cc + 1; a < m; a++) {
                int k = AT2(mo, i, a, cc);
                cols[n] = mo->yFB[k], coefs[n++] = 1;
                cols[n] = mo->zB[k], coefs[n++] = -1;
            }
            emit(milp, mo, n, cols, coefs, 'L', cap - fixed + 1e-9);
            n = 0;
            fixed = (cc + 1) - (cc + 1) * (1 - wf) - cc * wf;
            for (int a = cc + 1; a < m; a++) {
                int k = AT2(mo, i, a, cc);
                cols[n] = mo->yFW[k], coefs[n++] = 1;
                cols[n] = mo->yBW[k], coefs[n++] = -(1 - wf);
                cols[n] = mo->zW[k], coefs[n++] = -1;
            }
            emit(milp, mo, n, cols, coefs, 'L', cap - fixed + 1e-9);
        }
    }
}

gboolean
ppsim_op_milp_solve(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                    const gint64 *limit, const PpsimSchedule *warm, PpsimTime horizon_ps,
                    const PpsimOpMilpOptions *opts, PpsimSchedule **out, PpsimOpMilpSolve *info,
                    GError **error)
{
    int p = shape->p, m = shape->m;
    g_return_val_if_fail(shape->v == 1, FALSE);
    g_return_val_if_fail(!opts->window || warm != NULL, FALSE);
    *out = NULL;
    OpModel mo = {.p = p, .m = m, .off = opts->offload, .stage_span = opts->stage_span};
    if (opts->window) {
        mo.fix = ppsim_op_fix_new(&mo, warm, costs, opts->win_t0, opts->win_t1, error);
        if (mo.fix == NULL)
            return FALSE;
    }
    mo.ub = g_array_new(FALSE, FALSE, sizeof(double));
    mo.cfix = g_array_new(FALSE, FALSE, sizeof(double));
    mo.scols = g_new(int, 3 * m + 8);
    mo.scoefs = g_new(double, 3 * m + 8);
    if (horizon_ps <= 0) /* everything in series: no schedule takes longer */
        for (int i = 0; i < p; i++)
            horizon_ps += m * (costs->stage[i].f_ps + costs->stage[i].b_ps + costs->stage[i].w_ps +
                               2 * costs->stage[i].off_ps + 2 * costs->comm_ps);
    mo.horizon = op_ms(horizon_ps) * (1 + 1e-9);
    mo.big_m = 2 * mo.horizon + 1;
    gsize n1 = (gsize)p * m, n2 = n1 * m;
    mo.sF = neg_ints(n1), mo.sB = neg_ints(n1), mo.sW = neg_ints(n1);
    mo.O = neg_ints(n1), mo.R = neg_ints(n1), mo.X = neg_ints(n1);
    mo.yFB = neg_ints(n2), mo.yFW = neg_ints(n2), mo.yBW = neg_ints(n2);
    mo.h = neg_ints(n2), mo.zF = neg_ints(n2), mo.zB = neg_ints(n2), mo.zW = neg_ints(n2);
    g_autoptr(PpsimMilp) milp = ppsim_milp_new();
    model_compute(milp, &mo, costs);
    if (mo.off)
        model_offload(milp, &mo, costs);
    if (mo.off && !opts->no_switch)
        model_switch(milp, &mo, costs);
    if (limit != NULL)
        model_memory(milp, &mo, costs, limit);
    if (warm != NULL)
        ppsim_op_model_start(milp, &mo, warm, costs);
    info->n_cols = ppsim_milp_n_cols(milp);
    info->n_rows = ppsim_milp_n_rows(milp);
    info->n_binaries = mo.n_bin;
    gboolean ok = ppsim_milp_solve(milp, &opts->solver, &info->milp, error);
    if (ok && info->milp.x != NULL)
        *out = ppsim_op_model_extract(&mo, costs, info->milp.x);
    model_free(&mo);
    return ok;
}
