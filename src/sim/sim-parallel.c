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
 * last compute op is "exposed": it lengthens the iteration. Without overlap_grad_reduce a
 * device's reductions all wait for its last gradient op over all its chunks (Megatron
 * reduces after the whole forward-backward). The ring's per-step latencies
 * (2(n-1) of them) are not added on this path.
 */
#include "sim-internal.h"
#include "cost/moe.h"
#include "cost/overlap.h"
#include "cost/parallel.h"
#include "hw/topology.h"

/* Device @d's two streams of a flow kind @tag (".dp"): stream[0] sends, stream[1] ("-in")
 * receives. */
static void
add_stream_pair(Replay *r, int d, const char *tag, int stream[2])
{
    char name[48], in[16];
    g_snprintf(in, sizeof in, "%s-in", tag);
    for (int k = 0; k < 2; k++) {
        ppsim_sim_stream_name(name, "gpu", d, k ? in : tag);
        stream[k] = ppsim_exec_add_stream(r->exec, name);
    }
}

static gboolean
is_weight_grad(const PpsimOp *op)
{
    return op->kind == PPSIM_OP_W || op->kind == PPSIM_OP_BW;
}

void
ppsim_sim_last_grad_ops(const GArray *ops, int n_stages, gint64 *last)
{
    for (int s = 0; s < n_stages; s++)
        last[s] = -1;
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        gint64 prev = last[op->stage];
        gboolean prev_w = prev >= 0 && is_weight_grad(&g_array_index(ops, PpsimOp, prev));
        if (is_weight_grad(op) || (op->kind == PPSIM_OP_B && !prev_w))
            last[op->stage] = i;
    }
}

