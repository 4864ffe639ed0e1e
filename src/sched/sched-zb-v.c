/* sched-zb-v.c: ZB-V ([ZB] §6): 2p stages in a V (device d holds stages d and 2p-1-d), the
 * backward split into B and W, at most p M_B of activations per device (M_B = one
 * microbatch's activations of the device's two stages), built by the list scheduler of
 * zb-list.c on the generator's cost estimates. Any p >= 1, m >= 1 (v = 2).
 *
 * Measured (explicit mode, T_F = T_B = T_W, p2p = 0): the peak is exactly p M_B on every
 * device (and exactly the cap when memory_limit is lower), the last devices have no bubble,
 * but the first ones end a constant gap after their work, independent of m: p - 1 to about
 * 1.25p passes for p <= 16 (p = 4, m = 8: span 52 for 48 of work), where the paper's
 * hand-made warm-up (2p - i forwards of the first chunk and i - 1 of the second on worker
 * i) reaches zero. Closing that gap is open work; the summary says "near-zero" until then.
 */
#include "sched/zb-list.h"

static const PpsimOptionSpec zbv_options[] = {
    {"memory_limit", PPSIM_OPTION_DOUBLE, NULL,
     "activation cap per device in M_B (one microbatch of the device's two stages); "
     "default p, as [ZB] §6"},
    {NULL}};

static gboolean
zbv_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
             PpsimSchedule **out, GError **error)
{
    int p = shape->p, S = 2 * p;
    double cap = ppsim_options_is_set(params->options, "memory_limit")
                     ? ppsim_options_get_double(params->options, "memory_limit")
                     : p;
    const PpsimStageEstimate *st = params->costs->stage;
    g_autofree gint64 *limit = g_new(gint64, p);
    for (int d = 0; d < p; d++)
        limit[d] = (gint64)(cap * (st[d].act + st[S - 1 - d].act));
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(p, S, shape->m);
    ppsim_schedule_map_vshape(sched);
    if (!ppsim_zb_list_schedule(sched, shape->m, params->costs, limit, error)) {
        g_prefix_error(error, "zb-v: ");
        return FALSE;
    }
    *out = g_steal_pointer(&sched);
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_zb_v = {
    .name = "zb-v",
    .summary = "ZB-V (list-scheduled): V-shaped 2 chunks/device, peak p M_B, near-zero bubble",
    .reference = "[ZB] §6",
    .chunks = 2,
    .options = zbv_options,
    .generate = zbv_generate,
};
