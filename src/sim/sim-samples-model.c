/* sim-samples-model.c: the Monte-Carlo sampler's model (sim-samples-internal.h): the
 * schedule's wait graph compiled once, from a deterministic replay, into ops in topological
 * order with their inputs, persistent slowdowns, slowdown windows, gradient reductions and
 * the noisy draws of a pass. The sampler's design: sim-samples.c. */
#include "sim-samples-internal.h"
#include "sim-internal.h"
#include "cost/cost-model.h"
#include "schedule/schedule-index.h"
#include "util/ppsim-error.h"
#include "util/prng.h"

void
ppsim_sim_samples_model_free(SampModel *m)
{
    g_free(m->op);
    g_free(m->edge);
    g_free(m->order);
    g_free(m->seg);
    g_free(m->seg_first);
    g_free(m->red_op);
    g_free(m->red_ps);
    g_free(m->red_first);
    g_free(m->slot_target);
    g_free(m->slot_kind);
}

static PpsimNoiseKind
noise_of(const PpsimOp *op)
{
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        return PPSIM_NOISE_FORWARD;
    case PPSIM_OP_W:
        return PPSIM_NOISE_WEIGHT;
    case PPSIM_OP_R:
        return PPSIM_NOISE_RECOMPUTE;
    case PPSIM_OP_OPT:
        return PPSIM_NOISE_OPTIMIZER;
    case PPSIM_OP_OFF:
    case PPSIM_OP_RL:
    case PPSIM_OP_GOFF:
    case PPSIM_OP_WRL:
        return PPSIM_NOISE_OFFLOAD;
    default: /* B, BW, and compute kinds added later (an overlapped F&B): cv_backward */
        return PPSIM_NOISE_BACKWARD;
    }
}

static PpsimTime
scaled(PpsimTime t, double factor)
{
    return factor == 1.0 ? t : ppsim_round_clamped((double)t * factor);
}

/* ---- compiling the wait graph --------------------------------------------------------- */

typedef struct {
    SampModel *m;
    const PpsimScheduleIndex *idx;
    const PpsimCosts *costs;
    const PpsimScenario *sc;
    GHashTable *transfer_lat; /* hardware mode: (from << 32 | to) -> latency + 1 */
    guint32 *count;           /* pass 1: inputs per op; pass 2: next free slot */
    gboolean fill;
} Compile;

static double
link_factor(const PpsimScenario *sc, int a, int b)
{
    const GArray *links = sc->variability.links;
    for (guint i = 0; links != NULL && i < links->len; i++) {
        const PpsimSlowdown *s = &g_array_index(links, PpsimSlowdown, i);
        if ((s->a == a && s->b == b) || (s->a == b && s->b == a))
            return s->factor;
    }
    return 1.0;
}

static void
compile_dep(guint32 from, guint32 to, PpsimDepKind kind, int boundary, gpointer data)
{
    (void)boundary;
    Compile *c = data;
    if (!c->fill) {
        c->count[to]++;
        return;
    }
    int a = ppsim_schedule_index_device(c->idx, from), b = ppsim_schedule_index_device(c->idx, to);
    PpsimTime lat = 0, slow = 0;
    if (kind != PPSIM_DEP_LOCAL && kind != PPSIM_DEP_SYNC && a != b) {
        if (c->transfer_lat != NULL) {
            gpointer v =
                g_hash_table_lookup(c->transfer_lat, GSIZE_TO_POINTER(((guint64)from << 32) | to));
            lat = v != NULL ? (PpsimTime)GPOINTER_TO_SIZE(v) - 1 : 0;
        } else {
            lat = c->costs->p2p_latency_ps;
        }
        slow = scaled(lat, link_factor(c->sc, a, b));
    }
    c->m->edge[c->count[to]++] = (SampEdge){from, lat, slow};
}

