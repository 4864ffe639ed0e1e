/* sim-warnings.c: settings that silently do nothing, or less than a user would think; see
 * sim.h. Pure: messages out, the CLI prints them. */
#include "sim.h"
#include "cost/kernels.h"
#include "sched/registry.h"

#include <string.h>

static void warn(GPtrArray *out, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void
warn(GPtrArray *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    for (guint i = 0; i < out->len; i++)
        if (g_str_equal(g_ptr_array_index(out, i), msg)) { /* once per run */
            g_free(msg);
            return;
        }
    g_ptr_array_add(out, msg);
}

static gboolean
result_has_copies(const PpsimRunResult *res)
{
    for (int d = 0; d < res->schedule->n_devices; d++)
        if (res->schedule->copy[d]->len > 0)
            return TRUE;
    return FALSE;
}

/* A memory amount as the report shows it: GiB, or explicit units. */
static void
mem_text(GString *out, const PpsimRunResult *res, gint64 v)
{
    if (res->mem_scale == 1.0)
        g_string_append_printf(out, "%.1f GiB", (double)v / (1024.0 * 1024.0 * 1024.0));
    else
        g_string_append_printf(out, "%.2f units", (double)v / res->mem_scale);
}

/* A run with a device out of memory: which, by how much, and what would help, by what
 * fills the worst device (its static state, or its activations). */
static void
oom_advice(GPtrArray *out, const PpsimRunResult *res, const char *path)
{
    int worst = -1;
    g_autoptr(GString) devs = g_string_new(NULL);
    for (int d = 0; d < res->p; d++) {
        if (!res->devices[d].oom)
            continue;
        g_string_append_printf(devs, "%s%d", devs->len ? "," : "", d);
        if (worst < 0 || res->devices[d].peak_memory > res->devices[worst].peak_memory)
            worst = d;
    }
    if (worst < 0)
        return;
    const PpsimDeviceResult *dev = &res->devices[worst];
    g_autoptr(GString) msg = g_string_new(NULL);
    g_string_append_printf(msg, "schedule '%s': device%s %s out of memory (device %d: peak ",
                           res->label, strchr(devs->str, ',') ? "s" : "", devs->str, worst);
    mem_text(msg, res, dev->peak_memory);
    g_string_append(msg, " over the limit ");
    mem_text(msg, res, res->memory_limit);
    g_string_append(msg, ", of which static ");
    mem_text(msg, res, dev->static_memory);
    if (res->memory_limit > 0 && dev->static_memory >= res->memory_limit)
        g_string_append(msg, "): the weights and optimizer states alone do not fit: try more "
                             "pipeline stages (training.pp), tensor parallelism or ZeRO "
                             "(parallel.tp, parallel.zero), or T-Offload ({name: tpipe, "
                             "offload_optimizer: t-offload})");
    else
        g_string_append(msg, "): try recompute (model.recompute: full), a schedule that "
                             "holds fewer microbatches (1f1b, v-half, v-min, or zb with a "
                             "memory_limit), activation offload (po-h, po-f, adaoffload), or "
                             "more pipeline stages");
    if (!res->explicit_mode)
        g_string_append_printf(msg, "; 'ppsim search %s --gpus N' ranks the layouts that fit",
                               path);
    warn(out, "%s", msg->str);
}

/* A device in the verdict band (run-result.h): over the limit with every overhead at its
 * default, within it with no allocator fragmentation. */
static void
tight_note(GPtrArray *out, const PpsimRunResult *res)
{
    for (int d = 0; d < res->p; d++) {
        const PpsimDeviceResult *dev = &res->devices[d];
        if (dev->memory_verdict != PPSIM_MEM_TIGHT)
            continue;
        g_autoptr(GString) msg = g_string_new(NULL);
        g_string_append_printf(msg, "schedule '%s': device %d is tight on memory: peak ",
                               res->label, d);
        mem_text(msg, res, dev->peak_memory);
        g_string_append(msg, " over the limit ");
        mem_text(msg, res, res->memory_limit);
        g_string_append(msg, ", but ");
        mem_text(msg, res, dev->peak_memory_low);
        g_string_append(msg, " without the allocator's fragmentation (memory.fragmentation 0): "
                             "it may fit; plan, sweeps and search count it as not fitting");
        warn(out, "%s", msg->str);
    }
}

GPtrArray *
ppsim_sim_warnings(const PpsimScenario *sc, const GPtrArray *results)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    const char *path = sc->path ? sc->path : "scenario";
    if (sc->costs.present && sc->has_model)
        warn(out,
             "%s: 'model' is ignored: 'costs' is given, so every duration and size comes "
             "from it (explicit-cost mode)",
             path);
    if (!sc->costs.present && sc->model.recompute == PPSIM_RECOMPUTE_SELECTIVE &&
        sc->model.flash_attention)
        warn(out,
             "%s: 'model.recompute: selective' saves nothing with flash_attention (no s^2 "
             "attention scores are stored); it is treated as none",
             path);
    if (!sc->costs.present && sc->memory_limit_bytes == 0 && sc->memory_limit_set)
        warn(out,
             "%s: 'memory.limit' is 0, which means no limit: no device can run out of "
             "memory",
             path);
    else if (!sc->costs.present && sc->memory_limit_bytes == 0)
        warn(out,
             "%s: 'hardware.gpu.memory' is 0 bytes: every device is out of memory (the limit "
             "is reported as 1 byte)",
             path);
    if (sc->training.grad_accumulation != PPSIM_GRAD_ACCUM_FUSED && !ppsim_kernels_active(sc))
        warn(out,
             "%s: 'training.grad_accumulation' is a pass of the kernel model: it does nothing "
             "with %s",
             path, sc->costs.present ? "'costs' given" : "'hardware.gpu.efficiency' set");
    const PpsimParallel *par = &sc->parallel;
    if (par->present && par->sequence_parallel && par->tp == 1)
        warn(out, "%s: 'parallel.sequence_parallel' does nothing with tp = 1", path);
    if (par->present && par->zero > 0 && par->dp == 1 && par->cp == 1)
        warn(out,
             "%s: 'parallel.zero: %d' does nothing with dp x cp = 1 (one replica holds all "
             "the states)",
             path, par->zero);
    if (par->present && par->tp == 1 && par->tp_efficiency != 1.0)
        warn(out, "%s: 'parallel.tp_efficiency' applies only with tp > 1", path);
    for (guint i = 0; i < sc->schedules->len; i++) {
        const PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
        const PpsimScheduleClass *klass = ppsim_sched_registry_lookup(spec->name);
        if (klass != NULL && klass->chunks == 0 && !sc->training.chunks_set)
            warn(out,
                 "schedule '%s' runs with v = 1 chunk per device because "
                 "'training.chunks' is unset; set it (e.g. 2) for its interleaved form",
                 spec->label ? spec->label : spec->name);
    }
    for (guint i = 0; results != NULL && i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        if (sc->costs.present && sc->costs.offload_ps == 0 && result_has_copies(res))
            warn(out,
                 "schedule '%s' offloads activations, but 'costs.offload' is 0: the "
                 "transfers take no time",
                 res->label);
        oom_advice(out, res, path);
        tight_note(out, res);
    }
    return out;
}
