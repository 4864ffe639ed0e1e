/* gis.h: the generalised interleaved schedule shared by gis and gis-h (internal). */
#pragma once

#include "sched/interleaved.h"

/* GIS with group size @g ([PO] §3.2). Errors: PPSIM_SCHED_ERROR_UNSUPPORTED. */
gboolean ppsim_gis_generate(const PpsimPipelineShape *shape, int g, PpsimSchedule **out,
                            GError **error);
