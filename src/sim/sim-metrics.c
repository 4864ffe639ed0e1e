/* sim-metrics.c: a finished replay -> PpsimRunResult (src/README.md "Semantics"): per-op timings,
 * makespan, bubble ratios, memory peaks per device, stage and host, bubble attribution, transfers.
 */
#include "sim-internal.h"
#include "cost/memory.h"

/* ---- metrics --------------------------------------------------------------------------- */

/* The bubble breakdown of run-result.h, from the attribution above: exact by construction,
 * since imbalance is capped by the idle time left after transfers and offload stalls and
 * preparation takes the remainder. */
static void
metrics_bubbles(PpsimRunResult *res)
{
    PpsimTime max_busy = 0;
    for (int d = 0; d < res->p; d++)
        max_busy = MAX(max_busy, res->devices[d].busy_ps);
    for (int d = 0; d < res->p; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        dev->bubble_recompute_ps += dev->recompute_ps;
        dev->bubble_transfer_ps = dev->idle_transfer_ps - dev->bubble_offload_ps;
        PpsimTime rest = dev->idle_warmup_ps + dev->idle_wait_ps + dev->idle_cooldown_ps;
        dev->bubble_imbalance_ps = CLAMP(max_busy - dev->busy_ps, 0, rest);
        dev->bubble_preparation_ps = rest - dev->bubble_imbalance_ps;
        dev->bubble_lost_ps = dev->bubble_recompute_ps + dev->bubble_imbalance_ps +
                              dev->bubble_preparation_ps + dev->bubble_transfer_ps +
                              dev->bubble_offload_ps;
    }
}

/* Splits each device's idle compute time (src/README.md "Semantics": bubble attribution): before
 * its first op, after its last, and in between: waiting for a producer to finish (dependency), or
 * for its data to arrive after it finished (transfer, offload/reload). The input that decides a gap
 * is the op's latest-arriving one (the first of equal arrivals). The executor's dependencies are
 * grouped by consumer in op-id order (sim.c adds them from ppsim_schedule_foreach_dep, consumer by
 * consumer), so one cursor walks them alongside the ops, with no per-op arrays. */
