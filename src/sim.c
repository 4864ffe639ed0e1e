/* sim.c: scenario -> costs -> schedule -> checked IR -> task graph -> metrics; see sim.h.
 *
 * The only module that knows every other one. It turns each op into an executor task (op id
 * == task id: ops are added device-major in list order), each DESIGN 3 dependency into a
 * latency (explicit-cost mode) or a flow over the topology (hardware mode), and the memory
 * rules of DESIGN 4 into allocations and frees at task starts and ends.
 */
#include "sim-internal.h"
#include "sched/registry.h"
#include "schedule/schedule-index.h"
#include "hw/exec.h"
#include "cost/parallel.h"
#include "util/ppsim-error.h"

#include <string.h>

/* ---- building the schedule ------------------------------------------------------------ */

static gboolean
sim_check_shape(const PpsimScenario *sc, const PpsimSchedule *sched, const char *what,
                GError **error)
{
    if (sched->n_devices != sc->training.pp || sched->n_microbatches != sc->training.microbatches) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "%s has p = %d devices and m = %d microbatches, but the scenario has "
                    "training.pp = %d and training.microbatches = %d",
                    what, sched->n_devices, sched->n_microbatches, sc->training.pp,
                    sc->training.microbatches);
        return FALSE;
    }
    return TRUE;
}

static PpsimSchedule *
sim_build_custom(const PpsimScenario *sc, const PpsimScheduleSpec *spec, GError **error)
{
    if (spec->file == NULL) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "%s:%d:%d: schedule 'custom' needs a 'file'", sc->path ? sc->path : "",
                    spec->mark.line, spec->mark.col);
        return NULL;
    }
    /* mapped, not copied: the page cache already holds it; on failure, read it the usual
     * way for the usual error message */
    g_autoptr(GMappedFile) map = g_mapped_file_new(spec->file, FALSE, NULL);
    g_autofree char *text = NULL;
    gsize len = 0;
    if (map == NULL && !g_file_get_contents(spec->file, &text, &len, error))
        return NULL;
    const char *data = map ? g_mapped_file_get_contents(map) : text;
    if (map != NULL)
        len = g_mapped_file_get_length(map);
    g_autoptr(PpsimSchedule) sched =
        ppsim_schedule_from_csv(data ? data : "", len, spec->file, error);
    if (sched == NULL)
        return NULL;
    g_autofree char *what = g_strdup_printf("schedule file '%s'", spec->file);
    if (!sim_check_shape(sc, sched, what, error))
        return NULL;
    return g_steal_pointer(&sched);
}

/* The runner's replay for generators choosing between plans (generator.h). */
typedef struct {
    const PpsimScenario *sc;
    const PpsimCosts *costs;
} Measure;

static gboolean
sim_measure(const PpsimSchedule *candidate, PpsimTime *makespan_ps, gboolean *fits,
            gpointer user_data, GError **error)
{
    const Measure *m = user_data;
    g_autoptr(PpsimRunResult) res = ppsim_sim_replay(
        m->sc, m->costs, ppsim_schedule_copy(candidate), "candidate", "candidate", 0, error);
    if (res == NULL)
        return FALSE;
    *makespan_ps = res->makespan_ps;
    *fits = !ppsim_run_result_any_oom(res);
    return TRUE;
}

/* What the run decided that the scenario did not say, beyond the generator's own choices:
 * the layer split over stages (hardware mode, no model.stage_layers). */
static void
sim_note_split(const PpsimScenario *sc, const PpsimCosts *costs, GArray *choices)
{
    if (costs->explicit_mode || sc->model.stage_layers != NULL || choices == NULL)
        return;
    int S = costs->n_stages, lo = G_MAXINT, hi = 0;
    for (int i = 0; i < S; i++) {
        lo = MIN(lo, costs->stage[i].layers);
        hi = MAX(hi, costs->stage[i].layers);
    }
    g_autoptr(GString) s = g_string_new(NULL);
    for (int i = 0; i < S; i++)
        g_string_append_printf(s, "%s%d", i ? "," : "", costs->stage[i].layers);
    if (lo == hi)
        ppsim_choice_add(choices, "stage_layers", s->str, "even split: %d layer%s per stage", lo,
                         lo == 1 ? "" : "s");
    else
        ppsim_choice_add(choices, "stage_layers", s->str,
                         "as even as %d layers over %d stages allow", sc->model.layers, S);
}

