/* columns.c: the per-device columns (columns.h). Their order is the JSON device object's
 * and, for those with a CSV name, the CSV row's; both are contracts (results/README.md "Command
 * line"), so rows are only ever appended where a format allows it. */
#include "report/columns.h"
#include "util/fmt.h"

#include <stddef.h>
#include <string.h>

#define COL(json, group, csv, text, kind, field, flags)                                            \
    {                                                                                              \
        json, group, csv, text, PPSIM_COLUMN_##kind, offsetof(PpsimDeviceResult, field), flags     \
    }

const PpsimDeviceColumn ppsim_device_columns[] = {
    COL("id", NULL, "device", NULL, ID, id, 0),
    COL("busy", NULL, "busy_ms", NULL, MS, busy_ps, 0),
    COL("first_start", NULL, "first_start_ms", NULL, MS, first_start_ps, 0),
    COL("end", NULL, "end_ms", NULL, MS, end_ps, 0),
    COL("bubble_ratio", NULL, "device_bubble_ratio", NULL, RATIO, bubble_ratio, 0),
    COL("peak_activation", NULL, "peak_activation", NULL, MEM, peak_activation, 0),
    COL("peak_memory", NULL, "peak_memory", NULL, MEM, peak_memory, 0),
    COL("static_memory", NULL, NULL, NULL, MEM, static_memory, 0),
    /* hardware mode: peak_memory by kind (src/README.md "How memory is modelled") and the headroom
     */
    COL("weights", "memory_breakdown", NULL, NULL, MEM, mem_weights, PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("gradients", "memory_breakdown", NULL, NULL, MEM, mem_gradients,
        PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("optimizer", "memory_breakdown", NULL, NULL, MEM, mem_optimizer,
        PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("activations", "memory_breakdown", NULL, NULL, MEM, mem_activations,
        PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("logits", "memory_breakdown", NULL, NULL, MEM, mem_logits, PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("buffers", "memory_breakdown", NULL, NULL, MEM, mem_buffers, PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("overheads", "memory_breakdown", NULL, NULL, MEM, mem_overheads,
        PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("memory_free", NULL, NULL, NULL, MEM, mem_free, PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("oom", NULL, "oom", NULL, BOOL, oom, 0),
    /* the verdict band (run-result.h): fits | tight | oom, and its low end */
    COL("memory_verdict", NULL, NULL, NULL, VERDICT, memory_verdict, 0),
    COL("peak_memory_low", NULL, NULL, NULL, MEM, peak_memory_low, PPSIM_COLUMN_MEMORY_BREAKDOWN),
    COL("peak_time", NULL, NULL, NULL, MS, peak_time_ps, 0),
    COL("peak_op", NULL, NULL, NULL, OP, peak_op, 0),
    /* idle time: before the first op, waiting between ops (dependency, transfer/offload),
     * after the last op */
    COL("warmup", "idle", NULL, NULL, MS, idle_warmup_ps, 0),
    COL("dependency", "idle", NULL, NULL, MS, idle_wait_ps, 0),
    COL("transfer", "idle", NULL, NULL, MS, idle_transfer_ps, 0),
    COL("cooldown", "idle", NULL, NULL, MS, idle_cooldown_ps, 0),
    COL("recompute", NULL, NULL, NULL, MS, recompute_ps, 0),
    /* the bubble breakdown (run-result.h): its five parts sum to `lost` */
    COL("lost", "bubbles", NULL, NULL, MS, bubble_lost_ps, 0),
    COL("recompute", "bubbles", NULL, "recompute", MS, bubble_recompute_ps,
        PPSIM_COLUMN_TEXT_BUBBLES),
    COL("imbalance", "bubbles", NULL, "imbalance", MS, bubble_imbalance_ps,
        PPSIM_COLUMN_TEXT_BUBBLES),
    COL("preparation", "bubbles", NULL, "prep", MS, bubble_preparation_ps,
        PPSIM_COLUMN_TEXT_BUBBLES),
    COL("transfer", "bubbles", NULL, "transfer", MS, bubble_transfer_ps, PPSIM_COLUMN_TEXT_BUBBLES),
    COL("offload", "bubbles", NULL, "offload", MS, bubble_offload_ps, PPSIM_COLUMN_TEXT_BUBBLES),
    /* T-Offload ([TP] §5) */
    COL("static_memory_saved", NULL, NULL, NULL, MEM, static_memory_saved, PPSIM_COLUMN_T_OFFLOAD),
    COL("optimizer_overlap", NULL, NULL, NULL, RATIO, optimizer_overlap, PPSIM_COLUMN_T_OFFLOAD),
    /* 3D parallelism (0 without it): TP collectives inside F/B (never hidden), ZeRO-3
     * gathers (flows before F/B), DP gradient reduction and the part of it past the last
     * compute op */
    COL("tp_comm", NULL, NULL, "tp_comm", MS, tp_comm_ps, PPSIM_COLUMN_TEXT_COMM),
    COL("zero_gather", NULL, NULL, "zero_gather", MS, zero_gather_ps, PPSIM_COLUMN_TEXT_COMM),
    COL("dp_comm", NULL, NULL, "dp_comm", MS, dp_comm_ps, PPSIM_COLUMN_TEXT_COMM),
    COL("dp_comm_exposed", NULL, NULL, "dp_exposed", MS, dp_exposed_ps, PPSIM_COLUMN_TEXT_COMM),
    /* MoE all-to-alls inside F/B/R; what F&B pairs saved, and the all-to-alls' share */
    COL("ep_comm", NULL, NULL, NULL, MS, ep_comm_ps, 0),
    COL("fb_hidden", NULL, NULL, NULL, MS, fb_hidden_ps, 0),
    COL("ep_comm_hidden", NULL, NULL, NULL, MS, ep_comm_hidden_ps, 0),
    /* the kernel model: compute time by kernel class, and the optimizer step */
    COL("gemm", "compute_breakdown", NULL, NULL, MS, compute_gemm_ps,
        PPSIM_COLUMN_COMPUTE_BREAKDOWN),
    COL("attention", "compute_breakdown", NULL, NULL, MS, compute_attention_ps,
        PPSIM_COLUMN_COMPUTE_BREAKDOWN),
    COL("memory_bound", "compute_breakdown", NULL, NULL, MS, compute_memory_ps,
        PPSIM_COLUMN_COMPUTE_BREAKDOWN),
    COL("optimizer", "compute_breakdown", NULL, NULL, MS, compute_optimizer_ps,
        PPSIM_COLUMN_COMPUTE_BREAKDOWN),
    {NULL},
};

const PpsimDeviceColumn *
ppsim_device_column_find(const char *json)
{
    for (int pass = 0; pass < 2; pass++)
        for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++)
            if ((c->group == NULL) == (pass == 0) && strcmp(c->json, json) == 0)
                return c;
    return NULL;
}

static const void *
column_field(const PpsimDeviceColumn *col, const PpsimDeviceResult *dev)
{
    return (const char *)dev + col->offset;
}

PpsimTime
ppsim_device_column_time(const PpsimDeviceColumn *col, const PpsimDeviceResult *dev)
{
    g_assert(col->kind == PPSIM_COLUMN_MS);
    return *(const PpsimTime *)column_field(col, dev);
}

void
ppsim_device_column_append(GString *out, const PpsimDeviceColumn *col, const PpsimRunResult *res,
                           const PpsimDeviceResult *dev)
{
    const void *v = column_field(col, dev);
    switch (col->kind) {
    case PPSIM_COLUMN_ID:
        g_string_append_printf(out, "%d", *(const int *)v);
        break;
    case PPSIM_COLUMN_MS:
        ppsim_fmt_ms(out, *(const PpsimTime *)v);
        break;
    case PPSIM_COLUMN_RATIO:
        ppsim_fmt_double(out, *(const double *)v);
        break;
    case PPSIM_COLUMN_MEM:
        ppsim_fmt_mem(out, *(const gint64 *)v, res->mem_scale);
        break;
    case PPSIM_COLUMN_BOOL:
        g_string_append(out, *(const gboolean *)v ? "true" : "false");
        break;
    case PPSIM_COLUMN_VERDICT:
        ppsim_fmt_json_string(out, ppsim_mem_verdict_name(*(const PpsimMemVerdict *)v));
        break;
    case PPSIM_COLUMN_OP:
        if (dev->has_peak_op) {
            g_autoptr(GString) op = g_string_new(NULL);
            ppsim_op_describe(op, (const PpsimOp *)v);
            ppsim_fmt_json_string(out, op->str);
        } else {
            g_string_append(out, "null");
        }
        break;
    }
}

void
ppsim_device_column_append_max(GString *out, const PpsimDeviceColumn *col,
                               const PpsimRunResult *res)
{
    g_return_if_fail(col->kind != PPSIM_COLUMN_OP && col->kind != PPSIM_COLUMN_ID);
    g_return_if_fail(res->p > 0);
    int best = 0;
    for (int d = 1; d < res->p; d++) {
        const void *a = column_field(col, &res->devices[d]);
        const void *b = column_field(col, &res->devices[best]);
        gboolean more = FALSE;
        switch (col->kind) {
        case PPSIM_COLUMN_MS:
            more = *(const PpsimTime *)a > *(const PpsimTime *)b;
            break;
        case PPSIM_COLUMN_RATIO:
            more = *(const double *)a > *(const double *)b;
            break;
        case PPSIM_COLUMN_MEM:
            more = *(const gint64 *)a > *(const gint64 *)b;
            break;
        case PPSIM_COLUMN_BOOL:
            more = *(const gboolean *)a && !*(const gboolean *)b;
            break;
        case PPSIM_COLUMN_VERDICT:
            more = *(const PpsimMemVerdict *)a > *(const PpsimMemVerdict *)b;
            break;
        default:
            break;
        }
        if (more)
            best = d;
    }
    ppsim_device_column_append(out, col, res, &res->devices[best]);
}
