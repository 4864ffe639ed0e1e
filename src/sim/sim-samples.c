/* sim-samples.c: Monte-Carlo replays of one static schedule under the scenario's
 * `variability:` (scenarios/README.md "Variability"; sim.h ppsim_sim_sample).
 *
 * The schedule is compiled once into its wait graph in topological order: every op waits for
 * the previous op of its stream (its list, as the one-pass replay of sim-fast.c reads it)
 * and for its inputs, each input arriving a fixed latency after its producer ends. A sample
 * is then one pass over that order per data-parallel replica, O(ops + dependencies), with
 * each op's duration multiplied by an independent lognormal factor of mean 1 (util/prng.h),
 * the persistent device and link slowdowns folded into the compiled durations and
 * latencies, and a device's transient windows integrated over the op's run. With every cv 0
 * and no slowdown a pass reproduces the deterministic replay's timings exactly (the same
 * recurrence as sim-fast.c); the tests check it.
 *
 * Hardware mode keeps each transfer at the latency it had in the deterministic replay
 * (arrival - send) and each copy op at its deterministic duration, both scaled by their
 * noise: the link sharing that would shift them under noise is not replayed ("frozen
 * transfers"). Optimizer steps on CPU workers wait for their inputs only.
 *
 * Data parallelism: replicas run the same schedule with their own noise, and the
 * slowdowns (devices, links, windows) hit replica 0 only, one physical GPU or link; each stage's
 * gradient reduction starts when the last of the replicas has finished that stage's last
 * backward, one stage after the other on the device (as sim-parallel.c), and the sample's
 * makespan is the latest of every replica's ops and every reduction. Up to
 * variability.dp_exact replicas are sampled one by one; beyond, a sample is a block of
 * dp_exact replicas, carried to dp replicas by the order statistics of the normal law
 * (extrapolate_dp): a replica's makespan, a longest path of many noisy ops, is read as
 * normal, and the block's mean and spread give the parent's.
 */
#include "sim.h"
#include "sim-internal.h"
#include "cost/cost-model.h"
#include "schedule/schedule-index.h"
#include "util/ppsim-error.h"
#include "util/prng.h"

#include <math.h>
#include <string.h>

typedef struct {
    gint32 lane_prev;   /* op id of the previous op of its stream, -1 */
    guint32 pred_first; /* its inputs: edges[pred_first, + pred_n) */
    guint32 pred_n;
    gint32 device;
    PpsimTime base_ps; /* deterministic duration */
    PpsimTime slow_ps; /* x the persistent device factor (replica 0) */
    guint8 noise;      /* PpsimNoiseKind */
    guint8 gpu;        /* runs on the device's GPU: device windows apply */
    guint8 windows;    /* gpu, and the device has slowdown windows */
} SampOp;

typedef struct {
    guint32 from;
    PpsimTime lat_ps;  /* the deterministic latency */
    PpsimTime slow_ps; /* x the persistent link factor (replica 0) */
} SampEdge;

typedef struct {
    PpsimTime from_ps, to_ps;
    double factor;
} Segment;

typedef struct {
    int p, n_ops, dp, dp_exact;
    gboolean slowed; /* slowdowns (devices, links, events): replica 0 only takes them */
    SampOp *op;
    SampEdge *edge;
    guint32 *order; /* op ids (the schedule index's) in topological order = new numbering */
    gboolean noisy[PPSIM_NOISE_N_KINDS];
    double mu[PPSIM_NOISE_N_KINDS], sigma[PPSIM_NOISE_N_KINDS];
    Segment *seg; /* per device, sorted, disjoint: [seg_first[d], seg_first[d + 1]) */
    int *seg_first;
    /* gradient reductions, device by device in list order: reduction j follows op
     * red_op[j] (its stage's last W/BW, else B) and lasts red_ps[j]; device d's are
     * [red_first[d], red_first[d + 1]) */
    int n_red;
    guint32 *red_op;
    PpsimTime *red_ps;
    int *red_first;
    /* the noisy durations and latencies, drawn in this order before each pass (the pass
     * then reads plain arrays): target >= 0 is op target's duration, else edge -1 - target's
     * latency */
    int n_slots;
    gint32 *slot_target;
    guint8 *slot_kind;
    guint32 n_edges;
} Model;

