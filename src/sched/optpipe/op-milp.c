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
#include "schedule/schedule-index.h"
#include "sched/co-schedule.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#define PS_PER_MS 1e9

typedef struct {
    int p, m;
    gboolean off, stage_span;
    double big_m, horizon;
    int C;
    int *sF, *sB, *sW, *O, *R, *X; /* [p * m] */
    int *yFB, *yFW, *yBW, *h;      /* [p * m * m], (a, b) with a > b, else -1 */
    int *zF, *zB, *zW; /* [p * m * m], (b, c), b > c: b is on the host around F(b)... see below */
    int n_bin;
    GArray *pairs; /* SwitchPair: Eq. 18's ordering binaries */
} Model;

/* Eq. 18: transfers (i1, j1) and (i2, j2) of one direction (0 offload, 1 reload) on two
 * GPUs of a switch; @col = 1 when the first goes first. */
typedef struct {
    int i1, j1, i2, j2, dir, col;
} SwitchPair;

#define AT(mo, i, j) ((i) * (mo)->m + (j))
#define AT2(mo, i, a, b) (((i) * (mo)->m + (a)) * (mo)->m + (b))

static double
ms(PpsimTime t)
{
    return (double)t / PS_PER_MS;
}

/* sum(coef_k x_k) sense rhs, from @n (col, coef) pairs. */
static void
row(PpsimMilp *milp, char sense, double rhs, int n, ...)
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
    ppsim_milp_add_row(milp, n, cols, coefs, sense, rhs);
}

/* x_to >= x_from + d (a precedence). */
static void
after(PpsimMilp *milp, int to, int from, double d)
{
    row(milp, 'G', d, 2, to, 1.0, from, -1.0);
}

static int
binary(PpsimMilp *milp, Model *mo)
{
    mo->n_bin++;
    return ppsim_milp_add_col(milp, 0, 1, 0, TRUE);
}

/* Either x_a runs (for @da) before x_b, when y = 1, or x_b (for @db) before x_a. */
static void
disjoint(PpsimMilp *milp, const Model *mo, int y, int a, double da, int b, double db)
{
    /* y = 1: b >= a + da;  y = 0: a >= b + db */
    row(milp, 'G', da - mo->big_m, 3, b, 1.0, a, -1.0, y, -mo->big_m);
    row(milp, 'G', db, 3, a, 1.0, b, -1.0, y, mo->big_m);
}

