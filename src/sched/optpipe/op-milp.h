/* op-milp.h: OptPipe's MILP ([OP] §3, App. C) for one stage per device, built from the cost
 * estimates, solved by the shared binding (milp/milp.h) from a warm start, and turned back
 * into schedule IR. Internal to the optpipe family. */
#pragma once

#include "milp/milp.h"
#include "sched/generator.h"

G_BEGIN_DECLS

typedef struct {
    PpsimMilpOptions solver;
    gboolean offload;    /* offload/reload choices in the model (else every activation stays) */
    gboolean no_switch;  /* leave Eq. 18 out even where GPUs share a contended PCIe switch */
    gboolean stage_span; /* [OP] Eq. 3: minimise the longest device span (first op's start to
                          * last op's end) instead of the makespan (Eq. 4) */
    gboolean window;     /* a rolling-horizon window (op-rolling.c): only the compute ops of
                          * the warm start that start in [win_t0, win_t1) on its estimated
                          * timeline are reordered; everything else keeps the warm start's
                          * orders and offload choices (every time stays free) */
    PpsimTime win_t0, win_t1;
} PpsimOpMilpOptions;

typedef struct {
    PpsimMilpResult milp; /* status, objective (ms), bound, gap, seconds */
    int n_cols, n_rows, n_binaries;
} PpsimOpMilpSolve;

/* Builds the MILP of @shape (v = 1) on @costs under the activation budget @limit ([p],
 * nullable: none), with @warm (nullable: a schedule of the same shape, F/B/W split, each
 * kind in microbatch order) as MIP start and its makespan @horizon_ps as the upper bound on
 * every time (0: a bound from the serial schedule), solves it and, when there is an
 * incumbent, writes its schedule to *@out (NULL otherwise). With @opts->window, @warm is
 * required and must pass ppsim_op_milp_shape_ok (else FALSE with an error). Errors: the
 * solver's. */
/* Whether @s is in the model's shape (F, B, W only, each kind in microbatch order; no copy
 * ops unless @offload), so that it can be a window's warm start. */
gboolean ppsim_op_milp_shape_ok(const PpsimSchedule *s, gboolean offload);

gboolean ppsim_op_milp_solve(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                             const gint64 *limit, const PpsimSchedule *warm, PpsimTime horizon_ps,
                             const PpsimOpMilpOptions *opts, PpsimSchedule **out,
                             PpsimOpMilpSolve *info, GError **error);

G_END_DECLS