/* The ops, their streams and inputs. */
static void
compile_ops(Compile *c, const PpsimRunResult *res)
{
    SampModel *m = c->m;
    const PpsimSchedule *sched = res->schedule;
    const PpsimVariability *v = &c->sc->variability;
    gboolean two = c->sc->has_hardware && c->sc->hardware.copy_streams == 2;
    double *dev_factor = g_new(double, m->p);
    for (int d = 0; d < m->p; d++)
        dev_factor[d] = 1.0;
    for (guint i = 0; v->devices != NULL && i < v->devices->len; i++) {
        const PpsimSlowdown *s = &g_array_index(v->devices, PpsimSlowdown, i);
        dev_factor[s->a] = s->factor;
    }
    for (int d = 0; d < m->p; d++)
        for (int list = 0; list < 2; list++) {
            const GArray *ops = list == 0 ? sched->compute[d] : sched->copy[d];
            const GArray *t = list == 0 ? res->compute_timing[d] : res->copy_timing[d];
            guint32 base = ppsim_schedule_index_base(c->idx, d, list);
            gint32 prev[2] = {-1, -1}; /* the stream's last op (two: d2h and h2d) */
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                const PpsimOpTiming *ti = &g_array_index(t, PpsimOpTiming, i);
                SampOp *o = &m->op[base + i];
                gboolean cpu = op->kind == PPSIM_OP_OPT && (op->flags & PPSIM_OP_FLAG_CPU);
                int stream = list == 1 && two && op->kind != PPSIM_OP_OFF ? 1 : 0;
                o->device = d;
                o->noise = (guint8)noise_of(op);
                o->gpu = list == 0 && !cpu;
                o->lane_prev = cpu ? -1 : prev[stream];
                o->base_ps = ti->end_ps - ti->start_ps;
                o->slow_ps = scaled(o->base_ps, o->gpu ? dev_factor[d] : 1.0);
                if (!cpu)
                    prev[stream] = (gint32)(base + i);
            }
        }
    g_free(dev_factor);
}

/* Kahn's algorithm over stream order and inputs, first-in first-out from the ops in id
 * order: FALSE on a cycle (a schedule the replay already refused). */
static gboolean
compile_order(SampModel *m)
{
    guint32 n = (guint32)m->n_ops;
    g_autofree guint32 *indeg = g_new0(guint32, n);
    g_autofree guint32 *succ_n = g_new0(guint32, n + 1);
    for (guint32 i = 0; i < n; i++) {
        const SampOp *o = &m->op[i];
        indeg[i] = o->pred_n + (o->lane_prev >= 0);
        if (o->lane_prev >= 0)
            succ_n[o->lane_prev + 1]++;
        for (guint32 e = 0; e < o->pred_n; e++)
            succ_n[m->edge[o->pred_first + e].from + 1]++;
    }
    for (guint32 i = 0; i < n; i++)
        succ_n[i + 1] += succ_n[i];
    g_autofree guint32 *succ = g_new(guint32, MAX(succ_n[n], 1));
    g_autofree guint32 *fill = g_memdup2(succ_n, sizeof(guint32) * n);
    for (guint32 i = 0; i < n; i++) {
        const SampOp *o = &m->op[i];
        if (o->lane_prev >= 0)
            succ[fill[o->lane_prev]++] = i;
        for (guint32 e = 0; e < o->pred_n; e++)
            succ[fill[m->edge[o->pred_first + e].from]++] = i;
    }
    guint32 head = 0, tail = 0;
    for (guint32 i = 0; i < n; i++)
        if (indeg[i] == 0)
            m->order[tail++] = i;
    while (head < tail) {
        guint32 i = m->order[head++];
        for (guint32 k = succ_n[i]; k < succ_n[i + 1]; k++)
            if (--indeg[succ[k]] == 0)
                m->order[tail++] = succ[k];
    }
    return tail == n;
}

/* The device windows as disjoint segments, each with the product of the factors of the
 * windows over it. */
static void
compile_windows(SampModel *m, const PpsimVariability *v)
{
    m->seg_first = g_new0(int, m->p + 1);
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(SampSegment));
    for (int d = 0; d < m->p; d++) {
        m->seg_first[d] = (int)segs->len;
        g_autoptr(GArray) cuts = g_array_new(FALSE, FALSE, sizeof(PpsimTime));
        for (guint i = 0; v->events != NULL && i < v->events->len; i++) {
            const PpsimSlowEvent *e = &g_array_index(v->events, PpsimSlowEvent, i);
            if (e->device == d && e->to_ps > e->from_ps) {
                g_array_append_val(cuts, e->from_ps);
                g_array_append_val(cuts, e->to_ps);
            }
        }
        PpsimTime *t = (PpsimTime *)(gpointer)cuts->data;
        for (guint i = 1; i < cuts->len; i++) /* insertion sort: a few windows */
            for (guint k = i; k > 0 && t[k - 1] > t[k]; k--) {
                PpsimTime x = t[k];
                t[k] = t[k - 1];
                t[k - 1] = x;
            }
        for (guint i = 0; i + 1 < cuts->len; i++) {
            if (t[i] == t[i + 1])
                continue;
            SampSegment s = {t[i], t[i + 1], 1.0};
            for (guint k = 0; k < v->events->len; k++) {
                const PpsimSlowEvent *e = &g_array_index(v->events, PpsimSlowEvent, k);
                if (e->device == d && e->from_ps <= s.from_ps && s.from_ps < e->to_ps)
                    s.factor *= e->factor;
            }
            g_array_append_val(segs, s);
        }
    }
    m->seg_first[m->p] = (int)segs->len;
    m->seg = (SampSegment *)(gpointer)g_array_free(segs, FALSE);
}

