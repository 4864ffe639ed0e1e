/* sched-po-f.c: PO-F ([PO] §5, Table 1): PipeOffload offloading every chunk it can; worth
 * it only when the offload ratio k <= 1 ([PO] Formula 1). */
#include "sched/pipeoffload.h"

static gboolean
po_f_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
              PpsimSchedule **out, GError **error)
{
    return ppsim_pipeoffload_generate_auto(shape, params, PPSIM_PO_UNIFORM, shape->v, NULL, out,
                                           error);
}

const PpsimScheduleClass ppsim_schedule_po_f = {
    .name = "po-f",
    .summary = "PipeOffload PO-F: offload all chunks (when k <= 1)",
    .reference = "[PO] §5, Table 1",
    .chunks = 0,
    .options = ppsim_po_preset_options,
    .generate = po_f_generate,
};
