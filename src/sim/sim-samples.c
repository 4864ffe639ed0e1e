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
 * (ppsim_sim_samples_extrapolate_dp): a replica's makespan, a longest path of many noisy
 * ops, is read as normal, and the block's mean and spread give the parent's.
 *
 * Files: sim-samples-model.c compiles the wait graph (sim-samples-internal.h), this file
 * draws the samples on threads, sim-samples-summary.c sums them up (percentiles, critical
 * shares, the dp carry) and computes the slack.
 */
#include "sim-samples-internal.h"
#include "util/ppsim-error.h"
#include "util/prng.h"

#include <math.h>
#include <string.h>

/* ---- one sample ------------------------------------------------------------------------- */

/* @t > 0 times a lognormal factor, rounded half up (ppsim_round_clamped's result for
 * positive values, inline: this runs once per op and sample). */
static inline PpsimTime
noisy(const SampModel *m, PpsimPrng *g, int kind, PpsimTime t)
{
    if (!m->noisy[kind] || t == 0)
        return t;
    double x = (double)t * exp(m->mu[kind] + m->sigma[kind] * ppsim_prng_normal_zig(g));
    return x < (double)PPSIM_COST_MAX ? (PpsimTime)(x + 0.5) : PPSIM_COST_MAX;
}

/* The end of @work picoseconds of GPU time started at @t on device @d, through its windows
 * (a window of factor k runs k times slower). */
static PpsimTime
advance(const SampModel *m, int d, PpsimTime t, PpsimTime work)
{
    double left = (double)work;
    for (int k = m->seg_first[d]; k < m->seg_first[d + 1]; k++) {
        const SampSegment *s = &m->seg[k];
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
replica_pass(const SampModel *m, PpsimPrng *g, Work *w, gboolean slow, guint32 *argmax)
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
decisive_input(const SampModel *m, const Work *w, guint32 k)
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
sample_one(const SampModel *m, guint64 seed, int i, Work *w, PpsimTime *rest)
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

/* ---- threads ---------------------------------------------------------------------------- */

typedef struct {
    const SampModel *m;
    guint64 seed;
    int first, last;
    PpsimTime *makespan; /* [n] */
    PpsimTime *rest;     /* [n] sample_one's *rest */
    guint8 *path;        /* [n x p] */
} Chunk;

static gpointer
chunk_run(gpointer data)
{
    Chunk *c = data;
    const SampModel *m = c->m;
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
    if (!res->explicit_mode && ppsim_scenario_overlaps_param_gather(sc) &&
        sc->parallel.dp * sc->parallel.cp > 1) {
        const char *fw = ppsim_framework_that_set(sc, "parallel.overlap_param_gather");
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "--samples: 'parallel.overlap_param_gather'%s%s%s makes the weights' "
                    "all-gathers flows of their own, which the sampled replay does not model "
                    "(set it to false, or use explicit costs)",
                    fw ? " (set by framework: " : "", fw ? fw : "", fw ? ")" : "");
        return FALSE;
    }
    if (sc->parallel.p2p != PPSIM_P2P_ASYNC) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "--samples: 'parallel.p2p: %s' is not modelled by the sampled replay "
                    "(its waits are not in the compiled wait graph; use parallel.p2p: async)",
                    ppsim_p2p_name(sc->parallel.p2p));
        return FALSE;
    }
    if (!res->explicit_mode && res->transfers == NULL) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "--samples: the deterministic replay was not recorded");
        return FALSE;
    }
    SampModel m = {0};
    if (!ppsim_sim_samples_compile(&m, sc, res, error)) {
        ppsim_sim_samples_model_free(&m);
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
        ppsim_sim_samples_extrapolate_dp(s, s->makespan_ps, m.dp, m.dp_exact);
    } else if (m.dp > m.dp_exact && n > 1) {
        /* replica 0 (slowed) stays as sampled; the nominal block of dp_exact - 1 is carried
         * to dp - 1 replicas, and the step waits for whichever is later */
        ppsim_sim_samples_extrapolate_dp(s, rest, m.dp - 1, m.dp_exact - 1);
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
    ppsim_sim_samples_summary_finish(s, path);
    ppsim_sim_samples_summary_slack(s, &m);
    ppsim_sim_samples_model_free(&m);
    ppsim_sample_summary_free(res->samples);
    res->samples = s;
    res->time_samples_us = g_get_monotonic_time() - t0;
    return TRUE;
}
