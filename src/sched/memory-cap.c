/* memory-cap.c: the scenario's memory limit as a per-device activation budget, the default
 * cap of every generator that takes one (zb, zb-v, v-half, v-min, adaoffload, optpipe), so
 * that all of them are compared under the same limit.
 */
#include "sched/generator.h"
#include "util/ppsim-error.h"

gint64
ppsim_memory_cap_budget(const PpsimCostEstimates *costs, const int *stage_device, int n_stages,
                        int device)
{
    gint64 budget = costs->memory_limit;
    for (int s = 0; s < n_stages; s++)
        if (stage_device[s] == device)
            budget -= costs->stage[s].static_mem;
    return budget;
}

char *
ppsim_memory_cap_format(const PpsimCostEstimates *costs, gint64 amount)
{
    if (costs->mem_scale > 1)
        return g_strdup_printf("%g units", (double)amount / costs->mem_scale);
    return g_strdup_printf("%.2f GiB", (double)amount / 1073741824.0);
}

gboolean
ppsim_memory_cap_default(const PpsimCostEstimates *costs, const int *stage_device, int n_stages,
                         int n_devices, gint64 *limit, gboolean *applied, const char *what,
                         GError **error)
{
    *applied = costs->memory_limit_set;
    if (!*applied)
        return TRUE;
    for (int d = 0; d < n_devices; d++) {
        limit[d] = ppsim_memory_cap_budget(costs, stage_device, n_stages, d);
    }
    /* the smallest limit that leaves every device one microbatch's activation of all its
     * stages: a microbatch holds each stage's until that stage's B, which follows the F of
     * every later stage; running one microbatch at a time needs no more */
    gint64 smallest = 0;
    int worst = -1;
    for (int d = 0; d < n_devices; d++) {
        gint64 need = 0;
        for (int s = 0; s < n_stages; s++)
            if (stage_device[s] == d)
                need += costs->stage[s].act;
        smallest = MAX(smallest, costs->memory_limit - limit[d] + need);
        if (worst < 0 && limit[d] < need)
            worst = d;
    }
    if (worst >= 0) {
        g_autofree char *lim = ppsim_memory_cap_format(costs, costs->memory_limit_gpu);
        g_autofree char *left = ppsim_memory_cap_format(costs, limit[worst]);
        g_autofree char *min =
            ppsim_memory_cap_format(costs, ppsim_estimates_gpu_memory(costs, smallest));
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "%s: memory.limit %s is infeasible: it leaves %s for activations on device "
                    "%d, less than one microbatch's; the smallest feasible memory.limit is %s",
                    what, lim, left, worst, min);
        return FALSE;
    }
    return TRUE;
}

void
ppsim_memory_cap_note(GArray *choices, const PpsimCostEstimates *costs, const gint64 *limit,
                      int n_devices)
{
    if (choices == NULL)
        return;
    if (limit == NULL) {
        ppsim_choice_add(choices, "memory_limit", "none", "memory.limit unset: no cap");
        return;
    }
    int worst = 0;
    for (int d = 1; d < n_devices; d++)
        if (limit[d] < limit[worst])
            worst = d;
    g_autofree char *total = ppsim_memory_cap_format(costs, costs->memory_limit_gpu);
    g_autofree char *value = ppsim_memory_cap_format(costs, limit[worst]);
    ppsim_choice_add(choices, "memory_limit", value,
                     "memory.limit %s less each device's static memory%s, as an activation "
                     "budget; the smallest, device %d's, shown",
                     total,
                     costs->mem_scale > 1 ? ""
                                          : " and what the framework holds (context, NCCL, "
                                            "fragmentation)",
                     worst);
}
