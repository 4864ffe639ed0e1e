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
    GArray *pairs;   /* SwitchPair: Eq. 18's ordering binaries */
    struct Fix *fix; /* a window (rolling horizon): what is fixed to the warm start; NULL:
                      * the full model */
    GArray *ub;      /* [n_cols] each column's upper bound (every lower bound is 0) */
    GArray *cfix;    /* [n_cols] in a window, a time fixed to the warm start's (NAN: free) */
    int *scols;      /* scratch for emit() */
    double *scoefs;
} Model;

/* A binary fixed by a window is no column but one of these constants. */
#define K0 (-10)
#define K1 (-11)

/* The window of a rolling-horizon solve (op-rolling.c): on each device the compute ops of
 * the warm start that start in [t0, t1) on its estimated timeline are open, one contiguous
 * run [lo, hi) of its list; every order that involves a closed op, and every offload choice
 * whose F or B is closed, is the warm start's. */
typedef struct Fix {
    int *cpos, *xpos;    /* [p][3m], [p][2m]: the warm start's list positions (-1: absent) */
    guint8 *open;        /* [p][3m] */
    int *lo, *hi;        /* [p] */
    int *xfix;           /* [p][m]: -1 free, else the warm start's choice */
    int *xrank;          /* [p][2m]: position among the copy ops whose choice is fixed, -1 */
    int *zfirst, *zlast; /* [p][m]: list positions of the first and last compute op around
                          * which the microbatch is fixed away on the host (-1: none) */
    PpsimScheduleIndex *idx;
    PpsimTime *st, *en; /* the warm start's estimated timeline */
    PpsimTime t0;       /* ops that start before it keep their times (the past) */
} Fix;

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

/* Adds sum(coefs[k] x[cols[k]]) @sense @rhs. In a window the fixed binaries (K0, K1) move
 * to the right-hand side, and a row left without columns, or that the columns' bounds
 * already satisfy (a big-M row whose binary is fixed the other way), is not added. */
