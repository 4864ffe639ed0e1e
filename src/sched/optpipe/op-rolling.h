/* op-rolling.h: OptPipe's MILP on instances too large to solve whole: a rolling horizon of
 * time windows over the warm start, each window's orders re-solved by the MILP with the
 * rest fixed (op-milp.h `window`). Internal to the optpipe family. */
#pragma once

#include "sched/optpipe/op-eval.h"
#include "sched/optpipe/op-milp.h"

G_BEGIN_DECLS

typedef struct {
    int n_windows;    /* windows solved */
    int n_improved;   /* windows whose schedule replaced the incumbent (strictly better) */
    int n_moved;      /* windows whose schedule replaced it at the same score, its compute
                       * ops starting earlier in sum (the tie-break) */
    int n_cut;        /* windows the wall clock stopped (the result can depend on the machine) */
    int n_died;       /* windows whose solver process died (the incumbent stayed) */
    int max_binaries; /* the largest window's binary count */
    double seconds;   /* the windows' solver wall time, summed */
} PpsimOpRollingInfo;

/* Improves *@sched (the warm start, in the model's shape: ppsim_op_milp_shape_ok; *@eval its
 * evaluation on @costs under @limit) window by window: windows of @window_ops compute ops per
 * device on average (a time span of makespan * window_ops / (3 m) on the incumbent's
 * estimated timeline), each overlapping the one before by half, from time 0 to the end. Each
 * window's MILP starts from the incumbent, with @opts's node limit and gap and an equal share
 * of its time limit, and as its second objective the open ops' start times; its schedule
 * replaces the incumbent only if, timed and measured as the replay does (op-eval.c), it fits
 * @limit and scores better (makespan, or Eq. 3's span with @opts->stage_span), or scores the
 * same with its compute ops starting earlier in sum on the estimated timeline (a move that
 * later windows can build on). *@sched and *@eval are replaced in place. Errors: the
 * solver's. */
gboolean ppsim_op_rolling(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                          const gint64 *limit, const PpsimOpMilpOptions *opts, int window_ops,
                          PpsimSchedule **sched, PpsimOpEval *eval, PpsimOpRollingInfo *info,
                          GError **error);

G_END_DECLS
