/* sim.c: scenario -> costs -> schedule -> checked IR -> task graph -> metrics; see sim.h.
 * Making the schedule is in sim-build.c, the memory in sim-memory.c, the metrics in
 * sim-metrics.c, 3D parts in sim-parallel.c.
 *
 * The only module that knows every other one. It turns each op into an executor task (op id
 * == task id: ops are added device-major in list order), each dependency (src/README.md
 * "Semantics") into a latency (explicit-cost mode) or a flow over the topology (hardware mode), and
 * the memory memory rules (src/README.md "Semantics") into allocations and frees at task starts and
 * ends.
 */
#include "sim-internal.h"
#include "schedule/schedule-index.h"
#include "hw/exec.h"
#include "cost/parallel.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

/* ---- replay ---------------------------------------------------------------------------- */

static void
replay_clear(Replay *r)
{
    ppsim_exec_free(r->exec);
    ppsim_topology_free(r->topo);
    ppsim_schedule_index_free(r->idx);
    g_free(r->compute_stream);
    g_free(r->d2h_stream);
    g_free(r->h2d_stream);
    g_free(r->cpu_stream_base);
    g_free(r->static_saved);
    g_free(r->host_static);
    g_free(r->cpu_first);
    g_free(r->cpu_count);
    g_free(r->dp_task);
    g_free(r->dp_stream);
    if (r->zero_task != NULL)
        g_array_unref(r->zero_task);
    if (r->ep_task != NULL)
        g_array_unref(r->ep_task);
}

int
ppsim_sim_node_of(const Replay *r, int device)
{
    return r->topo ? ppsim_topology_node_of(r->topo, device) : 0;
}

