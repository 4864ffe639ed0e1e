/* op-eval.h: a schedule timed and measured on the cost estimates (internal to the optpipe
 * family): the estimated timeline of co-schedule.h plus each device's activation peak under
 * the replay's memory rules. */
#pragma once

#include "sched/generator.h"

G_BEGIN_DECLS

typedef struct {
    PpsimTime makespan_ps;  /* end of the last op */
    PpsimTime span_ps;      /* max over devices of (end of its last compute op - start of its
                             * first): [OP] Eq. 3's stage span */
    PpsimTime start_sum_ps; /* sum of the compute ops' start times: the rolling windows'
                             * tie-break (the earlier the ops, the more room later) */
    gint64 peak_max;        /* max over devices of the activation peak */
    gboolean fits;          /* every device's peak within @limit */
} PpsimOpEval;

/* Times @sched on @costs (every op as early as its inputs and lists allow, comm_ps across
 * devices) and replays the memory rules (src/README.md "Semantics") on that timeline: F allocates
 * act at its start, B frees act - act_w and W act_w at their ends (BW all), OFF frees act at its
 * end, RL allocates act at its start. At equal times compute frees come first (the next op of a
 * list starts when the previous ends), then allocations, then copy frees (conservative).
 * @limit ([n_devices], nullable: none) is each device's activation budget; @peak (nullable,
 * [n_devices]) receives each device's peak. Errors: the cyclic-wait error. */
gboolean ppsim_op_eval(const PpsimSchedule *sched, const PpsimCostEstimates *costs,
                       const gint64 *limit, gint64 *peak, PpsimOpEval *out, GError **error);

G_END_DECLS