/* The gradient reductions, as sim-parallel.c adds them: after each stage's last W/BW (else
 * its last B), in the device's list order, lasting the stage's dp_comm; then on the devices
 * of the first and the last stage the tied embedding's all-reduce, with the length it had in
 * the deterministic replay (each device waits for its own side only). */
static void
compile_reductions(SampModel *m, const PpsimScenario *sc, const PpsimRunResult *res,
                   const PpsimScheduleIndex *idx, const PpsimCosts *costs)
{
    const PpsimSchedule *sched = res->schedule;
    int S = sched->n_stages;
    m->red_first = g_new0(int, m->p + 1);
    GArray *ops_out = g_array_new(FALSE, FALSE, sizeof(guint32));
    GArray *ps_out = g_array_new(FALSE, FALSE, sizeof(PpsimTime));
    g_autofree gint64 *last = g_new(gint64, MAX(S, 1));
    gboolean overlap = sc->parallel.overlap_grad_reduce;
    int tail = (sched->pipe_stages > 0 ? sched->pipe_stages : S) - 1;
    for (int d = 0; d < m->p; d++) {
        m->red_first[d] = (int)ops_out->len;
        gboolean tied = res->tied_grad_ps > 0 &&
                        (sched->stage_device[0] == d || sched->stage_device[tail] == d);
        if (m->dp <= 1 && !tied)
            continue;
        const GArray *ops = sched->compute[d];
        ppsim_sim_last_grad_ops(ops, S, last);
        guint32 base = ppsim_schedule_index_base(idx, d, 0);
        for (guint i = 0; i < ops->len && m->dp > 1; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (last[op->stage] != (gint64)i)
                continue;
            guint32 id = base + (guint32)ppsim_sim_grad_ready_op(last, S, op->stage, overlap);
            g_array_append_val(ops_out, id);
            g_array_append_val(ps_out, costs->stage[op->stage].dp_comm_ps);
        }
        if (tied) {
            guint32 id = base + (guint32)ppsim_sim_grad_ready_op(last, S, 0, FALSE);
            g_array_append_val(ops_out, id);
            g_array_append_val(ps_out, res->tied_grad_ps);
        }
    }
    m->red_first[m->p] = (int)ops_out->len;
    m->n_red = (int)ops_out->len;
    m->red_op = (guint32 *)(gpointer)g_array_free(ops_out, FALSE);
    m->red_ps = (PpsimTime *)(gpointer)g_array_free(ps_out, FALSE);
}

/* Renumbers ops by their topological position (and their inputs in that order), so that a
 * pass reads and writes its arrays front to back; op k is then op m->order[k] of the
 * schedule index. */
static void
compile_relabel(SampModel *m)
{
    int n = m->n_ops;
    g_autofree guint32 *pos = g_new(guint32, MAX(n, 1));
    for (int k = 0; k < n; k++)
        pos[m->order[k]] = (guint32)k;
    SampOp *op = g_new(SampOp, MAX(n, 1));
    SampEdge *edge = g_new(SampEdge, MAX(m->n_edges, 1));
    guint32 e_out = 0;
    for (int k = 0; k < n; k++) {
        const SampOp *o = &m->op[m->order[k]];
        op[k] = *o;
        op[k].lane_prev = o->lane_prev >= 0 ? (gint32)pos[o->lane_prev] : -1;
        op[k].pred_first = e_out;
        for (guint32 e = o->pred_first; e < o->pred_first + o->pred_n; e++)
            edge[e_out++] = (SampEdge){pos[m->edge[e].from], m->edge[e].lat_ps, m->edge[e].slow_ps};
    }
    for (int j = 0; j < m->n_red; j++)
        m->red_op[j] = pos[m->red_op[j]];
    g_free(m->op);
    g_free(m->edge);
    m->op = op;
    m->edge = edge;
}

/* The draws of a pass, in topological order: each op's noisy input latencies, then its
 * noisy duration (zero times stay zero). */
