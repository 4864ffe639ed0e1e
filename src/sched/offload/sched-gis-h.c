/* sched-gis-h.c: GIS-H, PipeOffload's half-memory generalised interleave: group size
 * g = ceil(p/2) ([PO] §3.2, Table 1): rank-0 peak g(v-1) + p chunk-activations, about half
 * of interleaving's, for an extra bubble of (p-g)(v-1) passes ([PO] Table 1). */
#include "sched/offload/gis.h"

static gboolean
gis_h_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    (void)params;
    return ppsim_gis_generate(shape, (shape->p + 1) / 2, out, error);
}

const PpsimScheduleClass ppsim_schedule_gis_h = {
    .name = "gis-h",
    .summary = "GIS with group size ceil(p/2): about half the activation memory",
    .reference = "[PO] §3.2, Table 1",
    .chunks = 0,
    .generate = gis_h_generate,
};
