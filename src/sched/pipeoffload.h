/* pipeoffload.h: PipeOffload's offload placement on a GIS schedule (internal). */
#pragma once

#include "sched/schedule.h"

/* GIS with group size p, then offload the first @n_offload chunks of each device
 * (ceil(v/2) for PO-H, v for PO-F) where the F -> B gap allows it. */
gboolean ppsim_pipeoffload_generate(const PpsimPipelineShape *shape,
                                    const PpsimCostEstimates *costs, int n_offload,
                                    PpsimSchedule **out, GError **error);