char *
ppsim_sim_stream_name(char *buf, const char *prefix, int n, const char *suffix)
{
    char digits[12];
    int k = 0;
    unsigned u = (unsigned)MAX(n, 0);
    do
        digits[k++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    char *at = g_stpcpy(buf, prefix);
    while (k > 0)
        *at++ = digits[--k];
    g_stpcpy(at, suffix);
    return buf;
}

static void
replay_add_streams(Replay *r)
{
    int p = r->sched->n_devices;
    gboolean two = r->sc->has_hardware && r->sc->hardware.copy_streams == 2;
    r->compute_stream = g_new(int, p);
    r->d2h_stream = g_new(int, p);
    r->h2d_stream = g_new(int, p);
    for (int d = 0; d < p; d++) {
        char name[48];
        r->compute_stream[d] =
            ppsim_exec_add_stream(r->exec, ppsim_sim_stream_name(name, "gpu", d, ".compute"));
        r->d2h_stream[d] = ppsim_exec_add_stream(
            r->exec, ppsim_sim_stream_name(name, "gpu", d, two ? ".d2h" : ".copy"));
        if (two) {
            r->h2d_stream[d] =
                ppsim_exec_add_stream(r->exec, ppsim_sim_stream_name(name, "gpu", d, ".h2d"));
        } else {
            r->h2d_stream[d] = r->d2h_stream[d];
        }
    }
    int nodes = r->topo ? r->topo->n_nodes : 1;
    r->cpu_stream_base = g_new(int, nodes);
    for (int n = 0; n < nodes; n++)
        for (int w = 0; w < r->n_cpu_workers; w++) {
            char node[48], name[96];
            ppsim_sim_stream_name(node, "node", n, ".cpu");
            int id = ppsim_exec_add_stream(r->exec, ppsim_sim_stream_name(name, node, w, ""));
            if (w == 0)
                r->cpu_stream_base[n] = id;
        }
}

/* Bits per weight a WRL brings back ([TP] §5: quantized weights); 16 by default. */
int
ppsim_sim_weight_bits(const PpsimOp *op)
{
    return op->share != 0 ? op->share : 16;
}

/* Bytes of a model-state transfer of stage @st: 16-bit gradients out ([ZERO] §3.1), weights
 * at their bits back. */
static guint64
replay_state_bytes(const PpsimStageCost *st, const PpsimOp *op)
{
    if (op->kind == PPSIM_OP_GOFF)
        return (guint64)ppsim_round_clamped(st->params * 2.0);
    return (guint64)ppsim_round_clamped(st->params * ppsim_sim_weight_bits(op) / 8.0);
}

/* GPUs of one TP group on one node (1 without tensor parallelism): st->params is one GPU's
 * share, and the node's CPU updates, and its memory holds, the offloaded states of each. */
int
ppsim_sim_tp_on_node(const Replay *r)
{
    return MAX(1, MIN(r->sc->parallel.tp, r->sc->hardware.gpus_per_node));
}

PpsimTime
ppsim_sim_duration(const Replay *r, const PpsimOp *op)
{
    const PpsimStageCost *st = &r->costs->stage[op->stage];
    if (r->ep_flows && (op->kind == PPSIM_OP_F || op->kind == PPSIM_OP_B ||
                        op->kind == PPSIM_OP_BW || op->kind == PPSIM_OP_R))
        return ppsim_sim_ep_compute(r, op); /* MoE all-to-alls: flows of their own */
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F: /* ZeRO-3's gathers are in the estimates; flows of their own here */
        if (op->flags & PPSIM_OP_FLAG_OVERLAP) /* the F half of an F&B pair */
            return MAX(st->est.fo_ps - (r->zero_flows ? st->zero_gather_ps : 0), 0);
        return st->est.f_ps - (r->zero_flows ? st->zero_gather_ps : 0);
    case PPSIM_OP_B:
        return st->est.b_ps - (r->zero_flows ? st->zero_gather_ps : 0);
    case PPSIM_OP_W:
        return st->est.w_ps;
    case PPSIM_OP_BW:
        if (op->flags & PPSIM_OP_FLAG_OVERLAP) /* the BW half of an F&B pair */
            return MAX(st->est.bwo_ps - (r->zero_flows ? st->zero_gather_ps : 0), 0);
        return st->est.b_ps + st->est.w_ps - (r->zero_flows ? st->zero_gather_ps : 0);
    case PPSIM_OP_R:
        /* a partial recompute re-runs that share of the stage's forward */
        if (op->share == 0)
            return st->est.r_ps;
        /* = r_ps x share / 100, without the product (r_ps may be near PPSIM_COST_MAX) */
        return st->est.r_ps / 100 * op->share + st->est.r_ps % 100 * op->share / 100;
    case PPSIM_OP_OPT:
        if ((op->flags & PPSIM_OP_FLAG_CPU) && !r->costs->explicit_mode) /* the node's shares */
            return ppsim_time_from_seconds(
                st->params * ppsim_sim_tp_on_node(r) /
                (r->sc->hardware.host_adam_params_per_s * r->cpu_count[op->stage]));
        return st->opt_ps;
    case PPSIM_OP_OFF:
    case PPSIM_OP_RL:
    case PPSIM_OP_GOFF:
        return st->est.off_ps;
    case PPSIM_OP_WRL: /* explicit mode: `offload` is the 16-bit transfer */
        return st->est.off_ps / 16 * ppsim_sim_weight_bits(op) +
               st->est.off_ps % 16 * ppsim_sim_weight_bits(op) / 16;
    default:
        g_assert_not_reached();
    }
}

/* Adds @op, op @id, in list @list of device @d, as a task with its memory effects (in task
 * order, as the executor prefers); returns the task id (== @id). */