static void
metrics_attribute(const Replay *r, PpsimRunResult *res)
{
    const PpsimExec *x = r->exec;
    const PpsimTaskId *to = ppsim_exec_dep_consumers(x);
    guint32 n_deps = ppsim_exec_n_deps(x), k = 0;
    for (int d = 0; d < r->sched->n_devices; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        GArray *timing = res->compute_timing[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        PpsimTime prev_end = 0;
        for (guint i = 0; i < timing->len; i++) {
            const PpsimOpTiming *t = &g_array_index(timing, PpsimOpTiming, i);
            const PpsimOp *op = &g_array_index(r->sched->compute[d], PpsimOp, i);
            if (op->flags & PPSIM_OP_FLAG_CPU)
                continue; /* on a host CPU worker: not the GPU's time */
            if (op->kind == PPSIM_OP_R)
                dev->recompute_ps += t->end_ps - t->start_ps;
            if (op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW)
                dev->bubble_recompute_ps += r->costs->stage[op->stage].b_recompute_ps;
            PpsimTime gap = t->start_ps - prev_end;
            guint32 id = base + i;
            while (k < n_deps && to[k] < id)
                k++;
            if (i == 0) {
                dev->idle_warmup_ps = t->start_ps;
            } else if (gap > 0) {
                PpsimTime ready = -1, prod_end = 0;
                gboolean via_copy = FALSE;
                for (guint32 j = k; j < n_deps && to[j] == id; j++) {
                    PpsimTime arrive = ppsim_exec_dep_arrival(x, j);
                    if (arrive <= ready)
                        continue;
                    PpsimTaskId from = ppsim_exec_dep_from(x, j);
                    PpsimOpPos pos;
                    ppsim_schedule_index_pos(r->idx, from, &pos);
                    ready = arrive;
                    prod_end = ppsim_exec_task_end(x, from);
                    via_copy = pos.list == 1;
                }
                PpsimTime dep_wait = CLAMP(prod_end - prev_end, 0, gap);
                if (via_copy)
                    dep_wait = 0;
                dev->idle_wait_ps += dep_wait;
                dev->idle_transfer_ps += gap - dep_wait;
                if (via_copy)
                    dev->bubble_offload_ps += gap;
            }
            prev_end = t->end_ps;
        }
        dev->idle_cooldown_ps = res->makespan_ps - prev_end;
    }
}

void
ppsim_sim_collect_timing_arrays(const Replay *r, PpsimRunResult *res)
{
    int p = r->sched->n_devices;
    res->compute_timing = g_new(GArray *, p);
    res->copy_timing = g_new(GArray *, p);
    for (int d = 0; d < p; d++)
        for (int list = 0; list < 2; list++) {
            guint n = (list == 0 ? r->sched->compute[d] : r->sched->copy[d])->len;
            GArray *timing = g_array_sized_new(FALSE, FALSE, sizeof(PpsimOpTiming), n);
            g_array_set_size(timing, n);
            (list == 0 ? res->compute_timing : res->copy_timing)[d] = timing;
        }
}

static void
metrics_timings(const Replay *r, PpsimRunResult *res)
{
    int p = r->sched->n_devices;
    ppsim_sim_collect_timing_arrays(r, res);
    res->makespan_ps = 0;
    for (int d = 0; d < p; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        dev->first_start_ps = G_MAXINT64;
        for (int list = 0; list < 2; list++) {
            GArray *ops = list == 0 ? r->sched->compute[d] : r->sched->copy[d];
            GArray *timing = (list == 0 ? res->compute_timing : res->copy_timing)[d];
            G_STATIC_ASSERT(sizeof(PpsimOpTiming) == 2 * sizeof(PpsimTime));
            ppsim_exec_task_times(r->exec, ppsim_schedule_index_base(r->idx, d, list), ops->len,
                                  (PpsimTime *)(gpointer)timing->data);
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOpTiming *t = &g_array_index(timing, PpsimOpTiming, i);
                if (list == 0 && !(g_array_index(ops, PpsimOp, i).flags & PPSIM_OP_FLAG_CPU))
                    dev->busy_ps += t->end_ps - t->start_ps;
                dev->first_start_ps = MIN(dev->first_start_ps, t->start_ps);
                dev->end_ps = MAX(dev->end_ps, t->end_ps);
            }
        }
        if (dev->first_start_ps == G_MAXINT64)
            dev->first_start_ps = 0;
        res->makespan_ps = MAX(res->makespan_ps, dev->end_ps);
    }
}

/* T-Offload's per-device figures (run-result.h): the static memory saved and how much of
 * the gradient D2H and CPU optimizer time ran before the pipeline's GPU work ended. */
static void
metrics_offload(const Replay *r, PpsimRunResult *res)
{
    if (!(ppsim_schedule_index_flags(r->idx) & PPSIM_OP_FLAG_CPU) &&
        !ppsim_schedule_index_has_kind(r->idx, PPSIM_OP_GOFF)) {
        for (int d = 0; d < res->p; d++) { /* what the loops below find then */
            res->devices[d].static_memory_saved = r->static_saved[d];
            res->devices[d].optimizer_overlap = -1.0;
        }
        return;
    }
    PpsimTime gpu_end = 0;
    for (int d = 0; d < res->p; d++)
        for (guint i = 0; i < r->sched->compute[d]->len; i++)
            if (!(g_array_index(r->sched->compute[d], PpsimOp, i).flags & PPSIM_OP_FLAG_CPU))
                gpu_end =
                    MAX(gpu_end, g_array_index(res->compute_timing[d], PpsimOpTiming, i).end_ps);
    for (int d = 0; d < res->p; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        dev->static_memory_saved = r->static_saved[d];
        PpsimTime total = 0, hidden = 0;
        gboolean any = FALSE;
        for (int list = 0; list < 2; list++) {
            const GArray *ops = list == 0 ? r->sched->compute[d] : r->sched->copy[d];
            const GArray *tm = list == 0 ? res->compute_timing[d] : res->copy_timing[d];
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                if (op->kind != PPSIM_OP_GOFF && !(op->flags & PPSIM_OP_FLAG_CPU))
                    continue;
                const PpsimOpTiming *t = &g_array_index(tm, PpsimOpTiming, i);
                any = TRUE;
                total += t->end_ps - t->start_ps;
                hidden += MAX(0, MIN(t->end_ps, gpu_end) - t->start_ps);
            }
        }
        dev->optimizer_overlap = !any ? -1.0 : total > 0 ? (double)hidden / (double)total : 1.0;
    }
}