/* ppsim_sim_build_schedule, also collecting what was chosen for the user into @choices
 * (nullable). */
static PpsimSchedule *
sim_build(const PpsimScenario *sc, const PpsimScheduleSpec *spec, PpsimCosts **costs_out,
          GArray *choices, GError **error)
{
    const char *path = spec->origin ? spec->origin : sc->path ? sc->path : "";
    if (g_strcmp0(spec->name, "custom") == 0) {
        g_autoptr(PpsimSchedule) sched = sim_build_custom(sc, spec, error);
        if (sched == NULL)
            return NULL;
        PpsimCosts *costs = ppsim_costs_new(sc, sched->n_stages, error);
        if (costs == NULL)
            return NULL;
        if (costs_out)
            *costs_out = costs;
        else
            ppsim_costs_free(costs);
        return g_steal_pointer(&sched);
    }
    GError *local = NULL;
    const PpsimScheduleClass *klass = ppsim_sched_registry_find(spec->name, &local);
    if (klass == NULL) {
        g_propagate_prefixed_error(error, local, "%s:%d:%d: ", path, spec->mark.line,
                                   spec->mark.col);
        return NULL;
    }
    g_autoptr(PpsimOptions) opts = ppsim_options_new(klass, spec->options, path, error);
    if (opts == NULL)
        return NULL;
    PpsimPipelineShape shape = {.p = sc->training.pp,
                                .v = klass->chunks > 0 ? klass->chunks : sc->training.chunks,
                                .m = sc->training.microbatches};
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, shape.p * shape.v, error);
    if (costs == NULL)
        return NULL;
    if (klass->chunks == 0 && !sc->training.chunks_set)
        ppsim_choice_add(choices, "v", "1", "training.chunks unset");
    Measure measure = {sc, costs};
    PpsimScheduleParams params = {.options = opts,
                                  .costs = &costs->estimates,
                                  .choices = choices,
                                  .measure = sim_measure,
                                  .measure_data = &measure};
    PpsimSchedule *raw = NULL;
    if (!klass->generate(&shape, &params, &raw, error))
        return NULL;
    sim_note_split(sc, costs, choices);
    ppsim_sim_note_parallel(sc, choices);
    g_autoptr(PpsimSchedule) sched = raw;
    g_assert(sched != NULL);
    if (sched->n_stages != costs->n_stages) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "generator made %d stages, expected %d", sched->n_stages, costs->n_stages);
        return NULL;
    }
    g_autofree char *what = g_strdup_printf("generator '%s' output", klass->name);
    if (!sim_check_shape(sc, sched, what, error))
        return NULL;
    if (costs_out)
        *costs_out = g_steal_pointer(&costs);
    return g_steal_pointer(&sched);
}

PpsimSchedule *
ppsim_sim_build_schedule(const PpsimScenario *sc, const PpsimScheduleSpec *spec,
                         PpsimCosts **costs_out, GError **error)
{
    return sim_build(sc, spec, costs_out, NULL, error);
}

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
    g_free(r->dp_task);
    g_free(r->dp_stream);
}

static int
replay_node_of(const Replay *r, int device)
{
    return r->topo ? ppsim_topology_node_of(r->topo, device) : 0;
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
        g_autofree char *c = g_strdup_printf("gpu%d.compute", d);
        g_autofree char *o = g_strdup_printf(two ? "gpu%d.d2h" : "gpu%d.copy", d);
        r->compute_stream[d] = ppsim_exec_add_stream(r->exec, c);
        r->d2h_stream[d] = ppsim_exec_add_stream(r->exec, o);
        if (two) {
            g_autofree char *i = g_strdup_printf("gpu%d.h2d", d);
            r->h2d_stream[d] = ppsim_exec_add_stream(r->exec, i);
        } else {
            r->h2d_stream[d] = r->d2h_stream[d];
        }
    }
    int nodes = r->topo ? r->topo->n_nodes : 1;
    r->n_cpu_workers = MAX(r->sc->hardware.host_optimizer_workers, 1);
    r->cpu_stream_base = g_new(int, nodes);
    for (int n = 0; n < nodes; n++)
        for (int w = 0; w < r->n_cpu_workers; w++) {
            g_autofree char *name = g_strdup_printf("node%d.cpu%d", n, w);
            int id = ppsim_exec_add_stream(r->exec, name);
            if (w == 0)
                r->cpu_stream_base[n] = id;
        }
}