static PpsimTaskId
replay_add_task(Replay *r, guint32 id, int d, int list, const PpsimOp *op)
{
    int s = op->stage;
    SimMemEffects fx;
    ppsim_sim_mem_effects(r, op, &fx);
    PpsimTaskId t;
    if (list == 1) {
        gboolean off = op->kind == PPSIM_OP_OFF;
        int stream = off ? r->d2h_stream[d] : r->h2d_stream[d];
        if (r->topo != NULL) {
            int host = ppsim_topology_host_endpoint(r->topo, ppsim_sim_node_of(r, d));
            guint64 bytes = 0;
            if (ppsim_op_kind_per_stage(op->kind)) {
                bytes = replay_state_bytes(&r->costs->stage[s], op);
            } else {
                MemPlan m;
                ppsim_sim_mem_plan(r, s, op->microbatch, &m);
                bytes = m.offloaded ? (guint64)m.keep : 0;
            }
            t = ppsim_exec_add_transfer(r->exec, stream, off ? d : host, off ? host : d, bytes);
        } else {
            t = ppsim_exec_add_task(r->exec, stream, ppsim_sim_duration(r, op));
        }
    } else if (op->kind == PPSIM_OP_OPT && (op->flags & PPSIM_OP_FLAG_CPU)) {
        int stream = r->cpu_stream_base[ppsim_sim_node_of(r, d)] + r->cpu_first[s];
        t = ppsim_exec_add_task(r->exec, stream, ppsim_sim_duration(r, op));
    } else {
        t = ppsim_exec_add_task(r->exec, r->compute_stream[d], ppsim_sim_duration(r, op));
    }
    g_assert(t == id);
    for (int k = 0; k < fx.n; k++)
        ppsim_exec_add_mem(r->exec, id, fx.e[k].when, fx.e[k].pool, fx.e[k].tag, fx.e[k].category,
                           fx.e[k].delta);
    return t;
}

/* The direction of pipeline traffic an op sends and receives: 1 forward (F), 2 backward (B,
 * BW), 0 neither. */
static int
replay_direction(const PpsimOp *op)
{
    if (op->kind == PPSIM_OP_F)
        return 1;
    return op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW ? 2 : 0;
}

/* The task @step ops away from op @id at position @pos of @list (@step = +1 or -1) whose
 * direction is @dir (any direction when @dir < 0), or PPSIM_EXEC_NO_TASK. */
static PpsimTaskId
replay_scan(const GArray *list, guint32 id, const PpsimOpPos *pos, int step, int dir)
{
    for (gint64 i = pos->index + step; i >= 0 && i < (gint64)list->len; i += step)
        if (dir < 0 || replay_direction(&g_array_index(list, PpsimOp, i)) == dir)
            return (PpsimTaskId)((gint64)id + (i - pos->index));
    return PPSIM_EXEC_NO_TASK;
}

/* A cross-device flow under parallel.p2p (hardware mode). Async: only @to waits for it.
 * Otherwise a rendezvous ([ZBREPO] first release, Megatron-LM's p2p_communication.py and
 * schedules.py): the data moves once the receiver has posted its receive, and an op of the
 * sender waits until it has arrived.
 * - blocking: after every op, one batched send and receive waited on (`batch_p2p_comm`,
 *   `batch_p2p_sync`: non-interleaved 1F1B): the receive is posted after the op before @to,
 *   and the sender's next op waits.
 * - overlapped: `overlap_p2p_comm` in the interleaved schedule: after each forward (backward)
 *   the device posts its send and the receive for its next forward (backward) and waits on
 *   both only before that next forward (backward): the receive is posted after the
 *   receiver's previous op of @to's direction (none: posted before it started), and the
 *   sender's next op of @from's direction waits. */
static void
replay_flow(Replay *r, guint32 from, guint32 to, int a, int b, guint64 bytes)
{
    PpsimP2p mode = r->sc->parallel.p2p;
    if (mode == PPSIM_P2P_ASYNC) {
        ppsim_exec_add_flow_dep(r->exec, from, to, a, b, bytes);
        return;
    }
    PpsimOpPos pa, pb;
    ppsim_schedule_index_pos(r->idx, from, &pa);
    ppsim_schedule_index_pos(r->idx, to, &pb);
    const GArray *list_a = pa.list == 0 ? r->sched->compute[a] : r->sched->copy[a];
    const GArray *list_b = pb.list == 0 ? r->sched->compute[b] : r->sched->copy[b];
    int dir_a = -1, dir_b = -1; /* blocking: the adjacent op, whatever its direction */
    if (mode == PPSIM_P2P_OVERLAPPED) {
        dir_a = replay_direction(&g_array_index(list_a, PpsimOp, pa.index));
        dir_b = replay_direction(&g_array_index(list_b, PpsimOp, pb.index));
    }
    PpsimTaskId gate = dir_b != 0 ? replay_scan(list_b, to, &pb, -1, dir_b) : PPSIM_EXEC_NO_TASK;
    PpsimTaskId waiter =
        dir_a != 0 ? replay_scan(list_a, from, &pa, +1, dir_a) : PPSIM_EXEC_NO_TASK;
    ppsim_exec_add_flow_dep_sync(r->exec, from, to, a, b, bytes, gate, waiter);
}