static void
model_free(Model *mo)
{
    g_free(mo->sF), g_free(mo->sB), g_free(mo->sW), g_free(mo->O), g_free(mo->R);
    g_free(mo->X), g_free(mo->yFB), g_free(mo->yFW), g_free(mo->yBW), g_free(mo->h);
    g_free(mo->zF), g_free(mo->zB), g_free(mo->zW);
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

/* Columns, precedences and the compute-stream disjunctions with their cuts. */
static void
model_compute(PpsimMilp *milp, Model *mo, const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    double H = mo->horizon;
    mo->C = ppsim_milp_add_col(milp, 0, H, 1.0, FALSE);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < m; j++) {
            mo->sF[AT(mo, i, j)] = ppsim_milp_add_col(milp, 0, H, 0, FALSE);
            mo->sB[AT(mo, i, j)] = ppsim_milp_add_col(milp, 0, H, 0, FALSE);
            mo->sW[AT(mo, i, j)] = ppsim_milp_add_col(milp, 0, H, 0, FALSE);
        }
    double comm = ms(c->comm_ps);
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double tf = ms(st->f_ps), tb = ms(st->b_ps), tw = ms(st->w_ps);
        for (int j = 0; j < m; j++) {
            int f = mo->sF[AT(mo, i, j)], b = mo->sB[AT(mo, i, j)], w = mo->sW[AT(mo, i, j)];
            if (i > 0) /* Eq. 5 */
                after(milp, f, mo->sF[AT(mo, i - 1, j)], ms(c->stage[i - 1].f_ps) + comm);
            if (i < p - 1) /* Eq. 6 */
                after(milp, b, mo->sB[AT(mo, i + 1, j)], ms(c->stage[i + 1].b_ps) + comm);
            after(milp, b, f, tf); /* Eq. 8 */
            after(milp, w, b, tb);
            if (j + 1 < m) { /* fixed microbatch order */
                after(milp, mo->sF[AT(mo, i, j + 1)], f, tf);
                after(milp, mo->sB[AT(mo, i, j + 1)], b, tb);
                after(milp, mo->sW[AT(mo, i, j + 1)], w, tw);
            }
        }
        if (mo->stage_span) {
            /* Eq. 3: C >= E(i, m, W) - (E(i, 1, F) - T(i, 1, F)), the span from F(0) to the
             * last W; F(0) starts as soon as its input is there, as in the replay (which
             * cannot hold a device back), so the replay's span is the model's */
            row(milp, 'G', tw, 3, mo->C, 1.0, mo->sW[AT(mo, i, m - 1)], -1.0, mo->sF[AT(mo, i, 0)],
                1.0);
            if (i > 0)
                row(milp, 'L', ms(c->stage[i - 1].f_ps) + comm, 2, mo->sF[AT(mo, i, 0)], 1.0,
                    mo->sF[AT(mo, i - 1, 0)], -1.0);
            else
                row(milp, 'L', 0, 1, mo->sF[AT(mo, 0, 0)], 1.0);
            /* the cut for the LP bound: the span holds all of the device's work */
            row(milp, 'G', m * (tf + tb + tw), 1, mo->C, 1.0);
        } else {
            row(milp, 'G', tw, 2, mo->C, 1.0, mo->sW[AT(mo, i, m - 1)], -1.0); /* Eq. 4 */
            /* a cut for the LP bound (valid: every op of device i starts after its F(0) and
             * they run one at a time): C >= sF(i, 0) + m (F + B + W) */
            row(milp, 'G', m * (tf + tb + tw), 2, mo->C, 1.0, mo->sF[AT(mo, i, 0)], -1.0);
        }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* Eq. 7 where the order is open */
                int k = AT2(mo, i, a, b);
                mo->yFB[k] = binary(milp, mo);
                mo->yFW[k] = binary(milp, mo);
                mo->yBW[k] = binary(milp, mo);
                disjoint(milp, mo, mo->yFB[k], mo->sF[AT(mo, i, a)], tf, mo->sB[AT(mo, i, b)], tb);
                disjoint(milp, mo, mo->yFW[k], mo->sF[AT(mo, i, a)], tf, mo->sW[AT(mo, i, b)], tw);
                disjoint(milp, mo, mo->yBW[k], mo->sB[AT(mo, i, a)], tb, mo->sW[AT(mo, i, b)], tw);
            }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* §4.1.2: transitivity on the implied chains */
                int k = AT2(mo, i, a, b);
                row(milp, 'L', 0, 2, mo->yFB[k], 1.0, mo->yFW[k], -1.0);
                if (a - 1 > b) {
                    row(milp, 'L', 0, 2, mo->yFB[k], 1.0, mo->yFB[AT2(mo, i, a - 1, b)], -1.0);
                    row(milp, 'L', 0, 2, mo->yFW[k], 1.0, mo->yFW[AT2(mo, i, a - 1, b)], -1.0);
                    row(milp, 'L', 0, 2, mo->yBW[k], 1.0, mo->yBW[AT2(mo, i, a - 1, b)], -1.0);
                }
                if (b + 1 < a) {
                    row(milp, 'L', 0, 2, mo->yFB[k], 1.0, mo->yFB[AT2(mo, i, a, b + 1)], -1.0);
                    row(milp, 'L', 0, 2, mo->yFW[k], 1.0, mo->yFW[AT2(mo, i, a, b + 1)], -1.0);
                    row(milp, 'L', 0, 2, mo->yBW[k], 1.0, mo->yBW[AT2(mo, i, a, b + 1)], -1.0);
                }
                for (int cc = b + 1; cc < a; cc++) /* F(a) < B(cc) < W(b) */
                    row(milp, 'G', -1, 3, mo->yFW[k], 1.0, mo->yFB[AT2(mo, i, a, cc)], -1.0,
                        mo->yBW[AT2(mo, i, cc, b)], -1.0);
            }
    }
}

/* z = 1 only if microbatch @b of device @i is away on the host for the whole of the compute
 * op starting at column @x and lasting @dur: offloaded, its OFF ended by x's start, its RL
 * starting after x's end (so the reload, anchored to the last op ending before it, can
 * never start earlier in the replay). */