static PpsimTime
replay_duration(const Replay *r, const PpsimOp *op)
{
    const PpsimStageCost *st = &r->costs->stage[op->stage];
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        return st->est.f_ps;
    case PPSIM_OP_B:
        return st->est.b_ps;
    case PPSIM_OP_W:
        return st->est.w_ps;
    case PPSIM_OP_BW:
        return st->est.b_ps + st->est.w_ps;
    case PPSIM_OP_R:
        return st->est.r_ps;
    case PPSIM_OP_OPT:
        if ((op->flags & PPSIM_OP_FLAG_CPU) && !r->costs->explicit_mode)
            return ppsim_time_from_seconds(st->params / r->sc->hardware.host_adam_params_per_s);
        return st->opt_ps;
    case PPSIM_OP_OFF:
    case PPSIM_OP_RL:
        return st->est.off_ps;
    default:
        g_assert_not_reached();
    }
}

/* DESIGN 4 for one (stage, microbatch): F allocates A (keeping only the checkpoint when R
 * recomputes the rest); OFF frees what is resident when its D2H ends and RL brings it back
 * as a buffer when it starts; R allocates the recomputed part as a buffer; B frees A - A_W
 * (buffers first), W the rest, BW everything. The host pool holds offloaded bytes from the
 * start of OFF to the end of RL. */
typedef struct {
    int d, host;             /* device pool, host pool */
    gint64 rc, off, rl;      /* op ids, -1 when absent */
    gint64 A, keep;          /* allocated by F; kept by F when R recomputes */
    gint64 act, buf;         /* resident activation and buffers before the backward */
    gint64 free_b, from_buf; /* what B frees, and how much of it are buffers */
    gboolean offloaded;      /* both OFF and RL exist */
} MemPlan;

static void
replay_mem_plan(const Replay *r, int s, int j, MemPlan *m)
{
    const PpsimStageCost *st = &r->costs->stage[s];
    const PpsimScheduleIndex *x = r->idx;
    m->d = r->sched->stage_device[s];
    m->host = r->sched->n_devices + replay_node_of(r, m->d);
    m->rc = ppsim_schedule_index_find(x, PPSIM_OP_R, s, j);
    m->off = ppsim_schedule_index_find(x, PPSIM_OP_OFF, s, j);
    m->rl = ppsim_schedule_index_find(x, PPSIM_OP_RL, s, j);
    m->A = st->est.act;
    m->keep = m->rc >= 0 ? MIN(st->act_ckpt, m->A) : m->A;
    m->act = m->keep;
    m->buf = 0;
    m->offloaded = m->off >= 0 && m->rl >= 0;
    if (m->offloaded) {
        m->buf = m->act;
        m->act = 0;
    }
    if (m->rc >= 0)
        m->buf += m->A - m->keep;
    m->free_b = MAX(0, (m->act + m->buf) - st->est.act_w);
    m->from_buf = MIN(m->buf, m->free_b);
}

/* Adds one memory effect of task @id, unless nothing changes. */
static void
plan(PpsimExec *out, guint32 id, PpsimMemWhen when, int pool, int tag, PpsimMemCategory cat,
     gint64 delta)
{
    if (delta != 0)
        ppsim_exec_add_mem(out, id, when, pool, tag, cat, delta);
}

/* Adds @op, op @id, in list @list of device @d, as a task with its memory effects (in task
 * order, as the executor prefers); returns the task id (== @id). */