static void
replay_dep(guint32 from, guint32 to, PpsimDepKind kind, int boundary, gpointer data)
{
    Replay *r = data;
    int a = ppsim_schedule_index_device(r->idx, from), b = ppsim_schedule_index_device(r->idx, to);
    if (kind == PPSIM_DEP_LOCAL || kind == PPSIM_DEP_SYNC || a == b) {
        ppsim_exec_add_dep(r->exec, from, to, 0); /* a cross-device event costs no time */
    } else if (r->topo != NULL) {
        replay_flow(r, from, to, a, b, r->costs->stage[boundary].p2p_bytes);
    } else {
        ppsim_exec_add_dep(r->exec, from, to, r->costs->p2p_latency_ps);
    }
}

static void
replay_describe(GString *out, PpsimTaskId task, gpointer data)
{
    Replay *r = data;
    if (task >= ppsim_schedule_n_ops(r->sched)) {
        g_string_append(out, "a DP gradient reduction, ZeRO-3 gather or MoE all-to-all");
        return;
    }
    PpsimOpPos pos;
    ppsim_schedule_index_pos(r->idx, task, &pos);
    ppsim_op_describe(out, ppsim_schedule_index_op(r->idx, task));
    g_string_append_printf(out, " on device %d", pos.device);
}

/* What both replays need before they start: the topology (hardware mode), whether some
 * optimizer step runs on a CPU worker, and the static memory that moves to the host for
 * it. */
static void
replay_prepare(Replay *r)
{
    if (!r->costs->explicit_mode) {
        PpsimHardware dev_hw; /* one endpoint per pipeline device (= TP group) */
        ppsim_par_device_hardware(r->sc, &dev_hw);
        r->topo = ppsim_topology_new(&dev_hw, r->sched->n_devices);
    }
    r->n_cpu_workers = MAX(r->sc->hardware.host_optimizer_workers, 1);
    const gint32 *opt = ppsim_schedule_index_table(r->idx, PPSIM_OP_OPT);
    for (int s = 0; opt != NULL && s < r->sched->n_stages && !r->has_cpu_opt; s++)
        r->has_cpu_opt = opt[s] >= 0 && (ppsim_schedule_index_op(r->idx, (guint32)opt[s])->flags &
                                         PPSIM_OP_FLAG_CPU) != 0;
    ppsim_sim_static_saved(r);
}

static void
replay_build(Replay *r)
{
    const PpsimSchedule *sched = r->sched;
    int p = sched->n_devices, nodes = r->topo ? r->topo->n_nodes : 1;
    for (int d = 0; d < p; d++)
        ppsim_exec_add_pool(r->exec, r->costs->memory_limit);
    for (int n = 0; n < nodes; n++)
        ppsim_exec_add_pool(r->exec, r->topo ? (gint64)r->sc->hardware.host_memory_bytes : 0);
    replay_add_streams(r);
    g_autofree gint64 *static_mem = ppsim_sim_static_memory(r);
    for (int d = 0; d < p; d++) /* plus what sits outside the allocator (memory.h) */
        ppsim_exec_set_pool_base(r->exec, d, PPSIM_MEM_STATIC,
                                 static_mem[d] + r->costs->memory_fixed);
    for (int n = 0; n < nodes && r->topo != NULL; n++)
        ppsim_exec_set_pool_base(r->exec, p + n, PPSIM_MEM_STATIC, MAX(0, r->host_static[n]));

    guint32 id = 0; /* ops are numbered device-major, compute list first (schedule-index.h) */
    for (int d = 0; d < p; d++)
        for (int list = 0; list < 2; list++) {
            const GArray *ops = list == 0 ? sched->compute[d] : sched->copy[d];
            g_assert(id == ppsim_schedule_index_base(r->idx, d, list));
            for (guint i = 0; i < ops->len; i++, id++)
                replay_add_task(r, id, d, list, &g_array_index(ops, PpsimOp, i));
        }
    ppsim_schedule_foreach_dep(r->idx, replay_dep, r);
    ppsim_sim_add_dp_tasks(r);
    ppsim_sim_add_zero_gathers(r);
    ppsim_sim_add_param_gathers(r);
    ppsim_sim_add_ep_flows(r);
    ppsim_sim_add_tied_grads(r);
}