static void
compile_slots(SampModel *m)
{
    GArray *target = g_array_new(FALSE, FALSE, sizeof(gint32));
    GArray *kind = g_array_new(FALSE, FALSE, sizeof(guint8));
    guint8 comm = PPSIM_NOISE_COMM;
    for (int k = 0; k < m->n_ops; k++) {
        guint32 id = m->order[k];
        const SampOp *o = &m->op[id];
        for (guint32 e = o->pred_first; m->noisy[comm] && e < o->pred_first + o->pred_n; e++)
            if (m->edge[e].lat_ps > 0) {
                gint32 t = -1 - (gint32)e;
                g_array_append_val(target, t);
                g_array_append_val(kind, comm);
            }
        if (m->noisy[o->noise] && o->base_ps > 0) {
            gint32 t = (gint32)id;
            g_array_append_val(target, t);
            g_array_append_val(kind, o->noise);
        }
    }
    m->n_slots = (int)target->len;
    m->slot_target = (gint32 *)(gpointer)g_array_free(target, FALSE);
    m->slot_kind = (guint8 *)(gpointer)g_array_free(kind, FALSE);
}

gboolean
ppsim_sim_samples_compile(SampModel *m, const PpsimScenario *sc, const PpsimRunResult *res,
                          GError **error)
{
    const PpsimSchedule *sched = res->schedule;
    g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(sched, error);
    if (idx == NULL)
        return FALSE;
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, sched->n_stages, error);
    if (costs == NULL)
        return FALSE;
    m->p = sched->n_devices;
    m->n_ops = (int)ppsim_schedule_n_ops(sched);
    m->dp = MAX(sc->parallel.dp, 1);
    const PpsimVariability *var = &sc->variability;
    m->slowed = (var->devices != NULL && var->devices->len > 0) ||
                (var->links != NULL && var->links->len > 0) ||
                (var->events != NULL && var->events->len > 0);
    /* with slowdowns, replica 0 and at least one nominal replica */
    m->dp_exact = MIN(m->dp, MAX(var->dp_exact, m->slowed ? 2 : 1));
    m->op = g_new0(SampOp, MAX(m->n_ops, 1));
    m->order = g_new(guint32, MAX(m->n_ops, 1));
    Compile c = {.m = m, .idx = idx, .costs = costs, .sc = sc};
    c.count = g_new0(guint32, m->n_ops + 1);
    ppsim_schedule_foreach_dep(idx, compile_dep, &c);
    guint32 total = 0;
    for (int i = 0; i < m->n_ops; i++) {
        m->op[i].pred_first = total;
        m->op[i].pred_n = c.count[i];
        total += c.count[i];
        c.count[i] = m->op[i].pred_first;
    }
    m->edge = g_new(SampEdge, MAX(total, 1));
    if (!costs->explicit_mode) {
        c.transfer_lat = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint i = 0; res->transfers != NULL && i < res->transfers->len; i++) {
            const PpsimTransfer *t = &g_array_index(res->transfers, PpsimTransfer, i);
            guint64 from = ppsim_schedule_index_base(idx, t->from_device, t->from_list) +
                           (guint32)t->from_index;
            guint64 to =
                ppsim_schedule_index_base(idx, t->to_device, t->to_list) + (guint32)t->to_index;
            g_hash_table_insert(c.transfer_lat, GSIZE_TO_POINTER((from << 32) | to),
                                GSIZE_TO_POINTER((gsize)(t->arrive_ps - t->send_ps + 1)));
        }
    }
    c.fill = TRUE;
    ppsim_schedule_foreach_dep(idx, compile_dep, &c);
    if (c.transfer_lat != NULL)
        g_hash_table_unref(c.transfer_lat);
    g_free(c.count);
    compile_ops(&c, res);
    compile_windows(m, &sc->variability);
    for (int i = 0; i < m->n_ops; i++)
        m->op[i].windows =
            m->op[i].gpu && m->seg_first[m->op[i].device] < m->seg_first[m->op[i].device + 1];
    compile_reductions(m, sc, res, idx, costs);
    for (int k = 0; k < PPSIM_NOISE_N_KINDS; k++) {
        double cv = ppsim_variability_cv(&sc->variability, (PpsimNoiseKind)k);
        m->noisy[k] = cv > 0;
        ppsim_lognormal_params(cv, &m->mu[k], &m->sigma[k]);
    }
    m->n_edges = total;
    if (!compile_order(m)) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_DEADLOCK,
                    "the schedule's wait graph has a cycle");
        return FALSE;
    }
    compile_relabel(m);
    compile_slots(m);
    return TRUE;
}