/* The logits device @d holds at @t: for its stage with the loss, what one microbatch keeps of
 * them from each F that started (or, when an R recomputes them, each R) until its B or BW
 * ends, plus their gradient while a B or BW runs (sim.c's rules, read off the op timings). */
static gint64
metrics_logits_at(const Replay *r, const PpsimRunResult *res, int d, PpsimTime t)
{
    gint64 bytes = 0;
    const GArray *ops = r->sched->compute[d];
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (ppsim_op_kind_per_stage(op->kind))
            continue;
        gint64 lg = r->costs->stage[op->stage].logits_mem;
        gint64 grad = r->costs->stage[op->stage].logits_grad_mem;
        if (lg == 0 && grad == 0)
            continue;
        const PpsimOpTiming *tm = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
        gboolean rc = ppsim_schedule_index_find(r->idx, PPSIM_OP_R, op->stage, op->microbatch) >= 0;
        if ((op->kind == PPSIM_OP_F && !rc) || op->kind == PPSIM_OP_R)
            bytes += tm->start_ps <= t ? lg : 0;
        else if (op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW)
            bytes += tm->end_ps <= t ? -lg : tm->start_ps <= t ? grad : 0;
    }
    return MAX(0, bytes);
}

/* Hardware mode: device @d's peak by kind (memory.h). Model states from its stages (less
 * what T-Offload moved to the host: optimizer states first), the logits at the peak's time,
 * the rest of the allocator's bytes as activations, NCCL's buffers, and memory.reserved
 * plus fragmentation as overheads. */
static void
metrics_breakdown(const Replay *r, const PpsimRunResult *res, PpsimDeviceResult *dev,
                  const PpsimPoolStats *st, int d)
{
    const PpsimCosts *c = r->costs;
    gint64 logits = 0, stat = ppsim_sim_device_static(r, d);
    double shared_w, shared_g, shared_o; /* the embedding a V-shape's device holds once */
    ppsim_sim_shared_copy(r, d, &shared_w, &shared_g, &shared_o);
    double w = -shared_w, g = -shared_g;
    for (int s = 0; s < r->sched->n_stages; s++) {
        if (r->sched->stage_device[s] != d)
            continue;
        w += c->stage[s].weights_mem;
        g += c->stage[s].grads_mem;
    }
    logits = metrics_logits_at(r, res, d, dev->peak_time_ps);
    gint64 active = st->at_peak[PPSIM_MEM_ACTIVATION] + st->at_peak[PPSIM_MEM_BUFFER] +
                    st->at_peak[PPSIM_MEM_WORKSPACE];
    gint64 nccl = ppsim_round_clamped(ppsim_mem_nccl_bytes(r->sc));
    dev->has_breakdown = TRUE;
    dev->mem_weights = MIN(stat, ppsim_round_clamped(w));
    dev->mem_gradients = MIN(stat - dev->mem_weights, ppsim_round_clamped(g));
    dev->mem_optimizer = stat - dev->mem_weights - dev->mem_gradients;
    dev->mem_logits = MIN(active, logits);
    dev->mem_activations = active - dev->mem_logits;
    dev->mem_buffers = MIN(nccl, c->memory_fixed);
    dev->mem_overheads = dev->peak_memory - (stat + active + dev->mem_buffers);
    dev->mem_free = c->memory_limit > 0 ? c->memory_limit - dev->peak_memory : 0;
}