static void
model_free(Model *m)
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
    Model *m;
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
    Model *m = c->m;
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
compile_order(Model *m)
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
compile_windows(Model *m, const PpsimVariability *v)
{
    m->seg_first = g_new0(int, m->p + 1);
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(Segment));
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
            Segment s = {t[i], t[i + 1], 1.0};
            for (guint k = 0; k < v->events->len; k++) {
                const PpsimSlowEvent *e = &g_array_index(v->events, PpsimSlowEvent, k);
                if (e->device == d && e->from_ps <= s.from_ps && s.from_ps < e->to_ps)
                    s.factor *= e->factor;
            }
            g_array_append_val(segs, s);
        }
    }
    m->seg_first[m->p] = (int)segs->len;
    m->seg = (Segment *)(gpointer)g_array_free(segs, FALSE);
}

/* The gradient reductions, as sim-parallel.c adds them: after each stage's last W/BW (else
 * its last B), in the device's list order, lasting the stage's dp_comm. */
static void
compile_reductions(Model *m, const PpsimRunResult *res, const PpsimScheduleIndex *idx,
                   const PpsimCosts *costs)
{
    const PpsimSchedule *sched = res->schedule;
    int S = sched->n_stages;
    m->red_first = g_new0(int, m->p + 1);
    GArray *ops_out = g_array_new(FALSE, FALSE, sizeof(guint32));
    GArray *ps_out = g_array_new(FALSE, FALSE, sizeof(PpsimTime));
    g_autofree gint64 *last = g_new(gint64, MAX(S, 1));
    for (int d = 0; d < m->p; d++) {
        m->red_first[d] = (int)ops_out->len;
        if (m->dp <= 1)
            continue;
        const GArray *ops = sched->compute[d];
        ppsim_sim_last_grad_ops(ops, S, last);
        guint32 base = ppsim_schedule_index_base(idx, d, 0);
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (last[op->stage] != (gint64)i)
                continue;
            guint32 id = base + i;
            g_array_append_val(ops_out, id);
            g_array_append_val(ps_out, costs->stage[op->stage].dp_comm_ps);
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
compile_relabel(Model *m)
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
compile_slots(Model *m)
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

static gboolean
model_compile(Model *m, const PpsimScenario *sc, const PpsimRunResult *res, GError **error)
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
    compile_reductions(m, res, idx, costs);
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

/* ---- one sample ------------------------------------------------------------------------- */

/* @t > 0 times a lognormal factor, rounded half up (ppsim_round_clamped's result for
 * positive values, inline: this runs once per op and sample). */
static inline PpsimTime
noisy(const Model *m, PpsimPrng *g, int kind, PpsimTime t)
{
    if (!m->noisy[kind] || t == 0)
        return t;
    double x = (double)t * exp(m->mu[kind] + m->sigma[kind] * ppsim_prng_normal_zig(g));
    return x < (double)PPSIM_COST_MAX ? (PpsimTime)(x + 0.5) : PPSIM_COST_MAX;
}

/* The end of @work picoseconds of GPU time started at @t on device @d, through its windows
 * (a window of factor k runs k times slower). */
static PpsimTime
advance(const Model *m, int d, PpsimTime t, PpsimTime work)
{
    double left = (double)work;
    for (int k = m->seg_first[d]; k < m->seg_first[d + 1]; k++) {
        const Segment *s = &m->seg[k];
        if (s->to_ps <= t)
            continue;
        if (s->from_ps > t) {
            if (left <= (double)(s->from_ps - t))
                return t + ppsim_round_clamped(left);
            left -= (double)(s->from_ps - t);
            t = s->from_ps;
        }
        double room = (double)(s->to_ps - t) / s->factor;
        if (left <= room)
            return t + ppsim_round_clamped(left * s->factor);
        left -= room;
        t = s->to_ps;
    }
    return t + ppsim_round_clamped(left);
}

typedef struct {
    /* [2]: replica 0 (slowed), the others: */
    PpsimTime *dur[2]; /* [n_ops] this pass's durations (the compiled ones where not noisy) */
    PpsimTime *lat[2]; /* [n_edges] this pass's latencies, likewise */
    PpsimTime *end;    /* [n_ops] */
    const PpsimTime *lat_used; /* the last pass's lat */
    PpsimTime *last_grad;      /* [n_red] latest over the replicas so far */
    guint8 *path;              /* [p] on the critical path of the slowest replica */
} Work;

/* One replica: its noisy durations and latencies into w->dur and w->lat (a tight loop
 * of independent draws, which the processor overlaps), then every op's end into w->end;
 * returns the latest, its op in *@argmax. */
static PpsimTime
replica_pass(const Model *m, PpsimPrng *g, Work *w, gboolean slow, guint32 *argmax)
{
    PpsimTime *dur = w->dur[slow ? 0 : 1], *lat = w->lat[slow ? 0 : 1];
    for (int k = 0; k < m->n_slots; k++) {
        gint32 t = m->slot_target[k];
        int kind = m->slot_kind[k];
        double z = ppsim_prng_normal_zig(g);
        double f = exp(m->mu[kind] + m->sigma[kind] * z);
        PpsimTime base = t >= 0 ? (slow ? m->op[t].slow_ps : m->op[t].base_ps)
                                : (slow ? m->edge[-1 - t].slow_ps : m->edge[-1 - t].lat_ps);
        double x = (double)base * f; /* rounded half up, as ppsim_round_clamped for x > 0 */
        PpsimTime v = x < (double)PPSIM_COST_MAX ? (PpsimTime)(x + 0.5) : PPSIM_COST_MAX;
        if (t >= 0)
            dur[t] = v;
        else
            lat[-1 - t] = v;
    }
    w->lat_used = lat;
    PpsimTime latest = -1;
    const SampOp *o = m->op;
    PpsimTime *end = w->end;
    for (int k = 0; k < m->n_ops; k++, o++) {
        PpsimTime ready = o->lane_prev >= 0 ? end[o->lane_prev] : 0;
        for (guint32 e = o->pred_first; e < o->pred_first + o->pred_n; e++)
            ready = MAX(ready, end[m->edge[e].from] + lat[e]);
        end[k] = slow && o->windows ? advance(m, o->device, ready, dur[k]) : ready + dur[k];
        if (end[k] > latest) {
            latest = end[k];
            *argmax = (guint32)k;
        }
    }
    return latest;
}

/* The input that decided op @k's start in the pass just made (its stream predecessor, or
 * the first input arriving strictly later), -1 at time 0's. */
static gint32
decisive_input(const Model *m, const Work *w, guint32 k)
{
    const SampOp *o = &m->op[k];
    PpsimTime ready = o->lane_prev >= 0 ? w->end[o->lane_prev] : 0;
    gint32 via = o->lane_prev;
    for (guint32 e = o->pred_first; e < o->pred_first + o->pred_n; e++) {
        PpsimTime at = w->end[m->edge[e].from] + w->lat_used[e];
        if (at > ready) {
            ready = at;
            via = (gint32)m->edge[e].from;
        }
    }
    return via;
}

/* Sample @i: its makespan, and its critical devices into w->path; *@rest: the latest end of
 * the nominal replicas (1 and up) when replica 0 is slowed. */
static PpsimTime
sample_one(const Model *m, guint64 seed, int i, Work *w, PpsimTime *rest)
{
    PpsimTime best = -1;
    *rest = 0;
    for (int j = 0; j < m->n_red; j++)
        w->last_grad[j] = 0;
    for (int r = 0; r < m->dp_exact; r++) {
        PpsimPrng g;
        ppsim_prng_init(&g, seed, (guint64)i, (guint64)r);
        guint32 argmax = 0;
        gboolean slow = m->slowed && r == 0;
        PpsimTime t = m->n_ops > 0 ? replica_pass(m, &g, w, slow, &argmax) : 0;
        if (!slow)
            *rest = MAX(*rest, t);
        for (int j = 0; j < m->n_red; j++)
            w->last_grad[j] = MAX(w->last_grad[j], w->end[m->red_op[j]]);
        if (t > best) { /* the slowest replica so far: its critical path */
            best = t;
            memset(w->path, 0, (gsize)m->p);
            for (gint32 id = m->n_ops > 0 ? (gint32)argmax : -1; id >= 0;
                 id = decisive_input(m, w, (guint32)id))
                w->path[m->op[id].device] = 1;
        }
    }
    /* the reductions: one stream of its own per device; their noise has a stream of its own */
    PpsimPrng g;
    ppsim_prng_init(&g, seed, (guint64)i, G_MAXUINT64);
    for (int d = 0; d < m->p; d++) {
        PpsimTime t = 0;
        for (int j = m->red_first[d]; j < m->red_first[d + 1]; j++)
            t = MAX(t, w->last_grad[j]) + noisy(m, &g, PPSIM_NOISE_COMM, m->red_ps[j]);
        if (t > best) {
            best = t;
            w->path[d] = 1;
        }
    }
    return MAX(best, 0);
}

/* ---- threads and the summary -------------------------------------------------------------- */

typedef struct {
    const Model *m;
    guint64 seed;
    int first, last;
    PpsimTime *makespan; /* [n] */
    PpsimTime *rest;     /* [n] sample_one's *rest */
    guint8 *path;        /* [n x p] */
} Chunk;

/* Mean and standard deviation of the maximum of @n independent standard normals, by
 * integrating x n phi(x) Phi(x)^(n-1), the density of the maximum [DAV03] (step 1e-3 over [-9, 12]:
 * beyond n = 10^9 and below n = 1 the mass outside is negligible). */
static void
normal_max_moments(double n, double *mean, double *sd)
{
    double m1 = 0, m2 = 0, h = 1e-3;
    for (double x = -9; x <= 12; x += h) {
        double cdf = 0.5 * erfc(-x / G_SQRT2);
        if (cdf <= 0)
            continue;
        double pdf = exp(-0.5 * x * x) / sqrt(2 * G_PI);
        double w = n * pdf * exp((n - 1) * log(cdf)) * h;
        m1 += x * w;
        m2 += x * x * w;
    }
    *mean = m1;
    *sd = sqrt(MAX(m2 - m1 * m1, 0));
}

/* dp > dp_exact: each sample holds the makespan M of a block of E = dp_exact replicas.
 * Read as the maximum of E independent normal replica times (mean mu, spread sigma), M has
 * mean mu + sigma e(E) and spread sigma s(E) (normal_max_moments); so sigma = sd(M) / s(E),
 * and the maximum over dp replicas has mean mu + sigma e(dp) and spread sigma s(dp). Each
 * sample keeps its place in the block's distribution: M' = mean(M) + sigma (e(dp) - e(E)) +
 * (M - mean(M)) s(dp) / s(E). */
static void
extrapolate_dp(PpsimSampleSummary *s, PpsimTime *x, int dp, int block)
{
    int n = s->n;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += (double)x[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += ((double)x[i] - mean) * ((double)x[i] - mean);
    double sd = sqrt(sq / (n - 1)), e_block, s_block, e_dp, s_dp;
    normal_max_moments(block, &e_block, &s_block);
    normal_max_moments(dp, &e_dp, &s_dp);
    double sigma = sd / s_block;
    s->dp_shift_ps = ppsim_round_clamped(sigma * (e_dp - e_block));
    s->dp_scale = s_dp / s_block;
    for (int i = 0; i < n; i++)
        x[i] = ppsim_round_clamped(mean + (double)s->dp_shift_ps +
                                   ((double)x[i] - mean) * s->dp_scale);
}

static gpointer
chunk_run(gpointer data)
{
    Chunk *c = data;
    const Model *m = c->m;
    Work w = {.dur = {g_new(PpsimTime, MAX(m->n_ops, 1)), g_new(PpsimTime, MAX(m->n_ops, 1))},
              .lat = {g_new(PpsimTime, MAX(m->n_edges, 1)), g_new(PpsimTime, MAX(m->n_edges, 1))},
              .end = g_new(PpsimTime, MAX(m->n_ops, 1)),
              .last_grad = g_new(PpsimTime, MAX(m->n_red, 1)),
              .path = g_new0(guint8, MAX(m->p, 1))};
    for (int i = 0; i < m->n_ops; i++) {
        w.dur[0][i] = m->op[i].slow_ps;
        w.dur[1][i] = m->op[i].base_ps;
    }
    for (guint32 e = 0; e < m->n_edges; e++) {
        w.lat[0][e] = m->edge[e].slow_ps;
        w.lat[1][e] = m->edge[e].lat_ps;
    }
    for (int i = c->first; i < c->last; i++) {
        c->makespan[i] = sample_one(m, c->seed, i, &w, &c->rest[i]);
        memcpy(c->path + (gsize)i * m->p, w.path, (gsize)m->p);
    }
    for (int k = 0; k < 2; k++) {
        g_free(w.dur[k]);
        g_free(w.lat[k]);
    }
    g_free(w.end);
    g_free(w.last_grad);
    g_free(w.path);
    return NULL;
}

static int
cmp_time(gconstpointer a, gconstpointer b)
{
    PpsimTime x = *(const PpsimTime *)a, y = *(const PpsimTime *)b;
    return x < y ? -1 : x > y;
}

static PpsimTime
nearest_rank(const PpsimTime *sorted, int n, double q)
{
    int k = (int)ceil(q * n);
    return sorted[CLAMP(k, 1, n) - 1];
}

/* Mean, spread, percentiles and critical shares from the samples in @s. */
static void
summary_finish(PpsimSampleSummary *s, const guint8 *path)
{
    int n = s->n;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += (double)s->makespan_ps[i];
    s->mean_ps = sum / n;
    for (int i = 0; i < n; i++)
        sq += ((double)s->makespan_ps[i] - s->mean_ps) * ((double)s->makespan_ps[i] - s->mean_ps);
    s->stddev_ps = n > 1 ? sqrt(sq / (n - 1)) : 0;
    s->sorted_ps = g_memdup2(s->makespan_ps, sizeof(PpsimTime) * n);
    qsort(s->sorted_ps, n, sizeof(PpsimTime), cmp_time);
    s->p50_ps = nearest_rank(s->sorted_ps, n, 0.50);
    s->p90_ps = nearest_rank(s->sorted_ps, n, 0.90);
    s->p99_ps = nearest_rank(s->sorted_ps, n, 0.99);
    s->critical_share = g_new0(double, MAX(s->p, 1));
    for (int d = 0; d < s->p; d++) {
        int on = 0;
        for (int i = 0; i < n; i++)
            on += path[(gsize)i * s->p + d];
        s->critical_share[d] = (double)on / n;
    }
}

static PpsimTime *model_float(const Model *m, PpsimTime *makespan);

/* Per device, over its GPU ops: the mean float, and the share of ops with none (on a
 * critical path of the noiseless replay). */
static void
summary_slack(PpsimSampleSummary *s, const Model *m)
{
    PpsimTime makespan;
    g_autofree PpsimTime *fl = model_float(m, &makespan);
    s->slack_mean_ps = g_new0(double, MAX(s->p, 1));
    s->critical_ops = g_new0(double, MAX(s->p, 1));
    g_autofree int *count = g_new0(int, MAX(s->p, 1));
    for (int k = 0; k < m->n_ops; k++) {
        const SampOp *o = &m->op[k];
        if (!o->gpu)
            continue;
        count[o->device]++;
        s->slack_mean_ps[o->device] += (double)fl[k];
        s->critical_ops[o->device] += fl[k] == 0;
    }
    for (int d = 0; d < s->p; d++)
        if (count[d] > 0) {
            s->slack_mean_ps[d] /= count[d];
            s->critical_ops[d] /= count[d];
        }
}

gboolean
ppsim_sim_sample(const PpsimScenario *sc, PpsimRunResult *res, const PpsimSampleOptions *opt,
                 GError **error)
{
    g_return_val_if_fail(res->schedule != NULL && opt->samples > 0, FALSE);
    gint64 t0 = g_get_monotonic_time();
    if (!res->explicit_mode && sc->parallel.present && sc->parallel.dp > 1 &&
        sc->parallel.zero == 3) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "--samples: ZeRO-3's weight gathers are flows of their own, which the "
                    "sampled replay does not model (use parallel.zero <= 2 or explicit costs)");
        return FALSE;
    }
    if (!res->explicit_mode && res->transfers == NULL) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "--samples: the deterministic replay was not recorded");
        return FALSE;
    }
    Model m = {0};
    if (!model_compile(&m, sc, res, error)) {
        model_free(&m);
        return FALSE;
    }
    int n = opt->samples, threads = CLAMP(opt->threads, 1, MAX(n, 1));
    PpsimSampleSummary *s = g_new0(PpsimSampleSummary, 1);
    s->n = n;
    s->seed = opt->seed;
    s->dp = m.dp;
    s->dp_exact = m.dp_exact;
    s->p = m.p;
    s->frozen_transfers = !res->explicit_mode;
    s->dp_scale = 1;
    s->makespan_ps = g_new(PpsimTime, n);
    g_autofree guint8 *path = g_new0(guint8, (gsize)n * MAX(m.p, 1));
    g_autofree PpsimTime *rest = g_new0(PpsimTime, n);
    g_autofree Chunk *chunks = g_new(Chunk, threads);
    g_autofree GThread **thr = g_new0(GThread *, threads);
    for (int k = 0; k < threads; k++) {
        chunks[k] = (Chunk){&m,
                            opt->seed,
                            (int)((gint64)n * k / threads),
                            (int)((gint64)n * (k + 1) / threads),
                            s->makespan_ps,
                            rest,
                            path};
        if (k > 0)
            thr[k] = g_thread_new("ppsim-sample", chunk_run, &chunks[k]);
    }
    chunk_run(&chunks[0]);
    for (int k = 1; k < threads; k++)
        g_thread_join(thr[k]);
    if (m.dp > m.dp_exact && n > 1 && !m.slowed) {
        extrapolate_dp(s, s->makespan_ps, m.dp, m.dp_exact);
    } else if (m.dp > m.dp_exact && n > 1) {
        /* replica 0 (slowed) stays as sampled; the nominal block of dp_exact - 1 is carried
         * to dp - 1 replicas, and the step waits for whichever is later */
        extrapolate_dp(s, rest, m.dp - 1, m.dp_exact - 1);
        for (int i = 0; i < n; i++)
            s->makespan_ps[i] = MAX(s->makespan_ps[i], rest[i]);
    }
    /* The kernel model ends the iteration with the optimizer step after the last op and
     * reduction (sim-parallel.c): the longest step, added to every sample as it was to the
     * deterministic makespan (its noise is not sampled). */
    PpsimTime opt_tail = 0;
    for (int d = 0; res->has_compute_breakdown && d < res->p; d++)
        opt_tail = MAX(opt_tail, res->devices[d].compute_optimizer_ps);
    for (int i = 0; i < n; i++)
        s->makespan_ps[i] += opt_tail;
    summary_finish(s, path);
    summary_slack(s, &m);
    model_free(&m);
    ppsim_sample_summary_free(res->samples);
    res->samples = s;
    res->time_samples_us = g_get_monotonic_time() - t0;
    return TRUE;
}

