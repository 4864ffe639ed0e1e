/* sim-parallel.c: the data-parallel side of a replay and the 3D metrics (see
 * sim-internal.h).
 *
 * The replay simulates one of the dp pipeline replicas; the others run the same schedule in
 * step. Each stage's gradients become ready after its last W (or BW): its ring reduction
 * then runs as two flows on the device's own "dp" streams, one stage after the other: the
 * bytes the GPU sends to its ring neighbour in the next replica and the bytes it receives
 * from the previous one (topology.h remote endpoints), over its NVLink port, or its PCIe
 * link and NIC when the replicas sit on other nodes, sharing those links max-min fairly
 * with the pipeline's own transfers. It overlaps whatever compute is left on any device
 * (the cool-down), as Megatron's overlap_grad_reduce does; what ends after the pipeline's
 * last compute op is "exposed": it lengthens the iteration. The ring's per-step latencies
 * (2(n-1) of them) are not added on this path.
 */
#include "sim-internal.h"
#include "cost/parallel.h"
#include "hw/topology.h"

static gboolean
is_weight_grad(const PpsimOp *op)
{
    return op->kind == PPSIM_OP_W || op->kind == PPSIM_OP_BW;
}

void
ppsim_sim_add_dp_tasks(Replay *r)
{
    const PpsimScenario *sc = r->sc;
    if (r->costs->explicit_mode || !sc->parallel.present || sc->parallel.dp <= 1)
        return;
    const PpsimSchedule *sched = r->sched;
    int p = sched->n_devices, S = sched->n_stages;
    r->dp_task = g_new(PpsimTaskId, 2 * S);
    r->dp_stream = g_new(int, 2 * p);
    for (int s = 0; s < 2 * S; s++)
        r->dp_task[s] = G_MAXUINT32;
    gboolean across = ppsim_par_dp_across_nodes(sc);
    for (int d = 0; d < p; d++) {
        for (int k = 0; k < 2; k++) {
            char name[48];
            ppsim_sim_stream_name(name, "gpu", d, k ? ".dp-in" : ".dp");
            r->dp_stream[2 * d + k] = ppsim_exec_add_stream(r->exec, name);
        }
        const GArray *ops = sched->compute[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        /* the last weight-gradient op of each stage, in list order; a stage without W/BW
         * falls back to its last B */
        gint64 *last = g_new(gint64, S);
        for (int s = 0; s < S; s++)
            last[s] = -1;
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            gint64 prev = last[op->stage];
            gboolean prev_w = prev >= 0 && is_weight_grad(&g_array_index(ops, PpsimOp, prev));
            if (is_weight_grad(op) || (op->kind == PPSIM_OP_B && !prev_w))
                last[op->stage] = i;
        }
        /* stream order = the order in which those ops appear in the list */
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (last[op->stage] != (gint64)i)
                continue;
            int s = op->stage;
            const PpsimStageCost *st = &r->costs->stage[s];
            for (int k = 0; k < 2; k++) {
                PpsimTaskId t;
                if (r->topo != NULL) {
                    int peer = ppsim_topology_remote_endpoint(r->topo, d, across);
                    t = ppsim_exec_add_transfer(r->exec, r->dp_stream[2 * d + k], k ? peer : d,
                                                k ? d : peer, st->dp_bytes);
                } else {
                    t = ppsim_exec_add_task(r->exec, r->dp_stream[2 * d + k], st->dp_comm_ps);
                }
                ppsim_exec_add_dep(r->exec, base + i, t, 0);
                r->dp_task[k * S + s] = t;
            }
        }
        g_free(last);
    }
}

gboolean
ppsim_sim_zero_flows(const Replay *r)
{
    const PpsimParallel *par = &r->sc->parallel;
    return !r->costs->explicit_mode && r->topo != NULL && par->present && par->dp > 1 &&
           par->zero == 3;
}

static gboolean
needs_weights(const PpsimOp *op)
{
    return op->kind == PPSIM_OP_F || op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW;
}

void
ppsim_sim_add_zero_gathers(Replay *r)
{
    if (!r->zero_flows)
        return;
    const PpsimSchedule *sched = r->sched;
    int p = sched->n_devices;
    gboolean across = ppsim_par_dp_across_nodes(r->sc);
    r->zero_task = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (int d = 0; d < p; d++) {
        int stream[2];
        for (int k = 0; k < 2; k++) {
            char name[48];
            ppsim_sim_stream_name(name, "gpu", d, k ? ".zero-in" : ".zero");
            stream[k] = ppsim_exec_add_stream(r->exec, name);
        }
        int peer = ppsim_topology_remote_endpoint(r->topo, d, across);
        const GArray *ops = sched->compute[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        /* the ops that need their stage's full weights, in list order: the gather for the
         * k-th may start once the (k-2)-th has ended, so at most two gathered copies (the
         * one in use and the one prefetched) live at a time */
        gint64 before[2] = {-1, -1};
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (!needs_weights(op))
                continue;
            /* ring all-gather: each GPU sends and receives (dp-1)/dp of the stage's bf16
             * weights, the same bytes as ZeRO-3's gradient reduce-scatter (dp_bytes) */
            guint64 bytes = r->costs->stage[op->stage].dp_bytes;
            guint32 dev = (guint32)d;
            g_array_append_val(r->zero_task, dev);
            for (int k = 0; k < 2; k++) {
                PpsimTaskId t =
                    ppsim_exec_add_transfer(r->exec, stream[k], k ? peer : d, k ? d : peer, bytes);
                g_array_append_val(r->zero_task, t);
                if (before[0] >= 0)
                    ppsim_exec_add_dep(r->exec, base + (guint32)before[0], t, 0);
                ppsim_exec_add_dep(r->exec, t, base + i, 0);
            }
            before[0] = before[1];
            before[1] = i;
        }
    }
}