gint64
ppsim_sim_grad_ready_op(const gint64 *last, int n_stages, int s, gboolean overlap)
{
    if (overlap)
        return last[s];
    gint64 ready = last[s];
    for (int k = 0; k < n_stages; k++)
        ready = MAX(ready, last[k]);
    return ready;
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
        add_stream_pair(r, d, ".dp", &r->dp_stream[2 * d]);
        const GArray *ops = sched->compute[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        /* the last weight-gradient op of each stage, in list order; a stage without W/BW
         * falls back to its last B */
        gint64 *last = g_new(gint64, S);
        ppsim_sim_last_grad_ops(ops, S, last);
        /* stream order = the order in which those ops appear in the list */
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (last[op->stage] != (gint64)i)
                continue;
            int s = op->stage;
            const PpsimStageCost *st = &r->costs->stage[s];
            gint64 ready = ppsim_sim_grad_ready_op(last, S, s, sc->parallel.overlap_grad_reduce);
            for (int k = 0; k < 2; k++) {
                PpsimTaskId t;
                if (r->topo != NULL) {
                    int peer = ppsim_topology_remote_endpoint(r->topo, d, across);
                    t = ppsim_exec_add_transfer(r->exec, r->dp_stream[2 * d + k], k ? peer : d,
                                                k ? d : peer, st->dp_bytes);
                } else {
                    t = ppsim_exec_add_task(r->exec, r->dp_stream[2 * d + k], st->dp_comm_ps);
                }
                ppsim_exec_add_dep(r->exec, base + (guint32)ready, t, 0);
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

/* A gather of @bytes before device @d's op @i (@base: its compute list's index base), as flows
 * on the pair @stream: its first layer's share (@head[2]: send, receive), then the rest
 * (@rest[2]), layer by layer as FSDP gathers its units. The op starts once the first share has
 * arrived and computes layer l while layer l+1's share flows, so it ends no sooner than the
 * last share plus one layer's compute: the device's next op waits for the rest plus that
 * layer (returned; with one layer @rest is @head). Recorded in r->zero_task for the
 * metrics. */
static PpsimTime
add_gather_before(Replay *r, const int stream[2], int d, int peer, guint64 bytes, guint32 base,
                  guint i, PpsimTaskId head[2], PpsimTaskId rest[2])
{
    const GArray *ops = r->sched->compute[d];
    const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
    int units = MAX(1, r->costs->stage[op->stage].layers);
    guint64 first = units > 1 ? bytes / (guint64)units : bytes;
    for (int k = 0; k < 2; k++) {
        int src = k ? peer : d, dst = k ? d : peer;
        head[k] = ppsim_exec_add_transfer(r->exec, stream[k], src, dst, first);
        rest[k] = units > 1 ? ppsim_exec_add_transfer(r->exec, stream[k], src, dst, bytes - first)
                            : head[k];
    }
    PpsimTime layer = units > 1 ? ppsim_sim_duration(r, op) / units : 0;
    for (int k = 0; k < 2; k++) {
        ppsim_exec_add_dep(r->exec, head[k], base + i, 0);
        if (units > 1 && i + 1 < ops->len)
            ppsim_exec_add_dep(r->exec, rest[k], base + i + 1, layer);
    }
    guint32 rec[5] = {(guint32)d, head[0], head[1], rest[0], rest[1]};
    g_array_append_vals(r->zero_task, rec, 5);
    return layer;
}

void
ppsim_sim_add_zero_gathers(Replay *r)
{
    if (!r->zero_flows)
        return;
    const PpsimSchedule *sched = r->sched;
    int p = sched->n_devices, S = sched->n_stages;
    gboolean across = ppsim_par_dp_across_nodes(r->sc);
    r->zero_task = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (int d = 0; d < p; d++) {
        int stream[2];
        add_stream_pair(r, d, ".zero", stream);
        int peer = ppsim_topology_remote_endpoint(r->topo, d, across);
        const GArray *ops = sched->compute[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        /* the ops that need their stage's full weights, in list order: the gather for the
         * k-th may start once the (k-2)-th has ended (one op of prefetch) */
        gint64 before[2] = {-1, -1};
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (!needs_weights(op))
                continue;
            /* ring all-gather: each GPU sends and receives (dp-1)/dp of the stage's bf16
             * weights (across nodes its NIC 1/local of it: ppsim_par_dp_local), the same
             * bytes as ZeRO-3's whole gradient reduce-scatter */
            PpsimTaskId head[2], rest[2];
            PpsimTime layer = add_gather_before(
                r, stream, d, peer, r->costs->stage[op->stage].zero_bytes, base, i, head, rest);
            for (int k = 0; k < 2; k++) {
                if (before[0] >= 0)
                    ppsim_exec_add_dep(r->exec, base + (guint32)before[0], head[k], 0);
                /* after the device's last op the stage's gradient reduction waits for the
                 * rest as the next op would */
                for (int j = 0;
                     rest[k] != head[k] && i + 1 == ops->len && r->dp_task != NULL && j < 2; j++)
                    if (r->dp_task[j * S + op->stage] != G_MAXUINT32)
                        ppsim_exec_add_dep(r->exec, rest[k], r->dp_task[j * S + op->stage], layer);
            }
            before[0] = before[1];
            before[1] = i;
        }
    }
}

void
ppsim_sim_add_param_gathers(Replay *r)
{
    const PpsimScenario *sc = r->sc;
    if (r->costs->explicit_mode || r->topo == NULL || !ppsim_scenario_overlaps_param_gather(sc))
        return;
    const PpsimSchedule *sched = r->sched;
    int S = sched->n_stages;
    gboolean across = ppsim_par_dp_across_nodes(sc);
    if (r->zero_task == NULL)
        r->zero_task = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autofree gboolean *seen = g_new(gboolean, MAX(S, 1));
    for (int d = 0; d < sched->n_devices; d++) {
        for (int s = 0; s < S; s++)
            seen[s] = FALSE;
        int stream[2] = {-1, -1};
        int peer = ppsim_topology_remote_endpoint(r->topo, d, across);
        const GArray *ops = sched->compute[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        /* each stage's weights, gathered in the order of the stages' first ops on the
         * device (their first forwards; the optimizer step has just updated this GPU's
         * shard of them) */
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (seen[op->stage])
                continue;
            seen[op->stage] = TRUE;
            const PpsimStageCost *st = &r->costs->stage[op->stage];
            if (st->pg_bytes == 0)
                continue;
            if (stream[0] < 0)
                add_stream_pair(r, d, ".pg", stream);
            /* layer by layer, as the forward reaches each */
            PpsimTaskId head[2], rest[2];
            add_gather_before(r, stream, d, peer, st->pg_bytes, base, i, head, rest);
        }
    }
}

/* Makes the all-reduce of the tied embedding's gradient (@out, its two flows) wait for
 * device @d: its last gradient op over all its stages and every DP reduction of its stages
 * (Megatron's finalize_model_grads runs after the whole forward-backward). */
static void
tied_ready(Replay *r, int d, PpsimTaskId out[2])
{
    const PpsimSchedule *sched = r->sched;
    int S = sched->n_stages;
    const GArray *ops = sched->compute[d];
    g_autofree gint64 *last = g_new(gint64, S);
    ppsim_sim_last_grad_ops(ops, S, last);
    gint64 ready = ppsim_sim_grad_ready_op(last, S, 0, FALSE); /* the device's last of all */
    guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
    for (int k = 0; k < 2; k++) {
        if (ready >= 0)
            ppsim_exec_add_dep(r->exec, base + (guint32)ready, out[k], 0);
        for (int s = 0; r->dp_task != NULL && s < S; s++)
            for (int j = 0; j < 2; j++)
                if (sched->stage_device[s] == d && r->dp_task[j * S + s] != G_MAXUINT32)
                    ppsim_exec_add_dep(r->exec, r->dp_task[j * S + s], out[k], 0);
    }
}

void
ppsim_sim_add_tied_grads(Replay *r)
{
    const PpsimSchedule *sched = r->sched;
    if (r->costs->explicit_mode || r->topo == NULL || r->costs->tied_grad_bytes == 0)
        return;
    /* with two pipelines (DualPipe) the model is one of them: its first and last stage */
    int last = (sched->pipe_stages > 0 ? sched->pipe_stages : sched->n_stages) - 1;
    int dev[2] = {sched->stage_device[0], sched->stage_device[last]};
    if (dev[0] == dev[1])
        return; /* one GPU holds both copies: nothing crosses a link */
    for (int k = 0; k < 2; k++) {
        char name[48];
        int stream =
            ppsim_exec_add_stream(r->exec, ppsim_sim_stream_name(name, "gpu", dev[k], ".emb"));
        /* a two-rank ring: each GPU sends the other half of the gradient in the
         * reduce-scatter and half in the all-gather, all of it */
        r->tied_task[k] =
            ppsim_exec_add_transfer(r->exec, stream, dev[k], dev[1 - k], r->costs->tied_grad_bytes);
        r->tied_dev[k] = dev[k];
    }
    /* An optimizer step the schedule places itself (T-Offload's, as each stage's gradients
     * are ready) is left where it is: the all-reduce holds back only the embedding's share
     * of it, which is not split off. */
    for (int k = 0; k < 2; k++)
        tied_ready(r, dev[k], r->tied_task);
}

gboolean
ppsim_sim_ep_flows(const Replay *r)
{
    const PpsimScenario *sc = r->sc;
    return !r->costs->explicit_mode && r->topo != NULL && sc->parallel.present &&
           sc->parallel.ep > 1 && sc->model.moe.experts > 0;
}

PpsimTime
ppsim_sim_ep_compute(const Replay *r, const PpsimOp *op)
{
    const PpsimStageCost *st = &r->costs->stage[op->stage];
    PpsimTime zg = r->zero_flows ? st->zero_gather_ps : 0;
    PpsimTime f = st->est.f_ps - st->ep_comm_f_ps;
    PpsimTime bw = st->est.b_ps + st->est.w_ps - st->ep_comm_b_ps;
    if ((op->flags & PPSIM_OP_FLAG_OVERLAP) && st->pair_layers > 0) {
        /* layer by layer (overlap.h): the flows beside it, the pair waits where its layers'
         * schedule waits for an all-to-all */
        return MAX((op->kind == PPSIM_OP_F ? st->est.fo_ps : st->est.bwo_ps) - zg, 0);
    }
    if (op->flags & PPSIM_OP_FLAG_OVERLAP) {
        /* the all-to-alls are flows beside the pair; its compute runs on the SMs they leave */
        PpsimTime fo, bwo;
        ppsim_cost_overlap_halves_sm(f, bw, st->tp_comm_f_ps, st->tp_comm_b_ps, st->ep_comm_f_ps,
                                     st->ep_comm_b_ps, st->ep_pair_slow, &fo, &bwo);
        return MAX((op->kind == PPSIM_OP_F ? fo : bwo) - zg, 0);
    }
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        return MAX(f - zg, 0);
    case PPSIM_OP_R:
        return MAX(st->est.r_ps - st->ep_comm_f_ps, 0);
    case PPSIM_OP_B:
        return MAX(st->est.b_ps - st->ep_comm_b_ps - zg, 0);
    case PPSIM_OP_BW:
        return MAX(bw - zg, 0);
    default:
        g_assert_not_reached();
    }
}

/* Bytes each GPU sends in @op's all-to-alls: over the group's path (@near FALSE: the NIC
 * when the group spans nodes, else NVLink) or, spanning nodes, to the ranks on its own node
 * over NVLink (@near TRUE). */
static guint64
ep_op_bytes(const Replay *r, const PpsimOp *op, gboolean near)
{
    const PpsimStageCost *st = &r->costs->stage[op->stage];
    if (op->kind == PPSIM_OP_F || op->kind == PPSIM_OP_R)
        return near ? st->ep_near_bytes_f : st->ep_bytes_f;
    if (op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW)
        return near ? st->ep_near_bytes_b : st->ep_bytes_b;
    return 0;
}

/* No task: the place of a flow an all-to-all does not have in r->ep_task. */
#define EP_NO_TASK G_MAXUINT32

/* The all-to-alls as flows (moe.h): per op with experts, what the GPU sends and what it
 * receives (the same bytes, the group being symmetric) to and from a peer standing for the
 * other EP ranks, over NVLink, or its PCIe link and NIC when the group spans nodes (and then,
 * beside them, the share for the ranks on its own node over NVLink: moe.h), sharing
 * them max-min fairly with the pipeline's sends, the DP reduction and offloads. An op's
 * flows start once the device's previous op has ended and the op's inputs are ready (their
 * producers have ended: the activation's own transfer is not waited for) and the op's
 * compute waits for them: the dispatch and combine sit on the critical path. An F&B pair's
 * flows (both halves') start the same way but run beside the pair ([DSV3] §3.2.1: one
 * chunk's all-to-all behind the other's compute); the op after the pair waits for them. */
void
ppsim_sim_add_ep_flows(Replay *r)
{
    if (!r->ep_flows)
        return;
    const PpsimScenario *sc = r->sc;
    const PpsimSchedule *sched = r->sched;
    /* the cost model's test (moe.c), which also places an EP group folded over the stage's
     * TP ranks (parallel.etp below tp) */
    gboolean across = ppsim_moe_ep_per_node(sc) < sc->parallel.ep;
    gboolean near = FALSE; /* NVLink flows beside the NIC's */
    for (int s = 0; s < r->costs->n_stages; s++)
        near |= r->costs->stage[s].ep_near_bytes_f > 0 || r->costs->stage[s].ep_near_bytes_b > 0;
    r->ep_task = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autofree PpsimDep *deps = g_new(PpsimDep, ppsim_schedule_index_max_deps(r->idx));
    for (int d = 0; d < sched->n_devices; d++) {
        int stream[4];
        add_stream_pair(r, d, ".ep", stream);
        if (near)
            add_stream_pair(r, d, ".ep-nvlink", stream + 2);
        int peer[2] = {ppsim_topology_remote_endpoint(r->topo, d, across),
                       ppsim_topology_remote_endpoint(r->topo, d, FALSE)};
        const GArray *ops = sched->compute[d];
        guint32 base = ppsim_schedule_index_base(r->idx, d, 0);
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            gboolean pair =
                op->kind == PPSIM_OP_F && (op->flags & PPSIM_OP_FLAG_OVERLAP) && i + 1 < ops->len;
            guint last = pair ? i + 1 : i;
            guint64 bytes[2];
            for (int v = 0; v < 2; v++) {
                bytes[v] = ep_op_bytes(r, op, v);
                if (pair)
                    bytes[v] += ep_op_bytes(r, &g_array_index(ops, PpsimOp, i + 1), v);
            }
            if (bytes[0] + bytes[1] == 0) {
                i = last;
                continue;
            }
            PpsimOpPos pos = {d, 0, (gint32)i};
            guint n = ppsim_schedule_index_deps(r->idx, base + i, &pos, op, deps);
            guint32 six[6] = {(guint32)d, i, EP_NO_TASK, EP_NO_TASK, EP_NO_TASK, EP_NO_TASK};
            for (int k = 0; k < 4; k++) {
                int v = k / 2, p = peer[v];
                if (bytes[v] == 0)
                    continue;
                PpsimTaskId t = ppsim_exec_add_transfer(r->exec, stream[k], k % 2 ? p : d,
                                                        k % 2 ? d : p, bytes[v]);
                six[2 + k] = t;
                if (i > 0)
                    ppsim_exec_add_dep(r->exec, base + i - 1, t, 0);
                for (guint e = 0; e < n; e++)
                    ppsim_exec_add_dep(r->exec, deps[e].from, t, 0);
                if (!pair)
                    ppsim_exec_add_dep(r->exec, t, base + i, 0);
                else if (last + 1 < ops->len)
                    ppsim_exec_add_dep(r->exec, t, base + last + 1, 0);
            }
            g_array_append_vals(r->ep_task, six, 6);
            i = last;
        }
    }
}

/* Whether the F&B pair whose F is op @i of device @d has a half run layer by layer
 * (overlap.h ppsim_cost_overlap_layers). */
static gboolean
ep_pair_by_layers(const Replay *r, int d, guint i)
{
    const GArray *ops = r->sched->compute[d];
    const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
    if (r->costs->stage[op->stage].pair_layers > 0)
        return TRUE;
    if (i + 1 >= ops->len)
        return FALSE;
    const PpsimOp *mate = &g_array_index(ops, PpsimOp, i + 1);
    return r->costs->stage[mate->stage].pair_layers > 0;
}

/* Per device, what its F&B pairs saved against running their halves apart, and of it (in
 * hardware mode) the share of the MoE all-to-alls: the pair's hidden communication with
 * them less without them (overlap.h's model); a pair run layer by layer hides nothing but
 * all-to-alls, so all it saves is theirs. */
static void
sim_collect_overlap(const Replay *r, PpsimRunResult *res)
{
    const PpsimSchedule *sched = r->sched;
    for (int d = 0; d < sched->n_devices; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        const GArray *ops = sched->compute[d];
        for (guint i = 0; i + 1 < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (op->kind != PPSIM_OP_F || !(op->flags & PPSIM_OP_FLAG_OVERLAP))
                continue;
            const PpsimOp *mate = &g_array_index(ops, PpsimOp, i + 1);
            const PpsimStageCost *a = &r->costs->stage[op->stage];
            const PpsimStageCost *b = &r->costs->stage[mate->stage];
            PpsimTime apart = a->est.f_ps + b->est.b_ps + b->est.w_ps;
            if (!r->costs->explicit_mode && ep_pair_by_layers(r, d, i)) {
                /* a half layer by layer (overlap.h): what the pair saves, the all-to-alls it
                 * hid (a half of the whole-stage model with flows: its flows beside it) */
                PpsimTime pair = r->ep_flows
                                     ? ppsim_sim_ep_compute(r, op) + ppsim_sim_ep_compute(r, mate)
                                     : a->est.fo_ps + b->est.bwo_ps;
                PpsimTime saved = apart - pair;
                dev->fb_hidden_ps += saved;
                dev->ep_comm_hidden_ps += saved;
                i++;
                continue;
            }
            if (r->ep_flows) { /* the TP part here, the all-to-alls' from their flows */
                dev->fb_hidden_ps += apart - a->ep_comm_f_ps - b->ep_comm_b_ps -
                                     ppsim_sim_ep_compute(r, op) - ppsim_sim_ep_compute(r, mate);
            } else {
                dev->fb_hidden_ps += apart - (a->est.fo_ps + b->est.bwo_ps);
            }
            if (!r->costs->explicit_mode && !r->ep_flows) {
                PpsimTime bw = b->est.b_ps + b->est.w_ps;
                PpsimTime with =
                    ppsim_cost_overlap_hidden(a->est.f_ps, bw, a->tp_comm_f_ps + a->ep_comm_f_ps,
                                              b->tp_comm_b_ps + b->ep_comm_b_ps);
                PpsimTime without =
                    ppsim_cost_overlap_hidden(a->est.f_ps, bw, a->tp_comm_f_ps, b->tp_comm_b_ps);
                dev->ep_comm_hidden_ps += with - without;
            }
            i++;
        }
    }
}

/* Kernel model: each device's compute time by kernel class, summed over its ops, and the
 * optimizer step. Unless the schedule places OPT ops itself, every device steps after the
 * pipeline's last op and the last DP reduction (gradient clipping's global norm joins them
 * all, as Megatron's step does), so the iteration ends with the longest step. */
static void
collect_compute_breakdown(const Replay *r, PpsimRunResult *res)
{
    const PpsimSchedule *sched = r->sched;
    gboolean has_opt = FALSE;
    res->has_compute_breakdown = TRUE;
    for (int d = 0; d < sched->n_devices; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        const GArray *ops = sched->compute[d];
        PpsimTime k[3] = {0};
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            const PpsimStageCost *st = &r->costs->stage[op->stage];
            for (int c = 0; c < 3; c++) {
                switch ((PpsimOpKind)op->kind) {
                case PPSIM_OP_F:
                case PPSIM_OP_R:
                    k[c] += st->kern_f_ps[c];
                    break;
                case PPSIM_OP_B:
                    k[c] += st->kern_b_ps[c];
                    break;
                case PPSIM_OP_W:
                    k[c] += st->kern_w_ps[c];
                    break;
                case PPSIM_OP_BW:
                    k[c] += st->kern_b_ps[c] + st->kern_w_ps[c];
                    break;
                default:
                    break;
                }
            }
            if (op->kind == PPSIM_OP_OPT)
                has_opt = TRUE;
        }
        dev->compute_gemm_ps = k[0];
        dev->compute_attention_ps = k[1];
        dev->compute_memory_ps = k[2];
    }
    if (has_opt)
        return;
    PpsimTime end = res->makespan_ps, longest = 0;
    for (int s = 0; s < sched->n_stages; s++)
        res->devices[sched->stage_device[s]].compute_optimizer_ps += r->costs->stage[s].opt_ps;
    for (int d = 0; d < sched->n_devices; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        longest = MAX(longest, dev->compute_optimizer_ps);
        dev->end_ps = MAX(dev->end_ps, end + dev->compute_optimizer_ps);
    }
    res->makespan_ps = end + longest;
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
    sim_collect_overlap(r, res);
    res->tokens = (double)sched->n_microbatches * sc->training.microbatch_size * sc->model.seq_len *
                  MAX(sc->parallel.dp, 1);
    if (res->makespan_ps > 0)
        res->tokens_per_s = res->tokens / ((double)res->makespan_ps / (double)PPSIM_PS_PER_S);
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
                dev->ep_comm_ps += r->ep_flows ? 0 : st->ep_comm_f_ps;
                dev->zero_gather_ps += r->zero_flows ? 0 : st->zero_gather_ps;
                break;
            case PPSIM_OP_R:
                dev->tp_comm_ps += st->tp_comm_f_ps;
                dev->ep_comm_ps += r->ep_flows ? 0 : st->ep_comm_f_ps;
                break;
            case PPSIM_OP_B:
            case PPSIM_OP_BW:
                dev->tp_comm_ps += st->tp_comm_b_ps;
                dev->ep_comm_ps += r->ep_flows ? 0 : st->ep_comm_b_ps;
                dev->zero_gather_ps += r->zero_flows ? 0 : st->zero_gather_ps;
                break;
            default:
                break;
            }
        }
    }
    /* the all-to-alls' flows: first byte to last; beside an F&B pair, the part of that
     * span the pair's compute covers is what the pair hid */
    for (guint i = 0; r->ep_task != NULL && i < r->ep_task->len; i += 6) {
        const guint32 *q = &g_array_index(r->ep_task, guint32, i);
        PpsimTime start = G_MAXINT64, end = 0;
        for (int k = 2; k < 6; k++) {
            if (q[k] == EP_NO_TASK)
                continue;
            start = MIN(start, ppsim_exec_task_start(r->exec, q[k]));
            end = MAX(end, ppsim_exec_task_end(r->exec, q[k]));
        }
        PpsimDeviceResult *dev = &res->devices[q[0]];
        dev->ep_comm_ps += end - start;
        const PpsimOp *op = &g_array_index(sched->compute[q[0]], PpsimOp, q[1]);
        if (op->kind == PPSIM_OP_F && (op->flags & PPSIM_OP_FLAG_OVERLAP) &&
            !ep_pair_by_layers(r, q[0], q[1])) { /* else sim_collect_overlap */
            guint32 id = ppsim_schedule_index_base(r->idx, (int)q[0], 0) + q[1];
            PpsimTime lo = MAX(start, ppsim_exec_task_start(r->exec, id));
            PpsimTime hi = MIN(end, ppsim_exec_task_end(r->exec, id + 1));
            if (hi > lo) {
                dev->ep_comm_hidden_ps += hi - lo;
                dev->fb_hidden_ps += hi - lo;
            }
        }
    }
    for (guint i = 0; r->zero_task != NULL && i < r->zero_task->len; i += 5) {
        const guint32 *z = &g_array_index(r->zero_task, guint32, i);
        PpsimTime start =
            MIN(ppsim_exec_task_start(r->exec, z[1]), ppsim_exec_task_start(r->exec, z[2]));
        PpsimTime end = MAX(ppsim_exec_task_end(r->exec, z[3]), ppsim_exec_task_end(r->exec, z[4]));
        res->devices[z[0]].zero_gather_ps += end - start;
    }
    gboolean tied = r->tied_dev[0] != r->tied_dev[1];
    if (r->dp_task != NULL || tied) {
        PpsimTime *dp_end = g_new0(PpsimTime, sched->n_devices);
        int S = sched->n_stages;
        for (int s = 0; r->dp_task != NULL && s < S; s++) {
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
        /* the tied embedding's all-reduce counts as the two devices' gradient reduction */
        if (tied) {
            PpsimTime start = MIN(ppsim_exec_task_start(r->exec, r->tied_task[0]),
                                  ppsim_exec_task_start(r->exec, r->tied_task[1]));
            PpsimTime end = MAX(ppsim_exec_task_end(r->exec, r->tied_task[0]),
                                ppsim_exec_task_end(r->exec, r->tied_task[1]));
            res->tied_grad_ps = end - start;
            for (int k = 0; k < 2; k++) {
                res->devices[r->tied_dev[k]].dp_comm_ps += end - start;
                dp_end[r->tied_dev[k]] = MAX(dp_end[r->tied_dev[k]], end);
            }
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
    if (r->costs->kernel_model)
        collect_compute_breakdown(r, res);
    double fwd = 0;
    /* with two pipelines (DualPipe) a microbatch runs through one: the model is one of them */
    int model_stages = sched->pipe_stages > 0 ? sched->pipe_stages : sched->n_stages;
    for (int s = 0; s < model_stages; s++)
        fwd += r->costs->stage[s].fwd_flops;
    res->model_flops = 3.0 * fwd * sched->n_microbatches * sc->parallel.dp;
    double seconds = (double)res->makespan_ps / (double)PPSIM_PS_PER_S;
    if (seconds > 0 && sc->hardware.gpu_peak_flops > 0)
        res->mfu = res->model_flops / (seconds * sc->hardware.gpu_peak_flops * res->gpus);
    if (seconds > 0) {
        /* the DP reduction may have lengthened the makespan: tokens/s over the final one */
        res->tokens_per_s = res->tokens / seconds;
        res->tflops_per_gpu = res->model_flops / seconds / MAX(res->gpus, 1) / 1e12;
    }
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