static PpsimTaskId
replay_add_task(Replay *r, guint32 id, int d, int list, const PpsimOp *op)
{
    int s = op->stage;
    MemPlan m = {0};
    if (op->kind != PPSIM_OP_OPT)
        replay_mem_plan(r, s, op->microbatch, &m);
    PpsimTaskId t;
    if (list == 1) {
        gboolean off = op->kind == PPSIM_OP_OFF;
        int stream = off ? r->d2h_stream[d] : r->h2d_stream[d];
        if (r->topo != NULL) {
            int host = ppsim_topology_host_endpoint(r->topo, replay_node_of(r, d));
            guint64 bytes = m.offloaded ? (guint64)m.keep : 0;
            t = ppsim_exec_add_transfer(r->exec, stream, off ? d : host, off ? host : d, bytes);
        } else {
            t = ppsim_exec_add_task(r->exec, stream, replay_duration(r, op));
        }
    } else if (op->kind == PPSIM_OP_OPT && (op->flags & PPSIM_OP_FLAG_CPU)) {
        int stream = r->cpu_stream_base[replay_node_of(r, d)] + op->stage % r->n_cpu_workers;
        t = ppsim_exec_add_task(r->exec, stream, replay_duration(r, op));
    } else {
        t = ppsim_exec_add_task(r->exec, r->compute_stream[d], replay_duration(r, op));
    }
    g_assert(t == id);
    PpsimExec *x = r->exec;
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        plan(x, id, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_ACTIVATION, m.A);
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, m.keep - m.A);
        break;
    case PPSIM_OP_OFF:
        if (m.offloaded) {
            plan(x, id, PPSIM_MEM_AT_START, m.host, -1, PPSIM_MEM_ACTIVATION, m.keep);
            plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, -m.keep);
        }
        break;
    case PPSIM_OP_RL:
        if (m.offloaded) {
            plan(x, id, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_BUFFER, m.keep);
            plan(x, id, PPSIM_MEM_AT_END, m.host, -1, PPSIM_MEM_ACTIVATION, -m.keep);
        }
        break;
    case PPSIM_OP_R:
        plan(x, id, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_BUFFER, m.A - m.keep);
        break;
    case PPSIM_OP_BW:
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_BUFFER, -m.buf);
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, -m.act);
        break;
    case PPSIM_OP_B:
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_BUFFER, -m.from_buf);
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, -(m.free_b - m.from_buf));
        break;
    case PPSIM_OP_W:
        /* with a BW for this microbatch, W does not exist (the checker's rule) */
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_BUFFER, -(m.buf - m.from_buf));
        plan(x, id, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION,
             -(m.act - (m.free_b - m.from_buf)));
        break;
    default:
        break;
    }
    return t;
}

static void
replay_dep(guint32 from, guint32 to, PpsimDepKind kind, int boundary, gpointer data)
{
    Replay *r = data;
    int a = ppsim_schedule_index_device(r->idx, from), b = ppsim_schedule_index_device(r->idx, to);
    if (kind == PPSIM_DEP_LOCAL || kind == PPSIM_DEP_SYNC || a == b) {
        ppsim_exec_add_dep(r->exec, from, to, 0); /* a cross-device event costs no time */
    } else if (r->topo != NULL) {
        ppsim_exec_add_flow_dep(r->exec, from, to, a, b, r->costs->stage[boundary].p2p_bytes);
    } else {
        ppsim_exec_add_dep(r->exec, from, to, r->costs->p2p_latency_ps);
    }
}

static void
replay_describe(GString *out, PpsimTaskId task, gpointer data)
{
    Replay *r = data;
    if (task >= ppsim_schedule_n_ops(r->sched)) {
        g_string_append(out, "a DP gradient reduction");
        return;
    }
    PpsimOpPos pos;
    ppsim_schedule_index_pos(r->idx, task, &pos);
    ppsim_op_describe(out, ppsim_schedule_index_op(r->idx, task));
    g_string_append_printf(out, " on device %d", pos.device);
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
    gint64 *static_mem = g_new0(gint64, p);
    for (int s = 0; s < sched->n_stages; s++)
        static_mem[sched->stage_device[s]] += r->costs->stage[s].static_mem;
    for (int d = 0; d < p; d++)
        ppsim_exec_set_pool_base(r->exec, d, PPSIM_MEM_STATIC, static_mem[d]);
    g_free(static_mem);
    replay_add_streams(r);

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
}

/* Whether each of the schedule's lists becomes exactly one executor stream, in the same
 * order: no optimizer step on a CPU worker (those leave the compute list for a shared
 * worker stream) and no offload/reload split over two copy engines. Then the replay's wait
 * graph is the checker's (list order plus DESIGN 3 dependencies), so the replay deadlocks
 * iff the checker would report a cyclic wait. */