static int
model_away(PpsimMilp *milp, Model *mo, int i, int b, int x, double dur, double to)
{
    double M = mo->big_m;
    int kb = AT(mo, i, b);
    int z = binary(milp, mo);
    row(milp, 'L', 0, 2, z, 1.0, mo->X[kb], -1.0);
    row(milp, 'L', M - to, 3, mo->O[kb], 1.0, x, -1.0, z, M);
    row(milp, 'G', dur - M, 3, mo->R[kb], 1.0, x, -1.0, z, -M);
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
model_queued(PpsimMilp *milp, const Model *mo, int i)
{
    int m = mo->m;
    for (int c = 1; c < m; c++)
        for (int b = 0; b < c; b++) {
            int h = mo->h[AT2(mo, i, c, b)], xb = mo->X[AT(mo, i, b)];
            for (int e = 0; e <= b; e++) /* c away at B(e) */
                row(milp, 'L', 1, 3, mo->zB[AT2(mo, i, c, e)], 1.0, h, -1.0, xb, 1.0);
            for (int e = 0; e < b; e++) /* c away at W(e), B(b) after W(e) */
                row(milp, 'L', 1, 4, mo->zW[AT2(mo, i, c, e)], 1.0, h, -1.0, xb, 1.0,
                    mo->yBW[AT2(mo, i, b, e)], -1.0);
            for (int a = c + 1; a < m; a++) /* c away at F(a), F(a) before B(b) */
                row(milp, 'L', 2, 4, mo->zF[AT2(mo, i, a, c)], 1.0, h, -1.0, xb, 1.0,
                    mo->yFB[AT2(mo, i, a, b)], 1.0);
        }
}

/* Offload choices and the copy stream (Eqs. 10-17), then the away-on-host indicators z. */
static void
model_offload(PpsimMilp *milp, Model *mo, const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    double H = mo->horizon, M = mo->big_m;
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double tf = ms(st->f_ps), to = ms(st->off_ps);
        for (int j = 0; j < m; j++) {
            int k = AT(mo, i, j);
            mo->X[k] = binary(milp, mo);
            mo->O[k] = ppsim_milp_add_col(milp, 0, H, 0, FALSE);
            mo->R[k] = ppsim_milp_add_col(milp, 0, H, 0, FALSE);
            after(milp, mo->O[k], mo->sF[k], tf); /* Eq. 14: offload after its F */
            /* RL after OFF, B after RL (Eq. 15), when offloaded */
            row(milp, 'G', to - M, 3, mo->R[k], 1.0, mo->O[k], -1.0, mo->X[k], -M);
            row(milp, 'G', to - M, 3, mo->sB[k], 1.0, mo->R[k], -1.0, mo->X[k], -M);
        }
        for (int a = 0; a < m; a++)
            for (int b = a + 1; b < m; b++) { /* Eqs. 10-11 in microbatch order */
                int ka = AT(mo, i, a), kb = AT(mo, i, b);
                row(milp, 'G', to - 2 * M, 4, mo->O[kb], 1.0, mo->O[ka], -1.0, mo->X[ka], -M,
                    mo->X[kb], -M);
                row(milp, 'G', to - 2 * M, 4, mo->R[kb], 1.0, mo->R[ka], -1.0, mo->X[ka], -M,
                    mo->X[kb], -M);
            }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* Eqs. 12-13: OFF(a) against RL(b), a > b */
                int ka = AT(mo, i, a), kb = AT(mo, i, b), k = AT2(mo, i, a, b);
                int hh = mo->h[k] = binary(milp, mo);
                /* h = 1: R(b) >= O(a) + to; h = 0: O(a) >= R(b) + to; both offloaded */
                row(milp, 'G', to - 3 * M, 5, mo->R[kb], 1.0, mo->O[ka], -1.0, hh, -M, mo->X[ka],
                    -M, mo->X[kb], -M);
                row(milp, 'G', to - 2 * M, 5, mo->O[ka], 1.0, mo->R[kb], -1.0, hh, M, mo->X[ka], -M,
                    mo->X[kb], -M);
            }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* the away indicators, see model_away */
                int k = AT2(mo, i, a, b);
                mo->zF[k] = model_away(milp, mo, i, b, mo->sF[AT(mo, i, a)], tf, to);
                row(milp, 'L', 0, 2, mo->zF[k], 1.0, mo->yFB[k], -1.0); /* F(a) before B(b) */
                mo->zB[k] = model_away(milp, mo, i, a, mo->sB[AT(mo, i, b)], ms(st->b_ps), to);
                row(milp, 'L', 0, 2, mo->zB[k], 1.0, mo->yFB[k], -1.0); /* F(a) before B(b) */
                mo->zW[k] = model_away(milp, mo, i, a, mo->sW[AT(mo, i, b)], ms(st->w_ps), to);
                row(milp, 'L', 0, 2, mo->zW[k], 1.0, mo->yFW[k], -1.0); /* F(a) before W(b) */
                row(milp, 'L', 1, 2, mo->zW[k], 1.0, mo->yBW[k], 1.0);  /* B(a) after W(b) */
            }
        model_queued(milp, mo, i);
    }
}

