/* sched-po-h.c: PO-H ([PO] §5, Table 1): PipeOffload offloading ceil(v/2) chunks per device. */
#include "sched/pipeoffload.h"

static gboolean
po_h_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
              PpsimSchedule **out, GError **error)
{
    return ppsim_pipeoffload_generate_auto(shape, params, PPSIM_PO_UNIFORM, (shape->v + 1) / 2,
                                           NULL, out, error);
}

const PpsimScheduleClass ppsim_schedule_po_h = {
    .name = "po-h",
    .summary = "PipeOffload PO-H: offload half of each device's chunks",
    .reference = "[PO] §5, Table 1",
    .chunks = 0,
    .options = ppsim_po_preset_options,
    .generate = po_h_generate,
};
