/* sched-zb.c: the automatic Zero Bubble schedule ([ZB] §3): one stage per device, backward
 * split into B and W, built on the generator's per-stage cost estimates (heterogeneous
 * stages and hardware mode alike) to the smallest span it finds while each device's
 * activations stay within memory_limit (in M_B, one microbatch's activation of the device's
 * stage): ZB-1p is memory_limit = p (the default), ZB-2p is 2p ([ZB] §5.1). The search is
 * in zb-auto.c. Any p >= 1, m >= 1; memory_limit >= 1.
 */
#include "sched/zb-auto.h"
#include "util/ppsim-error.h"

#include <math.h>

static const PpsimOptionSpec zb_options[] = {
    {"memory_limit", PPSIM_OPTION_DOUBLE, NULL,
     "activation cap per device in M_B (one microbatch of the device's stage), >= 1; "
     "default p (ZB-1p); 2p gives ZB-2p"},
    {NULL}};

static gboolean
zb_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params, PpsimSchedule **out,
            GError **error)
{
    int p = shape->p;
    double cap = ppsim_options_is_set(params->options, "memory_limit")
                     ? ppsim_options_get_double(params->options, "memory_limit")
                     : p;
    if (!(cap >= 1) || !isfinite(cap)) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "zb: option 'memory_limit' must be at least 1 (M_B, one microbatch's "
                    "activation of a stage: the minimum that lets a stage run an F), got %g",
                    cap);
        return FALSE;
    }
    g_autofree gint64 *limit = g_new(gint64, p);
    for (int d = 0; d < p; d++)
        limit[d] = (gint64)floor(cap * (double)params->costs->stage[d].act + 1e-9);
    PpsimSchedule *sched =
        ppsim_zb_auto(p, shape->m, params->costs, limit, PPSIM_ZB_AUTO_DEFAULT, NULL, error);
    if (sched == NULL) {
        g_prefix_error(error, "zb: ");
        return FALSE;
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_zb = {
    .name = "zb",
    .summary = "Zero Bubble automatic (ZB-1p/ZB-2p): greedy search under a memory cap in M_B",
    .reference = "[ZB] §3",
    .chunks = 1,
    .options = zb_options,
    .generate = zb_generate,
};