/* Eq. 18 for the GPUs that share a contended PCIe switch (cost-estimates.h host_link). */
static void
model_switch(PpsimMilp *milp, Model *mo, const PpsimCostEstimates *c)
{
    if (c->host_link == NULL || !c->host_link_contended || c->n_devices != mo->p)
        return;
    double M = mo->big_m;
    mo->pairs = g_array_new(FALSE, FALSE, sizeof(SwitchPair));
    for (int i1 = 0; i1 < mo->p; i1++)
        for (int i2 = i1 + 1; i2 < mo->p; i2++) {
            if (c->host_link[i1] != c->host_link[i2])
                continue;
            double t1 = ms(c->stage[i1].off_ps), t2 = ms(c->stage[i2].off_ps);
            for (int dir = 0; dir < 2; dir++)
                for (int j1 = 0; j1 < mo->m; j1++)
                    for (int j2 = 0; j2 < mo->m; j2++) {
                        const int *t = dir == 0 ? mo->O : mo->R;
                        int x1 = t[AT(mo, i1, j1)], x2 = t[AT(mo, i2, j2)];
                        int o1 = mo->X[AT(mo, i1, j1)], o2 = mo->X[AT(mo, i2, j2)];
                        SwitchPair sp = {i1, j1, i2, j2, dir, binary(milp, mo)};
                        row(milp, 'G', t1 - 3 * M, 5, x2, 1.0, x1, -1.0, sp.col, -M, o1, -M, o2,
                            -M);
                        row(milp, 'G', t2 - 2 * M, 5, x1, 1.0, x2, -1.0, sp.col, M, o1, -M, o2, -M);
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
model_memory(PpsimMilp *milp, const Model *mo, const PpsimCostEstimates *c, const gint64 *limit)
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
            ppsim_milp_add_row(milp, n, cols, coefs, 'L', cap - 1 + 1e-9);
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
            ppsim_milp_add_row(milp, n, cols, coefs, 'L', cap - fixed + 1e-9);
            n = 0;
            fixed = (cc + 1) - (cc + 1) * (1 - wf) - cc * wf;
            for (int a = cc + 1; a < m; a++) {
                int k = AT2(mo, i, a, cc);
                cols[n] = mo->yFW[k], coefs[n++] = 1;
                cols[n] = mo->yBW[k], coefs[n++] = -(1 - wf);
                cols[n] = mo->zW[k], coefs[n++] = -1;
            }
            ppsim_milp_add_row(milp, n, cols, coefs, 'L', cap - fixed + 1e-9);
        }
    }
}

/* Position of each op of device @d in its list, per kind and microbatch ([3][m] compute,
 * [2][m] copy; -1 when absent). FALSE when the list is not in the model's shape. */