/* Whether each of the schedule's lists becomes exactly one executor stream, in the same
 * order: no optimizer step on a CPU worker (those leave the compute list for a shared
 * worker stream) and no offload/reload split over two copy engines. Then the replay's wait
 * graph is the checker's (list order plus the dependencies), so the replay deadlocks
 * iff the checker would report a cyclic wait. */
static gboolean
replay_lists_are_streams(const Replay *r)
{
    const PpsimScenario *sc = r->sc;
    gboolean two = sc->has_hardware && sc->hardware.copy_streams == 2;
    for (int d = 0; d < r->sched->n_devices; d++)
        if (two && r->sched->copy[d]->len > 0)
            return FALSE;
    return !r->has_cpu_opt;
}

static PpsimRunResult *
replay_result_new(const PpsimScenario *sc, const char *label, const char *generator)
{
    PpsimRunResult *res = ppsim_run_result_new();
    res->label = g_strdup(label);
    res->generator = g_strdup(generator);
    res->scenario = g_strdup(sc->name);
    return res;
}

/* The one-pass replay (sim-fast.c) when it applies: explicit costs, each list one stream,
 * nothing to record. NULL with @error unset when it does not apply or declines. */
static PpsimRunResult *
replay_fast(Replay *r, const char *label, const char *generator, PpsimSimFlags flags,
            GError **error)
{
    if (!r->costs->explicit_mode || (flags & (PPSIM_SIM_RECORD | PPSIM_SIM_EVENTS)) ||
        !replay_lists_are_streams(r))
        return NULL;
    g_autoptr(PpsimRunResult) res = replay_result_new(r->sc, label, generator);
    if (ppsim_sim_fast(r, res, error) != SIM_FAST_DONE)
        return NULL;
    return g_steal_pointer(&res);
}

