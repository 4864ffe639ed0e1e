/* gis.h: the generalised interleaved schedule shared by gis and gis-h (internal). */
#pragma once

#include "sched/schedule.h"

/* The k-th chunk-microbatch a rank runs in Megatron's interleaved order ([MEG]
 * schedules.py): groups of @g microbatches per chunk, chunks ascending for forwards and
 * descending for backwards. Shared by interleaved, gis and gis-h. */
void ppsim_interleaved_slot(int k, int g, int v, gboolean forward, int *chunk, int *mb);

/* GIS with group size @g ([PO] §3.2). Errors: PPSIM_SCHED_ERROR_UNSUPPORTED. */
gboolean ppsim_gis_generate(const PpsimPipelineShape *shape, int g, PpsimSchedule **out,
                            GError **error);
