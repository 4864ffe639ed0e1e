/* milp.h: a small mixed-integer linear program and its solution by COIN-OR CBC (C API),
 * the one binding every MILP user shares.
 *
 * A model is columns (bounds, objective coefficient, integrality), rows (sparse, with a
 * sense and a right-hand side) and an optional MIP start for the integer columns; solving
 * it honours a time limit, a node limit, a relative gap and a thread count and reports the
 * status, the incumbent's objective, the best bound, the gap and the wall time. Minimises.
 * The time limit is a hard wall-clock bound (milp-cbc.c: the solve runs in a child process
 * that is killed at the deadline): a solve returns within it plus a few milliseconds, and
 * when CBC itself has not returned by then the result has no incumbent (cut_off), so the
 * caller keeps its MIP start. A solver process that dies (CBC crashing, or killed) is no
 * error either: the result has no incumbent (died), and the caller keeps its MIP start.
 * Built without CBC (meson found no `cbc`), ppsim_milp_available() is FALSE and
 * ppsim_milp_solve() fails with PPSIM_SCHED_ERROR_UNSUPPORTED.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct PpsimMilp PpsimMilp;

typedef enum {
    PPSIM_MILP_OPTIMAL,     /* proved optimal (within the requested gap) */
    PPSIM_MILP_LIMIT,       /* stopped on the time or node limit: with an incumbent, or
                             * none of the solver's own when cut_off */
    PPSIM_MILP_NO_SOLUTION, /* stopped on a limit without any feasible solution */
    PPSIM_MILP_INFEASIBLE,  /* proved infeasible */
} PpsimMilpStatus;

typedef struct {
    double time_limit_s; /* hard wall-clock limit; <= 0: none */
    gint64 node_limit;   /* branch-and-bound nodes; <= 0: none */
    double gap;          /* stop when (objective - bound) / |objective| <= gap */
    int threads;         /* CBC threads; 1 is deterministic */
    gboolean light;      /* no cut generation at the root and no strong branching (a search
                          * that only improves its MIP start: optpipe's rolling windows) */
} PpsimMilpOptions;

typedef struct {
    PpsimMilpStatus status;
    gboolean time_limit_hit; /* the wall-clock limit stopped the search */
    gboolean cut_off;        /* the solver had not returned at the deadline and was stopped:
                              * x is NULL, bound the LP relaxation's (NAN: not solved yet) */
    double objective;        /* incumbent's (NAN without one) */
    double bound;            /* best lower bound */
    double gap;              /* (objective - bound) / |objective|, 0 when proved */
    double seconds;          /* wall time of the solve */
    gboolean died;           /* the solver's process died before it answered (a CBC crash,
                              * or killed by someone): x is NULL as with cut_off, bound the
                              * LP relaxation's if it was sent; died_why says how it ended */
    char died_why[64];
    double *x; /* [n_cols] incumbent (NULL without one), owned */
} PpsimMilpResult;

gboolean ppsim_milp_available(void);

/* Returns: (transfer full). */
PpsimMilp *ppsim_milp_new(void);
void ppsim_milp_free(PpsimMilp *milp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimMilp, ppsim_milp_free)

/* Adds a column; returns its index. */
int ppsim_milp_add_col(PpsimMilp *milp, double lower, double upper, double objective,
                       gboolean integer);
/* Adds the row sum(coefs[k] x[cols[k]]) @sense @rhs, @sense one of 'L' (<=), 'G' (>=),
 * 'E' (=). Returns its index. */
int ppsim_milp_add_row(PpsimMilp *milp, int nz, const int *cols, const double *coefs, char sense,
                       double rhs);
int ppsim_milp_n_cols(const PpsimMilp *milp);
int ppsim_milp_n_rows(const PpsimMilp *milp);
/* Value of integer column @col in the MIP start (CBC completes the continuous ones). */
void ppsim_milp_set_start(PpsimMilp *milp, int col, double value);

/* Solves. Fills @out (clear it with ppsim_milp_result_clear). Errors: no solver
 * (PPSIM_SCHED_ERROR_UNSUPPORTED), or the solver abandoned the search
 * (PPSIM_SCHED_ERROR_INVALID). Neither crashes. */
gboolean ppsim_milp_solve(const PpsimMilp *milp, const PpsimMilpOptions *opts, PpsimMilpResult *out,
                          GError **error);
void ppsim_milp_result_clear(PpsimMilpResult *res);

/* "optimal", "time_limit", "node_limit", "no_solution", "infeasible", "crashed". */
const char *ppsim_milp_status_name(const PpsimMilpResult *res);

G_END_DECLS