static void
emit(PpsimMilp *milp, const Model *mo, int n, const int *cols, const double *coefs, char sense,
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
row(PpsimMilp *milp, const Model *mo, char sense, double rhs, int n, ...)
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
col(PpsimMilp *milp, Model *mo, double ub, double obj, gboolean integer)
{
    double free_ = NAN;
    g_array_append_val(mo->ub, ub);
    g_array_append_val(mo->cfix, free_);
    return ppsim_milp_add_col(milp, 0, ub, obj, integer);
}

/* x_to >= x_from + d (a precedence). */
static void
after(PpsimMilp *milp, const Model *mo, int to, int from, double d)
{
    row(milp, mo, 'G', d, 2, to, 1.0, from, -1.0);
}

/* A binary column, or in a window the constant @fixed (0 or 1) when it is not < 0. */
static int
binary(PpsimMilp *milp, Model *mo, int fixed)
{
    if (fixed >= 0)
        return fixed ? K1 : K0;
    mo->n_bin++;
    return col(milp, mo, 1, 0, TRUE);
}

/* A binary's value in the solution @x. */
static double
value(const double *x, int c)
{
    return c == K1 ? 1 : c == K0 ? 0 : x[c];
}

/* A time's value in the solution @x (a window's past keeps the warm start's). */
static double
tval(const Model *mo, const double *x, int c)
{
    double fixed = g_array_index(mo->cfix, double, c);
    return isnan(fixed) ? x[c] : fixed;
}

/* In a window, fixes time column @c to the warm start's when that op (index @op in the warm
 * start's schedule index) starts before the window. */
static void
fix_past(Model *mo, int c, gint64 op)
{
    if (mo->fix == NULL || op < 0 || mo->fix->st[op] >= mo->fix->t0)
        return;
    g_array_index(mo->cfix, double, c) = ms(mo->fix->st[op]);
}

/* Either x_a runs (for @da) before x_b, when y = 1, or x_b (for @db) before x_a. */
static void
disjoint(PpsimMilp *milp, const Model *mo, int y, int a, double da, int b, double db)
{
    /* y = 1: b >= a + da;  y = 0: a >= b + db */
    row(milp, mo, 'G', da - mo->big_m, 3, b, 1.0, a, -1.0, y, -mo->big_m);
    row(milp, mo, 'G', db, 3, a, 1.0, b, -1.0, y, mo->big_m);
}

static void fix_free(Fix *f);

static void
model_free(Model *mo)
{
    g_free(mo->sF), g_free(mo->sB), g_free(mo->sW), g_free(mo->O), g_free(mo->R);
    g_free(mo->X), g_free(mo->yFB), g_free(mo->yFW), g_free(mo->yBW), g_free(mo->h);
    g_free(mo->zF), g_free(mo->zB), g_free(mo->zW);
    g_free(mo->scols), g_free(mo->scoefs);
    if (mo->ub != NULL)
        g_array_free(mo->ub, TRUE);
    if (mo->cfix != NULL)
        g_array_free(mo->cfix, TRUE);
    fix_free(mo->fix);
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

/* Window helpers (all answer "free" without a window). The index of compute op (kind @k,
 * microbatch @j) of device @i in Fix's [p][3m] arrays. */
#define CI(mo, i, k, j) (((i)*3 + (k)) * (mo)->m + (j))

/* The order "op (@ka, @a) runs before op (@kb, @b)" on device @i: -1 when free (no window, or
 * both ops open), else the warm start's (1 or 0). */
static int
fx_order(const Model *mo, int i, int ka, int a, int kb, int b)
{
    const Fix *f = mo->fix;
    if (f == NULL || (f->open[CI(mo, i, ka, a)] && f->open[CI(mo, i, kb, b)]))
        return -1;
    return f->cpos[CI(mo, i, ka, a)] < f->cpos[CI(mo, i, kb, b)];
}

/* Whether a fixed order between those two ops needs its precedence row: the closed ops are
 * one chain (each after the one before it in the warm start's list) and the open run sits
 * between the closed ops at lo - 1 and hi; every other fixed order follows from those rows
 * and the ones every model has (dependencies, each kind in microbatch order). */
static gboolean
fx_needed(const Model *mo, int i, int ka, int a, int kb, int b)
{
    const Fix *f = mo->fix;
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
static gboolean
fx_copy_needed(const Model *mo, int i, int ca, int cb)
{
    const Fix *f = mo->fix;
    if (f == NULL)
        return TRUE;
    int ra = f->xrank[i * 2 * mo->m + ca], rb = f->xrank[i * 2 * mo->m + cb];
    return ra < 0 || rb < 0 || abs(ra - rb) == 1;
}

static int
fx_x(const Model *mo, int i, int j)
{
    return mo->fix == NULL ? -1 : mo->fix->xfix[AT(mo, i, j)];
}

/* The value of z (microbatch @b away on the host around compute op (@kx, @jx), which needs
 * the order binaries @need1 = 1 and @need0 = 0; -1: none): -1 when free (no window, or the
 * op is open and b's offload is possible), 0 when b is not offloaded or the order rules it
 * out, else the warm start's. */
static int
fx_away(const Model *mo, int i, int b, int kx, int jx, int need1, int need0)
{
    const Fix *f = mo->fix;
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

/* Columns, precedences and the compute-stream disjunctions with their cuts. */
static void
model_compute(PpsimMilp *milp, Model *mo, const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    double H = mo->horizon;
    mo->C = col(milp, mo, H, 1.0, FALSE);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < m; j++) {
            mo->sF[AT(mo, i, j)] = col(milp, mo, H, 0, FALSE);
            mo->sB[AT(mo, i, j)] = col(milp, mo, H, 0, FALSE);
            mo->sW[AT(mo, i, j)] = col(milp, mo, H, 0, FALSE);
            if (mo->fix != NULL) {
                guint32 cb = ppsim_schedule_index_base(mo->fix->idx, i, 0);
                fix_past(mo, mo->sF[AT(mo, i, j)], cb + mo->fix->cpos[CI(mo, i, 0, j)]);
                fix_past(mo, mo->sB[AT(mo, i, j)], cb + mo->fix->cpos[CI(mo, i, 1, j)]);
                fix_past(mo, mo->sW[AT(mo, i, j)], cb + mo->fix->cpos[CI(mo, i, 2, j)]);
            }
        }
    double comm = ms(c->comm_ps);
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double tf = ms(st->f_ps), tb = ms(st->b_ps), tw = ms(st->w_ps);
        for (int j = 0; j < m; j++) {
            int f = mo->sF[AT(mo, i, j)], b = mo->sB[AT(mo, i, j)], w = mo->sW[AT(mo, i, j)];
            if (i > 0) /* Eq. 5 */
                after(milp, mo, f, mo->sF[AT(mo, i - 1, j)], ms(c->stage[i - 1].f_ps) + comm);
            if (i < p - 1) /* Eq. 6 */
                after(milp, mo, b, mo->sB[AT(mo, i + 1, j)], ms(c->stage[i + 1].b_ps) + comm);
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
                row(milp, mo, 'L', ms(c->stage[i - 1].f_ps) + comm, 2, mo->sF[AT(mo, i, 0)], 1.0,
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
                mo->yFB[k] = binary(milp, mo, fx_order(mo, i, 0, a, 1, b));
                mo->yFW[k] = binary(milp, mo, fx_order(mo, i, 0, a, 2, b));
                mo->yBW[k] = binary(milp, mo, fx_order(mo, i, 1, a, 2, b));
                if (fx_needed(mo, i, 0, a, 1, b))
                    disjoint(milp, mo, mo->yFB[k], mo->sF[AT(mo, i, a)], tf, mo->sB[AT(mo, i, b)],
                             tb);
                if (fx_needed(mo, i, 0, a, 2, b))
                    disjoint(milp, mo, mo->yFW[k], mo->sF[AT(mo, i, a)], tf, mo->sW[AT(mo, i, b)],
                             tw);
                if (fx_needed(mo, i, 1, a, 2, b))
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
model_away(PpsimMilp *milp, Model *mo, int i, int b, int x, double dur, double to, int fixed,
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

/* In a window, the first and last compute op (list positions) around which each microbatch
 * is fixed away (fx_away = 1) on device @i. */
static void
fix_away_span(const Model *mo, int i)
{
    Fix *f = mo->fix;
    int m = mo->m;
    for (int j = 0; j < m; j++)
        f->zfirst[AT(mo, i, j)] = f->zlast[AT(mo, i, j)] = -1;
    for (int a = 1; a < m; a++)
        for (int b = 0; b < a; b++) {
            int k = AT2(mo, i, a, b);
            /* (microbatch, kind of op, its microbatch) for zF, zB, zW */
            int v[3][3] = {{b, 0, a}, {a, 1, b}, {a, 2, b}};
            int val[3] = {fx_away(mo, i, b, 0, a, mo->yFB[k], -1),
                          fx_away(mo, i, a, 1, b, mo->yFB[k], -1),
                          fx_away(mo, i, a, 2, b, mo->yFW[k], mo->yBW[k])};
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
model_offload(PpsimMilp *milp, Model *mo, const PpsimCostEstimates *c)
{
    int p = mo->p, m = mo->m;
    double H = mo->horizon, M = mo->big_m;
    for (int i = 0; i < p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double tf = ms(st->f_ps), to = ms(st->off_ps);
        for (int j = 0; j < m; j++) {
            int k = AT(mo, i, j);
            mo->X[k] = binary(milp, mo, fx_x(mo, i, j));
            mo->O[k] = col(milp, mo, H, 0, FALSE);
            mo->R[k] = col(milp, mo, H, 0, FALSE);
            if (mo->fix != NULL && mo->fix->xfix[k] == 1) {
                guint32 xb = ppsim_schedule_index_base(mo->fix->idx, i, 1);
                fix_past(mo, mo->O[k], xb + mo->fix->xpos[i * 2 * m + j]);
                fix_past(mo, mo->R[k], xb + mo->fix->xpos[i * 2 * m + m + j]);
            }
            after(milp, mo, mo->O[k], mo->sF[k], tf); /* Eq. 14: offload after its F */
            /* RL after OFF, B after RL (Eq. 15), when offloaded */
            row(milp, mo, 'G', to - M, 3, mo->R[k], 1.0, mo->O[k], -1.0, mo->X[k], -M);
            row(milp, mo, 'G', to - M, 3, mo->sB[k], 1.0, mo->R[k], -1.0, mo->X[k], -M);
        }
        for (int a = 0; a < m; a++)
            for (int b = a + 1; b < m; b++) { /* Eqs. 10-11 in microbatch order */
                int ka = AT(mo, i, a), kb = AT(mo, i, b);
                if (fx_copy_needed(mo, i, a, b))
                    row(milp, mo, 'G', to - 2 * M, 4, mo->O[kb], 1.0, mo->O[ka], -1.0, mo->X[ka],
                        -M, mo->X[kb], -M);
                if (fx_copy_needed(mo, i, m + a, m + b))
                    row(milp, mo, 'G', to - 2 * M, 4, mo->R[kb], 1.0, mo->R[ka], -1.0, mo->X[ka],
                        -M, mo->X[kb], -M);
            }
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* Eqs. 12-13: OFF(a) against RL(b), a > b */
                int ka = AT(mo, i, a), kb = AT(mo, i, b), k = AT2(mo, i, a, b);
                int fixed = -1;
                if (mo->fix != NULL && fx_x(mo, i, a) >= 0 && fx_x(mo, i, b) >= 0) {
                    int oa = mo->fix->xpos[i * 2 * m + a], rb = mo->fix->xpos[i * 2 * m + m + b];
                    fixed = oa >= 0 && rb >= 0 && oa < rb;
                } else if (mo->fix != NULL &&
                           (fx_x(mo, i, a) == 0 || fx_x(mo, i, b) == 0 || mo->yFB[k] == K0))
                    fixed = 0; /* no such pair, or B(b) (after RL(b)) precedes F(a) (before
                                * OFF(a)) */
                int hh = mo->h[k] = binary(milp, mo, fixed);
                if (!fx_copy_needed(mo, i, a, m + b))
                    continue;
                /* h = 1: R(b) >= O(a) + to; h = 0: O(a) >= R(b) + to; both offloaded */
                row(milp, mo, 'G', to - 3 * M, 5, mo->R[kb], 1.0, mo->O[ka], -1.0, hh, -M,
                    mo->X[ka], -M, mo->X[kb], -M);
                row(milp, mo, 'G', to - 2 * M, 5, mo->O[ka], 1.0, mo->R[kb], -1.0, hh, M, mo->X[ka],
                    -M, mo->X[kb], -M);
            }
        if (mo->fix != NULL)
            fix_away_span(mo, i);
        for (int a = 1; a < m; a++)
            for (int b = 0; b < a; b++) { /* the away indicators, see model_away */
                int k = AT2(mo, i, a, b);
                const int *cp = mo->fix != NULL ? mo->fix->cpos : NULL;
                mo->zF[k] = model_away(milp, mo, i, b, mo->sF[AT(mo, i, a)], tf, to,
                                       fx_away(mo, i, b, 0, a, mo->yFB[k], -1),
                                       cp ? cp[CI(mo, i, 0, a)] : -1);
                row(milp, mo, 'L', 0, 2, mo->zF[k], 1.0, mo->yFB[k], -1.0); /* F(a) before B(b) */
                mo->zB[k] = model_away(milp, mo, i, a, mo->sB[AT(mo, i, b)], ms(st->b_ps), to,
                                       fx_away(mo, i, a, 1, b, mo->yFB[k], -1),
                                       cp ? cp[CI(mo, i, 1, b)] : -1);
                row(milp, mo, 'L', 0, 2, mo->zB[k], 1.0, mo->yFB[k], -1.0); /* F(a) before B(b) */
                mo->zW[k] = model_away(milp, mo, i, a, mo->sW[AT(mo, i, b)], ms(st->w_ps), to,
                                       fx_away(mo, i, a, 2, b, mo->yFW[k], mo->yBW[k]),
                                       cp ? cp[CI(mo, i, 2, b)] : -1);
                row(milp, mo, 'L', 0, 2, mo->zW[k], 1.0, mo->yFW[k], -1.0); /* F(a) before W(b) */
                row(milp, mo, 'L', 1, 2, mo->zW[k], 1.0, mo->yBW[k], 1.0);  /* B(a) after W(b) */
            }
        model_queued(milp, mo, i);
    }
}

/* An Eq. 18 order in a window: free when either offload choice is, else the warm start's. */
static int
fx_switch(const Model *mo, int i1, int j1, int i2, int j2, int dir)
{
    const Fix *f = mo->fix;
    if (f == NULL || f->xfix[AT(mo, i1, j1)] < 0 || f->xfix[AT(mo, i2, j2)] < 0)
        return -1;
    int m = mo->m, a = f->xpos[i1 * 2 * m + dir * m + j1], b = f->xpos[i2 * 2 * m + dir * m + j2];
    if (a < 0 || b < 0)
        return 0;
    return f->st[ppsim_schedule_index_base(f->idx, i1, 1) + a] <
           f->st[ppsim_schedule_index_base(f->idx, i2, 1) + b];
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
                        SwitchPair sp = {i1,  j1,
                                         i2,  j2,
                                         dir, binary(milp, mo, fx_switch(mo, i1, j1, i2, j2, dir))};
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
        const SwitchPair *sp = &g_array_index(mo->pairs, SwitchPair, k);
        positions(warm, sp->i1, cpos, xpos);
        positions(warm, sp->i2, cpos, xpos2);
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
                    LinkTransfer lt = {tval(mo, x, t[AT(mo, i, op->microbatch)]), i, (int)k};
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
                ops[n++] = (TimedOp){tval(mo, x, col[kind][AT(mo, i, j)]),
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
            if (value(x, mo->X[AT(mo, i, j)]) > 0.5) {
                PpsimOp off = {.kind = PPSIM_OP_OFF, .stage = i, .microbatch = j};
                cp[nc++] = (TimedOp){tval(mo, x, mo->O[AT(mo, i, j)]), 2 * j, off};
                off.kind = PPSIM_OP_RL;
                cp[nc++] = (TimedOp){tval(mo, x, mo->R[AT(mo, i, j)]), 2 * j + 1, off};
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

static void
fix_free(Fix *f)
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
        if (!positions(s, i, cpos, xpos) || (!offload && s->copy[i]->len > 0))
            return FALSE;
    return TRUE;
}

/* The window [t0, t1) on @warm's estimated timeline (see Fix). */
static Fix *
fix_new(const Model *mo, const PpsimSchedule *warm, const PpsimCostEstimates *c, PpsimTime t0,
        PpsimTime t1, GError **error)
{
    int p = mo->p, m = mo->m;
    if (!ppsim_op_milp_shape_ok(warm, mo->off)) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "a window's warm start is not in the model's shape");
        return NULL;
    }
    Fix *f = g_new0(Fix, 1);
    f->t0 = t0;
    f->idx = ppsim_schedule_index_new(warm, error);
    if (f->idx == NULL) {
        fix_free(f);
        return NULL;
    }
    guint32 n = ppsim_schedule_index_n_ops(f->idx);
    f->st = g_new(PpsimTime, n + 1), f->en = g_new(PpsimTime, n + 1);
    if (!ppsim_schedule_estimate(warm, f->idx, c, f->st, f->en, NULL, error)) {
        fix_free(f);
        return NULL;
    }
    f->cpos = g_new(int, (gsize)p * 3 * m), f->xpos = g_new(int, (gsize)p * 2 * m);
    f->open = g_new0(guint8, (gsize)p * 3 * m);
    f->lo = g_new(int, p), f->hi = g_new(int, p);
    f->xfix = g_new(int, (gsize)p *m), f->xrank = g_new(int, (gsize)p * 2 * m);
    f->zfirst = g_new(int, (gsize)p *m), f->zlast = g_new(int, (gsize)p *m);
    for (int i = 0; i < p; i++) {
        int *cpos = f->cpos + (gsize)i * 3 * m, *xpos = f->xpos + (gsize)i * 2 * m;
        positions(warm, i, cpos, xpos);
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
    Model mo = {.p = p, .m = m, .off = opts->offload, .stage_span = opts->stage_span};
    if (opts->window) {
        mo.fix = fix_new(&mo, warm, costs, opts->win_t0, opts->win_t1, error);
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