static gboolean
positions(const PpsimSchedule *s, int d, int *cpos, int *xpos)
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
static void
model_start(PpsimMilp *milp, const Model *mo, const PpsimSchedule *warm,
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
        if (!positions(warm, i, cpos, xpos) || (!mo->off && warm->copy[i]->len > 0))
            return;
    for (int i = 0; i < p; i++) {
        positions(warm, i, cpos, xpos);
        guint32 cb = ppsim_schedule_index_base(idx, i, 0),
                xb = ppsim_schedule_index_base(idx, i, 1);
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) {
                int k = AT2(mo, i, a, b);
                ppsim_milp_set_start(milp, mo->yFB[k], cpos[a] < cpos[m + b]);
                ppsim_milp_set_start(milp, mo->yFW[k], cpos[a] < cpos[2 * m + b]);
                ppsim_milp_set_start(milp, mo->yBW[k], cpos[m + a] < cpos[2 * m + b]);
                if (!mo->off)
                    continue;
                int oa = xpos[a], rb = xpos[m + b];
                ppsim_milp_set_start(milp, mo->h[k], oa >= 0 && rb >= 0 && oa < rb);
                /* b away around F(a); a away around B(b), W(b) */
                guint32 f = cb + cpos[a], bb = cb + cpos[m + b], wb = cb + cpos[2 * m + b];
                ppsim_milp_set_start(milp, mo->zF[k], start_away(xpos, xb, m, b, st, en, f));
                ppsim_milp_set_start(milp, mo->zB[k], start_away(xpos, xb, m, a, st, en, bb));
                ppsim_milp_set_start(milp, mo->zW[k], start_away(xpos, xb, m, a, st, en, wb));
            }
        for (int j = 0; mo->off && j < m; j++)
            ppsim_milp_set_start(milp, mo->X[AT(mo, i, j)], xpos[j] >= 0);
    }
    g_autofree int *xpos2 = g_new(int, 2 * m);
    for (guint k = 0; mo->pairs != NULL && k < mo->pairs->len; k++) {
        const SwitchPair *sp = &g_array_index(mo->pairs, SwitchPair, k);
        positions(warm, sp->i1, cpos, xpos);
        positions(warm, sp->i2, cpos, xpos2);
        int a = xpos[sp->dir * m + sp->j1], b = xpos2[sp->dir * m + sp->j2];
        gboolean first = a >= 0 && b >= 0 &&
                         st[ppsim_schedule_index_base(idx, sp->i1, 1) + a] <
                             st[ppsim_schedule_index_base(idx, sp->i2, 1) + b];
        ppsim_milp_set_start(milp, sp->col, first);
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
extract_switch(PpsimSchedule *s, const Model *mo, const PpsimCostEstimates *c, const double *x)
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
                    LinkTransfer lt = {x[t[AT(mo, i, op->microbatch)]], i, (int)k};
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
static PpsimSchedule *
model_extract(const Model *mo, const PpsimCostEstimates *c, const double *x)
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
                ops[n++] = (TimedOp){x[col[kind][AT(mo, i, j)]],
                                     j * 3 + kind,
                                     {.kind = kinds[kind], .stage = i, .microbatch = j}};
        qsort(ops, n, sizeof(TimedOp), timed_cmp);
        for (int k = 0; k < n; k++) {
            ppsim_schedule_push_op(s, i, ops[k].op);
            ends[k] = ops[k].t + ms(ppsim_estimate_op_ps(c, &ops[k].op));
        }
        if (!mo->off)
            continue;
        g_autofree TimedOp *cp = g_new(TimedOp, 2 * m);
        int nc = 0;
        for (int j = 0; j < m; j++)
            if (x[mo->X[AT(mo, i, j)]] > 0.5) {
                PpsimOp off = {.kind = PPSIM_OP_OFF, .stage = i, .microbatch = j};
                cp[nc++] = (TimedOp){x[mo->O[AT(mo, i, j)]], 2 * j, off};
                off.kind = PPSIM_OP_RL;
                cp[nc++] = (TimedOp){x[mo->R[AT(mo, i, j)]], 2 * j + 1, off};
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
            double off_end = cp[k].t + ms(st->off_ps);
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

gboolean
ppsim_op_milp_solve(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                    const gint64 *limit, const PpsimSchedule *warm, PpsimTime horizon_ps,
                    const PpsimOpMilpOptions *opts, PpsimSchedule **out, PpsimOpMilpSolve *info,
                    GError **error)
{
    int p = shape->p, m = shape->m;
    g_return_val_if_fail(shape->v == 1, FALSE);
    *out = NULL;
    Model mo = {.p = p, .m = m, .off = opts->offload, .stage_span = opts->stage_span};
    if (horizon_ps <= 0) /* everything in series: no schedule takes longer */
        for (int i = 0; i < p; i++)
            horizon_ps += m * (costs->stage[i].f_ps + costs->stage[i].b_ps + costs->stage[i].w_ps +
                               2 * costs->stage[i].off_ps + 2 * costs->comm_ps);
    mo.horizon = ms(horizon_ps) * (1 + 1e-9);
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
        model_start(milp, &mo, warm, costs);
    info->n_cols = ppsim_milp_n_cols(milp);
    info->n_rows = ppsim_milp_n_rows(milp);
    info->n_binaries = mo.n_bin;
    gboolean ok = ppsim_milp_solve(milp, &opts->solver, &info->milp, error);
    if (ok && info->milp.x != NULL)
        *out = model_extract(&mo, costs, info->milp.x);
    model_free(&mo);
    return ok;
}