static void
metrics_memory(const Replay *r, PpsimRunResult *res, const PpsimPoolStats *pools,
               const gint64 *tag_peak)
{
    const PpsimCosts *c = r->costs;
    for (int d = 0; d < r->sched->n_devices; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        const PpsimPoolStats *st = &pools[d];
        dev->static_memory = st->current[PPSIM_MEM_STATIC];
        dev->peak_activation = st->peak_active;
        /* the pool holds the allocator's bytes plus the fixed part; fragmentation is a share
         * of the allocator's (memory.h) */
        dev->peak_memory = c->explicit_mode
                               ? st->peak_total
                               : ppsim_mem_total(st->peak_total - c->memory_fixed, c->memory_fixed,
                                                 c->memory_fragmentation);
        dev->peak_time_ps = st->peak_total_time_ps;
        dev->has_peak_op = st->peak_total_task != G_MAXUINT32;
        if (dev->has_peak_op)
            dev->peak_op = *ppsim_schedule_index_op(r->idx, st->peak_total_task);
        /* the verdict's low end: the allocator's fragmentation at 0, its physical floor; the
         * context and NCCL's buffers are measured, not fitted, and stay */
        dev->peak_memory_low = c->explicit_mode ? dev->peak_memory : st->peak_total;
        dev->over_budget = st->limit > 0 && dev->peak_memory > st->limit;
        dev->memory_verdict = ppsim_mem_verdict(dev->peak_memory, dev->peak_memory_low, st->limit);
        dev->oom = dev->memory_verdict == PPSIM_MEM_OOM;
        if (!c->explicit_mode)
            metrics_breakdown(r, res, dev, st, d);
    }
    res->n_hosts = r->topo ? r->topo->n_nodes : 1;
    res->hosts = g_new0(PpsimHostResult, res->n_hosts);
    for (int h = 0; h < res->n_hosts; h++) {
        const PpsimPoolStats *st = &pools[r->sched->n_devices + h];
        res->hosts[h] = (PpsimHostResult){.node = h,
                                          .peak_memory = st->peak_total,
                                          .limit = st->limit,
                                          .oom = st->limit > 0 && st->peak_total > st->limit};
    }
    for (int s = 0; s < r->sched->n_stages; s++) {
        res->stages[s].id = s;
        res->stages[s].device = r->sched->stage_device[s];
        res->stages[s].peak_activation = tag_peak[s];
    }
}

static void
metrics_ratios(PpsimRunResult *res)
{
    double busy = 0, max_busy = 0, max_span = 0;
    for (int d = 0; d < res->p; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        busy += (double)dev->busy_ps;
        max_busy = MAX(max_busy, (double)dev->busy_ps);
        max_span = MAX(max_span, (double)(dev->end_ps - dev->first_start_ps));
        dev->bubble_ratio =
            res->makespan_ps > 0 ? 1.0 - (double)dev->busy_ps / res->makespan_ps : 0.0;
    }
    res->bubble_ratio =
        res->makespan_ps > 0 ? 1.0 - busy / ((double)res->p * res->makespan_ps) : 0.0;
    res->bubble_ratio_span = max_span > 0 ? 1.0 - max_busy / max_span : 0.0;
}

typedef struct {
    const Replay *r;
    guint32 dep; /* running dependency index, as sim.c added them */
    GArray *out; /* PpsimTransfer */
} TransferScan;

static void
transfer_dep(guint32 from, guint32 to, PpsimDepKind kind, int boundary, gpointer data)
{
    TransferScan *ts = data;
    const Replay *r = ts->r;
    guint32 dep = ts->dep++;
    PpsimOpPos a, b;
    ppsim_schedule_index_pos(r->idx, from, &a);
    ppsim_schedule_index_pos(r->idx, to, &b);
    if (kind == PPSIM_DEP_LOCAL || kind == PPSIM_DEP_SYNC || a.device == b.device)
        return;
    PpsimTransfer t = {a.device,
                       a.list,
                       a.index,
                       b.device,
                       b.list,
                       b.index,
                       ppsim_exec_task_end(r->exec, from),
                       ppsim_exec_dep_arrival(r->exec, dep),
                       r->topo ? r->costs->stage[boundary].p2p_bytes : 0};
    g_array_append_val(ts->out, t);
}