PpsimRunResult *
ppsim_sim_replay_borrowed(const PpsimScenario *sc, const PpsimCosts *costs,
                          const PpsimSchedule *sched, const char *label, const char *generator,
                          PpsimSimFlags flags, GError **error)
{
    g_return_val_if_fail(costs->n_stages == sched->n_stages, NULL);
    gint64 t0 = g_get_monotonic_time();
    Replay r = {.sc = sc, .costs = costs, .sched = sched};
    r.idx = ppsim_schedule_index_new(sched, error);
    if (r.idx != NULL)
        replay_prepare(&r);
    /* The cyclic-wait check (a second pass over every dependency) is left to the replay
     * when a deadlock there means the same thing; the checker then names the op. */
    gboolean deadlock_is_cycle = r.idx != NULL && replay_lists_are_streams(&r);
    if (r.idx == NULL || !ppsim_schedule_validate_rules(sched, r.idx, error) ||
        (!deadlock_is_cycle && !ppsim_schedule_validate_acyclic(sched, r.idx, error))) {
        replay_clear(&r);
        return NULL;
    }
    gint64 t1 = g_get_monotonic_time();
    GError *local = NULL;
    g_autoptr(PpsimRunResult) fast = replay_fast(&r, label, generator, flags, &local);
    if (fast != NULL || local != NULL) {
        replay_clear(&r);
        if (local != NULL) {
            g_propagate_error(error, local);
            return NULL;
        }
        fast->time_validate_us = t1 - t0;
        return g_steal_pointer(&fast);
    }
    r.exec = ppsim_exec_new(r.topo, sched->n_stages, ppsim_schedule_n_ops(sched));
    r.zero_flows = ppsim_sim_zero_flows(&r);
    r.ep_flows = ppsim_sim_ep_flows(&r);
    ppsim_exec_set_recording(r.exec, (flags & PPSIM_SIM_RECORD) != 0);
    replay_build(&r);
    gint64 t2 = g_get_monotonic_time();
    if (!ppsim_exec_run(r.exec, replay_describe, &r, &local)) {
        if (deadlock_is_cycle && !ppsim_schedule_validate_acyclic(sched, r.idx, error))
            g_clear_error(&local);
        else
            g_propagate_error(error, local);
        replay_clear(&r);
        return NULL;
    }
    gint64 t3 = g_get_monotonic_time();
    g_autoptr(PpsimRunResult) res = replay_result_new(sc, label, generator);
    ppsim_sim_collect(&r, res, flags);
    replay_clear(&r);
    res->time_validate_us = t1 - t0;
    res->time_build_us = t2 - t1;
    res->time_replay_us = t3 - t2;
    res->time_metrics_us = g_get_monotonic_time() - t3;
    return g_steal_pointer(&res);
}

PpsimRunResult *
ppsim_sim_replay(const PpsimScenario *sc, const PpsimCosts *costs, PpsimSchedule *sched_in,
                 const char *label, const char *generator, PpsimSimFlags flags, GError **error)
{
    g_autoptr(PpsimSchedule) sched = sched_in;
    PpsimRunResult *res =
        ppsim_sim_replay_borrowed(sc, costs, sched, label, generator, flags, error);
    if (res != NULL)
        res->schedule = g_steal_pointer(&sched);
    return res;
}

PpsimRunResult *
ppsim_sim_run_spec(const PpsimScenario *sc, const PpsimScheduleSpec *spec, PpsimSimFlags flags,
                   GError **error)
{
    PpsimCosts *costs_raw = NULL;
    GError *local = NULL;
    GArray *choices = ppsim_choices_new();
    PpsimSolverReport solver = {0};
    gint64 t0 = g_get_monotonic_time();
    PpsimRunResult *res = NULL;
    PpsimSchedule *sched =
        ppsim_sim_build(sc, spec, &costs_raw, choices, &solver, flags, &res, &local);
    gint64 t1 = g_get_monotonic_time();
    g_autoptr(PpsimCosts) costs = costs_raw;
    const char *label = spec->label ? spec->label : spec->name;
    if (res != NULL) { /* the generator's replay of this very schedule, spent while making it */
        ppsim_schedule_free(sched);
        t1 -=
            res->time_validate_us + res->time_build_us + res->time_replay_us + res->time_metrics_us;
    } else if (sched != NULL) {
        res = ppsim_sim_replay(sc, costs, sched, label, spec->name, flags, &local);
    }
    if (res != NULL) {
        res->choices = g_steal_pointer(&choices);
        res->time_schedule_us = t1 - t0;
    }
    if (choices != NULL)
        g_array_unref(choices);
    if (res != NULL && solver.present)
        res->solver = solver;
    if (res == NULL) {
        g_autofree char *q = ppsim_quote(label);
        g_propagate_prefixed_error(error, local, "schedule '%s': ", q);
    }
    return res;
}

GPtrArray *
ppsim_sim_run_all(const PpsimScenario *sc, PpsimSimFlags flags, GError **error)
{
    g_autoptr(GPtrArray) results =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_run_result_free);
    for (guint i = 0; i < sc->schedules->len; i++) {
        PpsimRunResult *res =
            ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, i), flags, error);
        if (res == NULL)
            return NULL;
        g_ptr_array_add(results, res);
    }
    return g_steal_pointer(&results);
}
