/* sim-samples-summary.c: what the Monte-Carlo sampler (sim-samples.c) reports of its
 * samples: the carry from a block of dp_exact replicas to dp, the mean, spread and
 * percentiles of the makespan, each device's share of critical paths, and the slack (each
 * op's float in the noiseless compiled graph, sim.h ppsim_sim_slack). */
#include "sim-samples-internal.h"

#include <math.h>
#include <stdlib.h>

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
void
ppsim_sim_samples_extrapolate_dp(PpsimSampleSummary *s, PpsimTime *x, int dp, int block)
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

/* ---- percentiles and critical shares ----------------------------------------------------- */

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
void
ppsim_sim_samples_summary_finish(PpsimSampleSummary *s, const guint8 *path)
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

/* ---- slack ------------------------------------------------------------------------------ */

/* Each op's total float in the compiled graph without noise or windows: how long its end
 * may slip before the makespan does (latest finish - earliest finish, the latest finishes
 * found by one backward pass from the makespan). Indexed by the new numbering. */
static PpsimTime *
model_float(const SampModel *m, PpsimTime *makespan)
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

/* Per device, over its GPU ops: the mean float, and the share of ops with none (on a
 * critical path of the noiseless replay). */
void
ppsim_sim_samples_summary_slack(PpsimSampleSummary *s, const SampModel *m)
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

PpsimTime *
ppsim_sim_slack(const PpsimScenario *sc, const PpsimRunResult *res, GError **error)
{
    SampModel m = {0};
    PpsimTime *out = NULL;
    if (ppsim_sim_samples_compile(&m, sc, res, error)) {
        PpsimTime makespan;
        g_autofree PpsimTime *fl = model_float(&m, &makespan);
        out = g_new(PpsimTime, MAX(m.n_ops, 1));
        for (int k = 0; k < m.n_ops; k++)
            out[m.order[k]] = fl[k];
    }
    ppsim_sim_samples_model_free(&m);
    return out;
}

PpsimTime
ppsim_sim_delayed_makespan(const PpsimScenario *sc, const PpsimRunResult *res, guint32 op,
                           PpsimTime delay_ps, GError **error)
{
    SampModel m = {0};
    PpsimTime makespan = -1;
    if (ppsim_sim_samples_compile(&m, sc, res, error)) {
        for (int k = 0; k < m.n_ops; k++)
            if (m.order[k] == op)
                m.op[k].slow_ps += delay_ps;
        g_free(model_float(&m, &makespan));
    }
    ppsim_sim_samples_model_free(&m);
    return makespan;
}
