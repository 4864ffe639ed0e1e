/* pipeoffload.h: PipeOffload's schedules with activation offload (internal). */
#pragma once

#include "sched/generator.h"
#include "sched/co-schedule.h"

G_BEGIN_DECLS

/* How microbatches are organised ([PO] §2): the uniform repeating strategy (PipeOffload's
 * own, uniform-repeat.c) or the interleaving strategy (GIS, group size p). */
typedef enum {
    PPSIM_PO_UNIFORM,
    PPSIM_PO_INTERLEAVED,
} PpsimPoStrategy;

/* Builds the compute order with @strategy, then offloads, on each device, its @n_offload
 * longest-lived stages (ceil(v/2) for PO-H, v for PO-F), or exactly the stages whose entry
 * in @stage_mask (nullable, [n_stages]) is TRUE, wherever the F -> B gap hides the round
 * trip ([PO] §2, §4.2, §4.4); then coordinates the copy streams of devices sharing a host
 * link as @co_schedule says (the option's text; NULL = "auto"; [PO] App. D). */
gboolean ppsim_pipeoffload_generate(const PpsimPipelineShape *shape,
                                    const PpsimCostEstimates *costs, PpsimPoStrategy strategy,
                                    int n_offload, const gboolean *stage_mask,
                                    const char *co_schedule, PpsimSchedule **out, GError **error);

/* ppsim_pipeoffload_generate with the `co_schedule` option of @params (po-auto.c). Where it
 * is auto and the GPUs behind a switch can oversubscribe its uplink, the candidate
 * co-schedules (sync-interleaved, independent, sync-parallel) are each planned and replayed
 * through params->measure, and the fastest that fits the memory limit is kept (ties: the
 * earlier; without a replay, the authors' rule: sync-interleaved). Option `co_microbatches`
 * may have them replayed with fewer microbatches, the winner then built and replayed with
 * all of them. The choice goes to params->choices. */
gboolean ppsim_pipeoffload_generate_auto(const PpsimPipelineShape *shape,
                                         const PpsimScheduleParams *params,
                                         PpsimPoStrategy strategy, int n_offload,
                                         const gboolean *stage_mask, PpsimSchedule **out,
                                         GError **error);

/* PipeOffload's copy planning on a compute order someone else built (@s: compute lists
 * final, copy lists empty): offloads the activations of the stages marked in @mask
 * ([n_stages]) wherever the F -> B gap hides the round trip, at [PO] §4.2's slots, then
 * coordinates the copy streams of devices sharing a host link as @co_schedule says (NULL =
 * "auto"). AdaOffload ([OP] App. D) finishes its schedules with it. */
gboolean ppsim_pipeoffload_plan(PpsimSchedule *s, const PpsimCostEstimates *costs,
                                const gboolean *mask, const char *co_schedule, GError **error);

/* How many times ppsim_pipeoffload_plan() times the whole schedule on the estimates under
 * @co_schedule on @costs (0: each device plans on its own list alone; 2 where the copy
 * streams of devices sharing a switch are coordinated). -1 for an unknown @co_schedule. */
int ppsim_pipeoffload_plan_passes(const PpsimCostEstimates *costs, int n_devices,
                                  const char *co_schedule);

/* The steps of ppsim_pipeoffload_generate (sched-pipeoffload.c), for po-auto.c: the compute
 * order of @strategy and the stages to offload (@stage_mask, or the @n_offload
 * longest-lived of each device; *@mask: [n_stages], transfer full), which every co-schedule
 * shares; */
gboolean ppsim_po_compute(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                          PpsimPoStrategy strategy, int n_offload, const gboolean *stage_mask,
                          PpsimSchedule **out, gboolean **mask, GError **error);
/* the copy lists, planned per device, or with @group (nullable) per switch; */
gboolean ppsim_po_plan_copies(PpsimSchedule *s, const PpsimCostEstimates *c, const gboolean *mask,
                              const int *group, GError **error);
/* and option `co_schedule`'s text as a mode, with the devices' switch (or pair) ids in
 * @group ([p]). */
gboolean ppsim_po_co_mode(const char *text, const PpsimCostEstimates *costs, int p, int *group,
                          PpsimCoSchedule *mode, GError **error);

/* The `co_schedule` option, shared by pipeoffload, po-h and po-f. */
#define PPSIM_PO_CO_HELP                                                                           \
    "how the GPUs behind one PCIe switch share it ([PO] App. D): auto (where they can "            \
    "oversubscribe the switch's uplink, the fastest of the three plans below that fits memory, "   \
    "by replay; else independent), independent, "                                                  \
    "sync-interleaved (rounds of one offload and one reload from different GPUs) or "              \
    "sync-parallel (rounds of one direction)"
#define PPSIM_PO_CO_OPTION                                                                         \
    {                                                                                              \
        "co_schedule", PPSIM_OPTION_STRING, "auto", PPSIM_PO_CO_HELP                               \
    }

/* The `co_microbatches` option, shared likewise: how many microbatches co_schedule: auto
 * replays its candidates with. */
#define PPSIM_PO_CO_M_HELP                                                                         \
    "microbatches co_schedule: auto replays its three plans with: auto (all m while p*m <= "       \
    "4096, else max(ceil(4096/p), p); the winner is then built and replayed with all m, and "      \
    "if it does not fit the memory limit the three are replayed with all m), all, or a number"
#define PPSIM_PO_CO_M_OPTION                                                                       \
    {                                                                                              \
        "co_microbatches", PPSIM_OPTION_STRING, "auto", PPSIM_PO_CO_M_HELP                         \
    }

/* The option table of the presets po-h and po-f. */
extern const PpsimOptionSpec ppsim_po_preset_options[];

G_END_DECLS