void
ppsim_sim_collect_parallel(const Replay *r, PpsimRunResult *res)
{
    const PpsimScenario *sc = r->sc;
    const PpsimSchedule *sched = r->sched;
    res->parallel = sc->parallel.present;
    res->tp = sc->parallel.tp;
    res->dp = sc->parallel.dp;
    res->zero = sc->parallel.zero;
    res->gpus = ppsim_scenario_gpus(sc);
    if (r->costs->explicit_mode)
        return;
    for (int d = 0; d < sched->n_devices; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        const GArray *ops = sched->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            const PpsimStageCost *st = &r->costs->stage[op->stage];
            switch ((PpsimOpKind)op->kind) {
            case PPSIM_OP_F:
                dev->tp_comm_ps += st->tp_comm_f_ps;
                dev->zero_gather_ps += r->zero_flows ? 0 : st->zero_gather_ps;
                break;
            case PPSIM_OP_R:
                dev->tp_comm_ps += st->tp_comm_f_ps;
                break;
            case PPSIM_OP_B:
            case PPSIM_OP_BW:
                dev->tp_comm_ps += st->tp_comm_b_ps;
                dev->zero_gather_ps += r->zero_flows ? 0 : st->zero_gather_ps;
                break;
            default:
                break;
            }
        }
    }
    for (guint i = 0; r->zero_task != NULL && i < r->zero_task->len; i += 3) {
        const guint32 *z = &g_array_index(r->zero_task, guint32, i);
        PpsimTime start =
            MIN(ppsim_exec_task_start(r->exec, z[1]), ppsim_exec_task_start(r->exec, z[2]));
        PpsimTime end = MAX(ppsim_exec_task_end(r->exec, z[1]), ppsim_exec_task_end(r->exec, z[2]));
        res->devices[z[0]].zero_gather_ps += end - start;
    }
    if (r->dp_task != NULL) {
        PpsimTime *dp_end = g_new0(PpsimTime, sched->n_devices);
        int S = sched->n_stages;
        for (int s = 0; s < S; s++) {
            if (r->dp_task[s] == G_MAXUINT32)
                continue;
            int d = sched->stage_device[s];
            PpsimTaskId out = r->dp_task[s], in = r->dp_task[S + s];
            PpsimTime start = ppsim_exec_task_start(r->exec, out);
            PpsimTime end =
                MAX(ppsim_exec_task_end(r->exec, out), ppsim_exec_task_end(r->exec, in));
            res->devices[d].dp_comm_ps += end - start;
            dp_end[d] = MAX(dp_end[d], end);
        }
        /* hidden = done before the last device's compute ends: only the rest lengthens
         * the iteration */
        PpsimTime compute_end = res->makespan_ps;
        for (int d = 0; d < sched->n_devices; d++) {
            PpsimDeviceResult *dev = &res->devices[d];
            dev->dp_exposed_ps = MAX(0, dp_end[d] - compute_end);
            dev->end_ps = MAX(dev->end_ps, dp_end[d]);
            res->makespan_ps = MAX(res->makespan_ps, dev->end_ps);
        }
        g_free(dp_end);
    }
    double fwd = 0;
    for (int s = 0; s < sched->n_stages; s++)
        fwd += r->costs->stage[s].fwd_flops;
    res->model_flops = 3.0 * fwd * sched->n_microbatches * sc->parallel.dp;
    double seconds = (double)res->makespan_ps / (double)PPSIM_PS_PER_S;
    if (seconds > 0 && sc->hardware.gpu_peak_flops > 0)
        res->mfu = res->model_flops / (seconds * sc->hardware.gpu_peak_flops * res->gpus);
}

void
ppsim_sim_note_parallel(const PpsimScenario *sc, GArray *choices)
{
    const PpsimTraining *tr = &sc->training;
    if (choices == NULL || tr->global_batch == 0)
        return;
    g_autofree char *m = g_strdup_printf("%d", tr->microbatches);
    ppsim_choice_add(choices, "m", m, "training.global_batch %d / (dp %d x microbatch_size %d)",
                     tr->global_batch, sc->parallel.dp, tr->microbatch_size);
}
