/* co-schedule.h: coordinating the copy streams of devices that share a host link
 * ([PO] App. D, "topology-aware offload scheduling") (internal).
 */
#pragma once

#include "sched/generator.h"
#include "schedule/schedule-index.h"

G_BEGIN_DECLS

/* The generators' estimated timeline (estimate.c). */

/* Estimated duration of @op from the generator's cost estimates: F, B, W, B+W for BW, R, and
 * the one-way transfer estimate for OFF and RL (0 for OPT, which has no estimate). */
PpsimTime ppsim_estimate_op_ps(const PpsimCostEstimates *costs, const PpsimOp *op);

/* The estimated timeline of @sched (indexed by @idx): every op starts as early as its inputs
 * (+ comm_ps across devices) and its list allow, durations from @costs. Fills @start and
 * @end ([n_ops], by the dense ids of @idx) and, if non-NULL, @rank with each op's position
 * in a topological order (which costs a walk over the dependency graph; without ranks the
 * lists are timed in one pass). Errors: the cyclic-wait error. */
gboolean ppsim_schedule_estimate(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                                 const PpsimCostEstimates *costs, PpsimTime *start, PpsimTime *end,
                                 guint32 *rank, GError **error);

/* How the copy streams of the devices behind one host link (PCIe switch) relate ([PO]
 * App. D, Table 3):
 *   - INDEPENDENT: each device transfers on its own plan; on a shared switch, transfers
 *     that overlap share the uplink (the "parallel" rows of Table 3, unsynchronized);
 *   - SYNC_INTERLEAVED: cross-device events before each transfer keep the group in rounds,
 *     each round at most one offload (D2H) and one reload (H2D) from different devices, so
 *     the uplink carries one transfer per direction at a time and the two directions overlap
 *     (full duplex) — the co-schedule [PO] uses on A100 servers;
 *   - SYNC_PARALLEL: the same rounds, but a round gathers transfers of one direction from
 *     different devices, which then share the uplink (Table 3's "synchronized parallel"). */
typedef enum {
    PPSIM_CO_INDEPENDENT,
    PPSIM_CO_SYNC_INTERLEAVED,
    PPSIM_CO_SYNC_PARALLEL,
} PpsimCoSchedule;

/* Adds the cross-device waits (schedule.h copy_sync) of @mode to @sched, whose copy lists
 * are final, for each group of devices with the same @group id ([n_devices]).
 *
 * The rounds are formed on the schedule's estimated timeline (every op as early as its
 * inputs and its list allow, on @costs, comm_ps across devices): a group's transfers are
 * taken by estimated start (ties: topological order); one joins the current round if the
 * round has no transfer of its device and @mode admits its direction, else it opens the
 * next round. Each transfer then waits for every transfer of the previous round on the other
 * devices (its own device's come before it on its stream). Every wait points forward in
 * that topological order, so the result has no cyclic wait by construction.
 * Errors: the cyclic-wait error if @sched already had one. */
gboolean ppsim_co_schedule(PpsimSchedule *sched, const PpsimCostEstimates *costs, const int *group,
                           PpsimCoSchedule mode, GError **error);

/* ppsim_co_schedule in two steps, for several modes on one schedule: the groups' transfers
 * in the order the rounds take them (the estimated timeline of @sched, which has no waits
 * yet), then the waits of one mode added to a schedule with the same lists (@sched itself
 * or a copy of it). */
typedef struct PpsimCoPlan PpsimCoPlan;
PpsimCoPlan *ppsim_co_plan_new(const PpsimSchedule *sched, const PpsimCostEstimates *costs,
                               const int *group, GError **error);
void ppsim_co_plan_apply(const PpsimCoPlan *plan, PpsimSchedule *sched, PpsimCoSchedule mode);
void ppsim_co_plan_free(PpsimCoPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimCoPlan, ppsim_co_plan_free)

G_END_DECLS