/* The cross-device dependencies as they happened (sim.c's replay_dep made them latencies
 * or flows). */
static void
metrics_transfers(const Replay *r, PpsimRunResult *res)
{
    res->transfers = g_array_new(FALSE, FALSE, sizeof(PpsimTransfer));
    TransferScan ts = {.r = r, .out = res->transfers};
    ppsim_schedule_foreach_dep(r->idx, transfer_dep, &ts);
}

static gint
transfer_cmp(gconstpointer pa, gconstpointer pb)
{
    const PpsimTransfer *a = pa, *b = pb;
    if (a->send_ps != b->send_ps)
        return a->send_ps < b->send_ps ? -1 : 1;
    if (a->from_device != b->from_device)
        return a->from_device - b->from_device;
    if (a->from_index != b->from_index)
        return a->from_index - b->from_index;
    if (a->to_device != b->to_device)
        return a->to_device - b->to_device;
    return a->to_index - b->to_index;
}

void
ppsim_sim_collect_init(const Replay *r, PpsimRunResult *res)
{
    int p = r->sched->n_devices;
    res->p = p;
    res->n_stages = r->sched->n_stages;
    res->v = r->sched->n_stages / p;
    res->m = r->sched->n_microbatches;
    res->explicit_mode = r->costs->explicit_mode;
    res->memory_unit = r->costs->memory_unit;
    res->mem_scale = r->costs->mem_scale;
    res->memory_limit = r->costs->memory_limit;
    res->offload_ratio_k = r->costs->offload_ratio_k;
    res->offload_ratio_k_scenario = r->costs->offload_ratio_k_scenario;
    res->devices = g_new0(PpsimDeviceResult, p);
    res->stages = g_new0(PpsimStageResult, r->sched->n_stages);
    for (int d = 0; d < p; d++)
        res->devices[d].id = d;
}

void
ppsim_sim_collect_finish(const Replay *r, PpsimRunResult *res, const PpsimPoolStats *pools,
                         const gint64 *tag_peak)
{
    metrics_memory(r, res, pools, tag_peak);
    metrics_offload(r, res);
    metrics_ratios(res);
    metrics_bubbles(res);
}

void
ppsim_sim_collect(const Replay *r, PpsimRunResult *res, PpsimSimFlags flags)
{
    ppsim_sim_collect_init(r, res);
    metrics_timings(r, res);
    ppsim_sim_collect_parallel(r, res);
    metrics_attribute(r, res);
    int n_pools = r->sched->n_devices + (r->topo ? r->topo->n_nodes : 1);
    g_autofree PpsimPoolStats *pools = g_new(PpsimPoolStats, n_pools);
    for (int i = 0; i < n_pools; i++)
        pools[i] = *ppsim_exec_pool_stats(r->exec, i);
    g_autofree gint64 *tag_peak = g_new(gint64, MAX(r->sched->n_stages, 1));
    for (int s = 0; s < r->sched->n_stages; s++)
        tag_peak[s] = ppsim_exec_tag_peak(r->exec, s);
    ppsim_sim_collect_finish(r, res, pools, tag_peak);
    if (flags & PPSIM_SIM_RECORD) {
        metrics_transfers(r, res);
        g_array_sort(res->transfers, transfer_cmp);
        const GArray *samples = ppsim_exec_mem_samples(r->exec);
        const GArray *flows = ppsim_exec_flows(r->exec);
        res->mem_samples = g_array_sized_new(FALSE, FALSE, sizeof(PpsimMemSample), samples->len);
        g_array_append_vals(res->mem_samples, samples->data, samples->len);
        res->flows = g_array_sized_new(FALSE, FALSE, sizeof(PpsimFlowRecord), flows->len);
        g_array_append_vals(res->flows, flows->data, flows->len);
    }
    res->events_processed = ppsim_exec_events_processed(r->exec);
}
