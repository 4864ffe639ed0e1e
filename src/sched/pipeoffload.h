/* pipeoffload.h: PipeOffload's schedules with activation offload (internal). */
#pragma once

#include "sched/schedule.h"

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
 * trip ([PO] §2, §4.2, §4.4). */
gboolean ppsim_pipeoffload_generate(const PpsimPipelineShape *shape,
                                    const PpsimCostEstimates *costs, PpsimPoStrategy strategy,
                                    int n_offload, const gboolean *stage_mask, PpsimSchedule **out,
                                    GError **error);

G_END_DECLS