/* ---- slack ------------------------------------------------------------------------------ */

/* Each op's total float in the compiled graph without noise or windows: how long its end
 * may slip before the makespan does (latest finish - earliest finish, the latest finishes
 * found by one backward pass from the makespan). Indexed by the new numbering. */
static PpsimTime *
model_float(const Model *m, PpsimTime *makespan)
{
    int n = m->n_ops;
    g_autofree PpsimTime *end = g_new(PpsimTime, MAX(n, 1));
    PpsimTime *late = g_new(PpsimTime, MAX(n, 1));
    PpsimTime last = 0;
    for (int k = 0; k < n; k++) {
        const SampOp *o = &m->op[k];
        PpsimTime ready = o->lane_prev >= 0 ? end[o->lane_prev] : 0;
        for (guint32 e = o->pred_first; e < o->pred_first + o->pred_n; e++)
            ready = MAX(ready, end[m->edge[e].from] + m->edge[e].slow_ps);
        end[k] = ready + o->slow_ps;
        last = MAX(last, end[k]);
    }
    for (int k = 0; k < n; k++)
        late[k] = last;
    for (int k = n - 1; k >= 0; k--) {
        const SampOp *o = &m->op[k];
        PpsimTime start = late[k] - o->slow_ps;
        if (o->lane_prev >= 0)
            late[o->lane_prev] = MIN(late[o->lane_prev], start);
        for (guint32 e = o->pred_first; e < o->pred_first + o->pred_n; e++)
            late[m->edge[e].from] = MIN(late[m->edge[e].from], start - m->edge[e].slow_ps);
    }
    for (int k = 0; k < n; k++)
        late[k] -= end[k];
    *makespan = last;
    return late;
}

PpsimTime *
ppsim_sim_slack(const PpsimScenario *sc, const PpsimRunResult *res, GError **error)
{
    Model m = {0};
    PpsimTime *out = NULL;
    if (model_compile(&m, sc, res, error)) {
        PpsimTime makespan;
        g_autofree PpsimTime *fl = model_float(&m, &makespan);
        out = g_new(PpsimTime, MAX(m.n_ops, 1));
        for (int k = 0; k < m.n_ops; k++)
            out[m.order[k]] = fl[k];
    }
    model_free(&m);
    return out;
}

PpsimTime
ppsim_sim_delayed_makespan(const PpsimScenario *sc, const PpsimRunResult *res, guint32 op,
                           PpsimTime delay_ps, GError **error)
{
    Model m = {0};
    PpsimTime makespan = -1;
    if (model_compile(&m, sc, res, error)) {
        for (int k = 0; k < m.n_ops; k++)
            if (m.order[k] == op)
                m.op[k].slow_ps += delay_ps;
        g_free(model_float(&m, &makespan));
    }
    model_free(&m);
    return makespan;
}
