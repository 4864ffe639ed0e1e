/* op-milp-model.h: the MILP model of op-milp.c, shared by its parts (internal to op-milp*.c):
 * the model's columns, a rolling-horizon window's fixed part (op-milp-window.c), the MIP
 * start and the incumbent as schedule IR (op-milp-extract.c). */
#pragma once

#include "milp/milp.h"
#include "sched/generator.h"
#include "schedule/schedule-index.h"

#include <math.h>

G_BEGIN_DECLS

#define PS_PER_MS 1e9

typedef struct OpFix OpFix;

typedef struct {
    int p, m;
    gboolean off, stage_span;
    double big_m, horizon;
    int C;
    int *sF, *sB, *sW, *O, *R, *X; /* [p * m] */
    int *yFB, *yFW, *yBW, *h;      /* [p * m * m], (a, b) with a > b, else -1 */
    int *zF, *zB, *zW; /* [p * m * m], (b, c), b > c: b is on the host around F(b)... see below */
    int n_bin;
    GArray *pairs; /* OpSwitchPair: Eq. 18's ordering binaries */
    OpFix *fix;    /* a window (rolling horizon): what is fixed to the warm start; NULL:
                    * the full model */
    GArray *ub;    /* [n_cols] each column's upper bound (every lower bound is 0) */
    GArray *cfix;  /* [n_cols] in a window, a time fixed to the warm start's (NAN: free) */
    int *scols;    /* scratch for emit() */
    double *scoefs;
} OpModel;

/* A binary fixed by a window is no column but one of these constants. */
#define K0 (-10)
#define K1 (-11)

/* The window of a rolling-horizon solve (op-rolling.c): on each device the compute ops of
 * the warm start that start in [t0, t1) on its estimated timeline are open, one contiguous
 * run [lo, hi) of its list; every order that involves a closed op, and every offload choice
 * whose F or B is closed, is the warm start's. */
struct OpFix {
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
};

/* Eq. 18: transfers (i1, j1) and (i2, j2) of one direction (0 offload, 1 reload) on two
 * GPUs of a switch; @col = 1 when the first goes first. */
typedef struct {
    int i1, j1, i2, j2, dir, col;
} OpSwitchPair;

#define AT(mo, i, j) ((i) * (mo)->m + (j))
#define AT2(mo, i, a, b) (((i) * (mo)->m + (a)) * (mo)->m + (b))

static inline double
op_ms(PpsimTime t)
{
    return (double)t / PS_PER_MS;
}

/* A binary's value in the solution @x. */
static inline double
op_value(const double *x, int c)
{
    return c == K1 ? 1 : c == K0 ? 0 : x[c];
}

/* A time's value in the solution @x (a window's past keeps the warm start's). */
static inline double
op_tval(const OpModel *mo, const double *x, int c)
{
    double fixed = g_array_index(mo->cfix, double, c);
    return isnan(fixed) ? x[c] : fixed;
}

/* Window helpers (all answer "free" without a window). The index of compute op (kind @k,
 * microbatch @j) of device @i in OpFix's [p][3m] arrays. */
#define CI(mo, i, k, j) (((i)*3 + (k)) * (mo)->m + (j))

/* op-milp-window.c: the window's answers, each "free" (-1, or TRUE) without a window. */
int ppsim_op_fx_order(const OpModel *mo, int i, int ka, int a, int kb, int b);
gboolean ppsim_op_fx_needed(const OpModel *mo, int i, int ka, int a, int kb, int b);
gboolean ppsim_op_fx_copy_needed(const OpModel *mo, int i, int ca, int cb);
int ppsim_op_fx_x(const OpModel *mo, int i, int j);
int ppsim_op_fx_away(const OpModel *mo, int i, int b, int kx, int jx, int need1, int need0);
int ppsim_op_fx_switch(const OpModel *mo, int i1, int j1, int i2, int j2, int dir);
void ppsim_op_fix_away_span(const OpModel *mo, int i);
void ppsim_op_fix_past(OpModel *mo, int c, gint64 op);
gboolean ppsim_op_positions(const PpsimSchedule *s, int d, int *cpos, int *xpos);
OpFix *ppsim_op_fix_new(const OpModel *mo, const PpsimSchedule *warm, const PpsimCostEstimates *c,
                        PpsimTime t0, PpsimTime t1, GError **error);
void ppsim_op_fix_free(OpFix *f);

/* op-milp-extract.c: @warm's binaries as the MIP start; the incumbent @x as IR. */
void ppsim_op_model_start(PpsimMilp *milp, const OpModel *mo, const PpsimSchedule *warm,
                          const PpsimCostEstimates *c);
PpsimSchedule *ppsim_op_model_extract(const OpModel *mo, const PpsimCostEstimates *c,
                                      const double *x);

G_END_DECLS