static gboolean
replay_lists_are_streams(const PpsimScenario *sc, const PpsimSchedule *sched)
{
    gboolean two = sc->has_hardware && sc->hardware.copy_streams == 2;
    for (int d = 0; d < sched->n_devices; d++) {
        if (two && sched->copy[d]->len > 0)
            return FALSE;
        const GArray *ops = sched->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (op->kind == PPSIM_OP_OPT && (op->flags & PPSIM_OP_FLAG_CPU))
                return FALSE;
        }
    }
    return TRUE;
}

PpsimRunResult *
ppsim_sim_replay(const PpsimScenario *sc, const PpsimCosts *costs, PpsimSchedule *sched_in,
                 const char *label, const char *generator, PpsimSimFlags flags, GError **error)
{
    g_autoptr(PpsimSchedule) sched = sched_in;
    gint64 t0 = g_get_monotonic_time();
    Replay r = {.sc = sc, .costs = costs, .sched = sched};
    r.idx = ppsim_schedule_index_new(sched, error);
    /* The cyclic-wait check (a second pass over every dependency) is left to the replay
     * when a deadlock there means the same thing; the checker then names the op. */
    gboolean deadlock_is_cycle = r.idx != NULL && replay_lists_are_streams(sc, sched);
    if (r.idx == NULL || !ppsim_schedule_validate_rules(sched, r.idx, error) ||
        (!deadlock_is_cycle && !ppsim_schedule_validate_acyclic(sched, r.idx, error))) {
        replay_clear(&r);
        return NULL;
    }
    g_return_val_if_fail(costs->n_stages == sched->n_stages, NULL);
    gint64 t1 = g_get_monotonic_time();
    if (!costs->explicit_mode) {
        PpsimHardware dev_hw; /* one endpoint per pipeline device (= TP group) */
        ppsim_par_device_hardware(sc, &dev_hw);
        r.topo = ppsim_topology_new(&dev_hw, sched->n_devices);
    }
    r.exec = ppsim_exec_new(r.topo, sched->n_stages, ppsim_schedule_n_ops(sched));
    ppsim_exec_set_recording(r.exec, (flags & PPSIM_SIM_RECORD) != 0);
    replay_build(&r);
    gint64 t2 = g_get_monotonic_time();
    GError *local = NULL;
    if (!ppsim_exec_run(r.exec, replay_describe, &r, &local)) {
        if (deadlock_is_cycle && !ppsim_schedule_validate_acyclic(sched, r.idx, error))
            g_clear_error(&local);
        else
            g_propagate_error(error, local);
        replay_clear(&r);
        return NULL;
    }
    gint64 t3 = g_get_monotonic_time();
    g_autoptr(PpsimRunResult) res = ppsim_run_result_new();
    res->label = g_strdup(label);
    res->generator = g_strdup(generator);
    res->scenario = g_strdup(sc->name);
    ppsim_sim_collect(&r, res, flags);
    replay_clear(&r);
    res->schedule = g_steal_pointer(&sched);
    res->time_validate_us = t1 - t0;
    res->time_build_us = t2 - t1;
    res->time_replay_us = t3 - t2;
    res->time_metrics_us = g_get_monotonic_time() - t3;
    return g_steal_pointer(&res);
}

PpsimRunResult *
ppsim_sim_run_spec(const PpsimScenario *sc, const PpsimScheduleSpec *spec, PpsimSimFlags flags,
                   GError **error)
{
    PpsimCosts *costs_raw = NULL;
    GError *local = NULL;
    GArray *choices = ppsim_choices_new();
    PpsimSchedule *sched = sim_build(sc, spec, &costs_raw, choices, &local);
    g_autoptr(PpsimCosts) costs = costs_raw;
    PpsimRunResult *res = NULL;
    if (sched != NULL)
        res = ppsim_sim_replay(sc, costs, sched, spec->label ? spec->label : spec->name, spec->name,
                               flags, &local);
    if (res != NULL)
        res->choices = g_steal_pointer(&choices);
    if (choices != NULL)
        g_array_unref(choices);
    if (res == NULL)
        g_propagate_prefixed_error(error, local,
                                   "schedule '%s': ", spec->label ? spec->label : spec->name);
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
