/* check-samples.c: `ppsim run --samples` (src/sim/sim-samples.c, scenarios/README.md
 * "Variability"): the generator against its published definitions, the lognormal's mean and cv, cv
 * 0 = the deterministic replay (explicit and hardware mode, every kind of schedule), a slow device
 * = that device's stage costs scaled, a slow link = a longer p2p, a slowdown window against a
 * hand-computed timeline, the sample mean and spread of a one-device pipeline against their
 * closed forms within CLT tolerances, determinism for any thread count, and data
 * parallelism: more replicas cost more, and the Gumbel shift beyond dp_exact tracks the
 * exact sampling. */
#include "ppsim-test.h"
#include "sweep/sweep.h"
#include "util/fmt.h"
#include "util/prng.h"

#include <glib/gstdio.h>
#include <sys/wait.h>

#include <math.h>
#include <string.h>

#define MS PPSIM_PS_PER_MS

static PpsimScenario *
parse(const char *yaml, const char *const *sets)
{
    g_autoptr(GError) error = NULL;
    PpsimScenario *sc = ppsim_scenario_parse(yaml, strlen(yaml), "test.yaml", ".", sets, &error);
    ppsim_assert_no_error(error);
    return sc;
}

/* Every schedule of @sc, replayed and then sampled @n times with @seed on @threads. */
static GPtrArray *
sample_all(const PpsimScenario *sc, int n, guint64 seed, int threads)
{
    g_autoptr(GError) error = NULL;
    PpsimSimFlags flags = sc->costs.present ? 0 : PPSIM_SIM_RECORD;
    GPtrArray *results = ppsim_sim_run_all(sc, flags, &error);
    ppsim_assert_no_error(error);
    PpsimSampleOptions opt = {.samples = n, .seed = seed, .threads = threads};
    for (guint i = 0; i < results->len; i++) {
        ck_assert(ppsim_sim_sample(sc, g_ptr_array_index(results, i), &opt, &error));
        ppsim_assert_no_error(error);
    }
    return results;
}

static const PpsimRunResult *
nth(const GPtrArray *results, guint i)
{
    return g_ptr_array_index(results, i);
}

/* splitmix64 from state 0 [SPLITMIX]: its first outputs, as published with the reference
 * code; xoshiro256** from state {1, 2, 3, 4}: rotl(2 * 5, 7) * 9 = 11520, then s[1] = 0. */
START_TEST(test_prng_reference)
{
    guint64 st = 0;
    ck_assert_uint_eq(ppsim_splitmix64(&st), G_GUINT64_CONSTANT(0xE220A8397B1DCDAF));
    ck_assert_uint_eq(ppsim_splitmix64(&st), G_GUINT64_CONSTANT(0x6E789E6AA1B965F4));
    ck_assert_uint_eq(ppsim_splitmix64(&st), G_GUINT64_CONSTANT(0x06C45D188009454F));
    PpsimPrng g = {.s = {1, 2, 3, 4}};
    ck_assert_uint_eq(ppsim_prng_next(&g), 11520);
    ck_assert_uint_eq(ppsim_prng_next(&g), 0);
    /* streams of different (a, b) differ */
    PpsimPrng x, y;
    ppsim_prng_init(&x, 1, 0, 0);
    ppsim_prng_init(&y, 1, 0, 1);
    ck_assert_uint_ne(ppsim_prng_next(&x), ppsim_prng_next(&y));
}
END_TEST

/* exp(mu + sigma Z) with mu, sigma from cv: mean 1 and coefficient of variation cv, within
 * 5 standard errors (the SE of the variance from the sample's fourth moment). */
START_TEST(test_lognormal_moments)
{
    double cvs[] = {0.02, 0.1, 0.3};
    for (guint c = 0; c < G_N_ELEMENTS(cvs); c++) {
        double mu, sigma;
        ppsim_lognormal_params(cvs[c], &mu, &sigma);
        PpsimPrng g;
        ppsim_prng_init(&g, 7, c, 0);
        int n = 200000;
        double s1 = 0, s2 = 0, s4 = 0;
        g_autofree double *x = g_new(double, n);
        for (int i = 0; i < n; i++) {
            x[i] = exp(mu + sigma * ppsim_prng_normal(&g));
            s1 += x[i];
        }
        double mean = s1 / n;
        for (int i = 0; i < n; i++) {
            double d = x[i] - mean;
            s2 += d * d;
            s4 += d * d * d * d;
        }
        double var = s2 / (n - 1), m4 = s4 / n;
        ck_assert_msg(fabs(mean - 1) <= 5 * sqrt(var / n), "cv %g: mean %g", cvs[c], mean);
        double se_var = sqrt((m4 - var * var) / n);
        ck_assert_msg(fabs(var - cvs[c] * cvs[c]) <= 5 * se_var, "cv %g: var %g", cvs[c], var);
    }
}
END_TEST

static const char explicit_yaml[] = "training: {pp: 4, microbatches: 8}\n"
                                    "costs: {forward: 1, backward_input: 1.3, "
                                    "backward_weight: 0.7, p2p: 0.05, offload: 0.4}\n"
                                    "variability: {cv: 0}\n";

/* cv 0: every sample is the deterministic replay, for every family the sampler reads
 * (split and fused backward, chunks, V shapes, offload and reload on the copy lists). */
START_TEST(test_cv0_is_deterministic)
{
    const char *scheds[] = {"schedule=[1f1b, gpipe, zb-h1, zb-h2, zb-v, v-half, v-min]",
                            "schedule=interleaved", "schedule=[po-h, po-f]"};
    const char *chunks[] = {"training.chunks=1", "training.chunks=2", "training.chunks=1"};
    for (guint k = 0; k < G_N_ELEMENTS(scheds); k++) {
        const char *sets[] = {scheds[k], chunks[k], NULL};
        g_autoptr(PpsimScenario) sc = parse(explicit_yaml, sets);
        g_autoptr(GPtrArray) results = sample_all(sc, 20, 3, 2);
        for (guint i = 0; i < results->len; i++) {
            const PpsimRunResult *res = nth(results, i);
            for (int s = 0; s < res->samples->n; s++)
                ck_assert_msg(res->samples->makespan_ps[s] == res->makespan_ps,
                              "%s: sample %d %" G_GINT64_FORMAT " != %" G_GINT64_FORMAT, res->label,
                              s, res->samples->makespan_ps[s], res->makespan_ps);
        }
    }
}
END_TEST

/* The same in hardware mode (transfers as the deterministic replay timed them). */
START_TEST(test_cv0_hardware)
{
    static const char yaml[] = "model: {layers: 8, hidden: 1024, heads: 8, seq_len: 1024}\n"
                               "training: {pp: 4, microbatches: 8}\n"
                               "schedule: [1f1b, zb-h1, interleaved]\n"
                               "variability: {cv: 0}\n";
    const char *sets[] = {"training.chunks=2", NULL};
    g_autoptr(PpsimScenario) sc = parse(yaml, sets);
    g_autoptr(GPtrArray) results = sample_all(sc, 4, 1, 1);
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = nth(results, i);
        ck_assert(res->samples->frozen_transfers);
        ck_assert_int_eq(res->samples->sorted_ps[0], res->makespan_ps);
        ck_assert_int_eq(res->samples->sorted_ps[3], res->makespan_ps);
    }
}
END_TEST

/* One device k times slower = the deterministic run with its stages' F, B and W costs
 * scaled by k (explicit per-stage costs), for one chunk and two. */
START_TEST(test_slow_device_is_scaled_costs)
{
    struct {
        const char *sched, *chunks, *f, *b, *w;
    } cases[] = {
        {"schedule=[1f1b, zb-h1, gpipe]", "training.chunks=1", "costs.stage_forward=[1,1,1.5,1]",
         "costs.stage_backward_input=[1.3,1.3,1.95,1.3]",
         "costs.stage_backward_weight=[0.7,0.7,1.05,0.7]"},
        {"schedule=interleaved", "training.chunks=2", "costs.stage_forward=[1,1,1.5,1,1,1,1.5,1]",
         "costs.stage_backward_input=[1.3,1.3,1.95,1.3,1.3,1.3,1.95,1.3]",
         "costs.stage_backward_weight=[0.7,0.7,1.05,0.7,0.7,0.7,1.05,0.7]"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        const char *slow[] = {cases[k].sched, cases[k].chunks, "variability.devices.2=1.5", NULL};
        g_autoptr(PpsimScenario) sc = parse(explicit_yaml, slow);
        g_autoptr(GPtrArray) sampled = sample_all(sc, 2, 1, 1);
        const char *scaled[] = {cases[k].sched, cases[k].chunks, cases[k].f,
                                cases[k].b,     cases[k].w,      NULL};
        g_autoptr(PpsimScenario) sc2 = parse(explicit_yaml, scaled);
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) direct = ppsim_sim_run_all(sc2, 0, &error);
        ppsim_assert_no_error(error);
        for (guint i = 0; i < direct->len; i++) {
            ck_assert_int_eq(nth(sampled, i)->samples->p50_ps, nth(direct, i)->makespan_ps);
            ck_assert_int_gt(nth(sampled, i)->samples->p50_ps, nth(sampled, i)->makespan_ps);
        }
    }
}
END_TEST

/* A link k times slower between two devices = a p2p latency k times longer when only
 * those two devices exchange data (p = 2). */
START_TEST(test_slow_link_is_longer_p2p)
{
    static const char yaml[] = "training: {pp: 2, microbatches: 4}\n"
                               "costs: {forward: 1, backward_input: 1, backward_weight: 1, "
                               "p2p: 0.5}\nschedule: [1f1b, zb-h1]\n";
    const char *slow[] = {"variability.links.0-1=3", NULL};
    g_autoptr(PpsimScenario) sc = parse(yaml, slow);
    g_autoptr(GPtrArray) sampled = sample_all(sc, 2, 1, 1);
    const char *longer[] = {"costs.p2p=1.5", NULL};
    g_autoptr(PpsimScenario) sc2 = parse(yaml, longer);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) direct = ppsim_sim_run_all(sc2, 0, &error);
    for (guint i = 0; i < direct->len; i++)
        ck_assert_int_eq(nth(sampled, i)->samples->p50_ps, nth(direct, i)->makespan_ps);
}
END_TEST

/* p = 1, m = 2 with F = B = W = 1 ms: six ops back to back, 6 ms. A window of factor 3
 * over [1.5, 2.5) ms: the op started at 1 ms has done 0.5 ms of work at 1.5, a third of a
 * ms more by 2.5, and the last sixth at full speed: it ends at 2.5 + 1/6 instead of 2, and
 * every later op 2/3 ms later: 6 + 2/3 ms. */
START_TEST(test_window_by_hand)
{
    static const char yaml[] =
        "training: {pp: 1, microbatches: 2}\n"
        "costs: {forward: 1, backward_input: 1, backward_weight: 1}\nschedule: zb-h1\n"
        "variability:\n  events: [{device: 0, from: 1.5, to: 2.5, factor: 3}]\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL);
    g_autoptr(GPtrArray) results = sample_all(sc, 1, 1, 1);
    const PpsimRunResult *res = nth(results, 0);
    ck_assert_int_eq(res->makespan_ps, 6 * MS);
    PpsimTime want = 6 * MS + (2 * MS + 1) / 3; /* 2/3 ms, rounded to the picosecond */
    ck_assert_int_eq(res->samples->makespan_ps[0], want);
}
END_TEST

/* One device, no idle time: the makespan is the sum of the op durations, so its mean is
 * the deterministic makespan and its variance sum(t_i^2) cv^2. The sample mean and standard
 * deviation must fall within 5 standard errors, the SEs computed from the sample. */
START_TEST(test_clt_one_device)
{
    static const char yaml[] = "training: {pp: 1, microbatches: 16}\n"
                               "costs: {forward: 1, backward_input: 2, backward_weight: 0.5}\n"
                               "schedule: zb-h1\nvariability: {cv: 0.2}\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL);
    int n = 4000;
    g_autoptr(GPtrArray) results = sample_all(sc, n, 11, 2);
    const PpsimSampleSummary *s = nth(results, 0)->samples;
    double det = (double)nth(results, 0)->makespan_ps;
    ck_assert_int_eq((gint64)det, 16 * (gint64)(3.5 * MS));
    double se_mean = s->stddev_ps / sqrt(n);
    ck_assert_msg(fabs(s->mean_ps - det) <= 5 * se_mean, "mean %g vs %g (se %g)", s->mean_ps, det,
                  se_mean);
    double var_true = 16 * (1.0 + 4.0 + 0.25) * MS * MS * 0.04;
    double m4 = 0;
    for (int i = 0; i < n; i++)
        m4 += pow((double)s->makespan_ps[i] - s->mean_ps, 4);
    m4 /= n;
    double var = s->stddev_ps * s->stddev_ps, se_var = sqrt((m4 - var * var) / n);
    ck_assert_msg(fabs(var - var_true) <= 5 * se_var, "var %g vs %g (se %g)", var, var_true,
                  se_var);
    /* and the mean converges: 16x the samples, about a quarter of the error bound */
    ck_assert(s->p50_ps > 0 && s->p90_ps >= s->p50_ps && s->p99_ps >= s->p90_ps);
}
END_TEST

/* The same seed gives the same samples for any thread count; another seed others. */
START_TEST(test_deterministic_any_threads)
{
    const char *sets[] = {"variability.cv=0.1", "schedule=[1f1b, zb-v]", "parallel.dp=3", NULL};
    g_autoptr(PpsimScenario) sc = parse(explicit_yaml, sets);
    g_autoptr(GPtrArray) a = sample_all(sc, 101, 5, 1);
    g_autoptr(GPtrArray) b = sample_all(sc, 101, 5, 3);
    g_autoptr(GPtrArray) c = sample_all(sc, 101, 6, 2);
    for (guint i = 0; i < a->len; i++) {
        const PpsimSampleSummary *x = nth(a, i)->samples, *y = nth(b, i)->samples,
                                 *z = nth(c, i)->samples;
        ck_assert(memcmp(x->makespan_ps, y->makespan_ps, sizeof(PpsimTime) * 101) == 0);
        ck_assert(memcmp(x->critical_share, y->critical_share, sizeof(double) * x->p) == 0);
        ck_assert(memcmp(x->makespan_ps, z->makespan_ps, sizeof(PpsimTime) * 101) != 0);
    }
}
END_TEST

/* Data parallelism: cv 0 with replicas is still the deterministic run; under noise the
 * step waits for the slowest replica, so the mean grows with dp; the Gumbel shift from
 * blocks of 8 replicas to 64 lands within a quarter of the unshifted gap of the exact
 * 64-replica mean (it removes at least three quarters of the block's underestimate). */
START_TEST(test_dp_replicas)
{
    const char *zero[] = {"parallel.dp=8", NULL};
    g_autoptr(PpsimScenario) sc0 = parse(explicit_yaml, zero);
    g_autoptr(GPtrArray) r0 = sample_all(sc0, 5, 1, 1);
    ck_assert_int_eq(nth(r0, 0)->samples->p99_ps, nth(r0, 0)->makespan_ps);

    double mean[3];
    const char *dps[] = {"parallel.dp=1", "parallel.dp=8", "parallel.dp=64"};
    for (int k = 0; k < 3; k++) {
        const char *sets[] = {"variability.cv=0.1", dps[k], NULL};
        g_autoptr(PpsimScenario) sc = parse(explicit_yaml, sets);
        g_autoptr(GPtrArray) r = sample_all(sc, 400, 2, 2);
        mean[k] = nth(r, 0)->samples->mean_ps;
        ck_assert_int_eq(nth(r, 0)->samples->dp_exact, k == 0 ? 1 : k == 1 ? 8 : 64);
    }
    ck_assert(mean[0] < mean[1] && mean[1] < mean[2]);
    const char *approx[] = {"variability.cv=0.1", "parallel.dp=64", "variability.dp_exact=8", NULL};
    g_autoptr(PpsimScenario) sca = parse(explicit_yaml, approx);
    g_autoptr(GPtrArray) ra = sample_all(sca, 400, 2, 2);
    const PpsimSampleSummary *s = nth(ra, 0)->samples;
    ck_assert_int_eq(s->dp_exact, 8);
    ck_assert_int_gt(s->dp_shift_ps, 0);
    double gap = mean[2] - mean[1];
    ck_assert_msg(fabs(s->mean_ps - mean[2]) <= 0.25 * gap, "approx %g exact %g block %g",
                  s->mean_ps, mean[2], mean[1]);

    /* a slow GPU is in one replica: with cv 0 the step is that replica's, at any dp */
    const char *one[] = {"variability.devices.2=1.5", NULL};
    g_autoptr(PpsimScenario) sc1 = parse(explicit_yaml, one);
    g_autoptr(GPtrArray) r1 = sample_all(sc1, 3, 1, 1);
    const char *many[] = {"variability.devices.2=1.5", "parallel.dp=16", NULL};
    g_autoptr(PpsimScenario) sc16 = parse(explicit_yaml, many);
    g_autoptr(GPtrArray) r16 = sample_all(sc16, 3, 1, 1);
    ck_assert_int_gt(nth(r1, 0)->samples->p50_ps, nth(r1, 0)->makespan_ps);
    ck_assert_int_eq(nth(r16, 0)->samples->p50_ps, nth(r1, 0)->samples->p50_ps);
    /* under noise the nominal replicas, extrapolated beyond dp_exact, may overtake it */
    const char *noisy[] = {"variability.devices.2=1.05", "variability.cv=0.1", "parallel.dp=1024",
                           "variability.dp_exact=8", NULL};
    g_autoptr(PpsimScenario) scn = parse(explicit_yaml, noisy);
    g_autoptr(GPtrArray) rn = sample_all(scn, 200, 1, 2);
    ck_assert_int_eq(nth(rn, 0)->samples->dp_exact, 8);
    ck_assert(nth(rn, 0)->samples->mean_ps > mean[2]);
}
END_TEST

/* The slack argument: an op whose end slips by less than its float costs nothing; by its
 * float plus d, exactly d. Every op of four schedules (p = 4, m = 8, p2p 0.05 ms, a slow
 * device so that the floats differ), and some ops with float > 0 in each. */
START_TEST(test_slack)
{
    const char *sets[] = {"schedule=[1f1b, zb-h1, zb-v, gpipe]", "variability.devices.1=1.2", NULL};
    g_autoptr(PpsimScenario) sc = parse(explicit_yaml, sets);
    g_autoptr(GPtrArray) results = sample_all(sc, 1, 1, 1);
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = nth(results, i);
        g_autoptr(GError) error = NULL;
        g_autofree PpsimTime *fl = ppsim_sim_slack(sc, res, &error);
        ppsim_assert_no_error(error);
        PpsimTime m0 = res->samples->p50_ps;
        guint n = (guint)ppsim_schedule_n_ops(res->schedule), with_float = 0;
        for (guint op = 0; op < n; op++) {
            ck_assert_int_ge(fl[op], 0);
            ck_assert_int_eq(ppsim_sim_delayed_makespan(sc, res, op, fl[op], &error), m0);
            ck_assert_int_eq(ppsim_sim_delayed_makespan(sc, res, op, fl[op] + 12345, &error),
                             m0 + 12345);
            if (fl[op] > 1) {
                with_float++;
                ck_assert_int_eq(ppsim_sim_delayed_makespan(sc, res, op, fl[op] / 2, &error), m0);
            }
        }
        ck_assert_msg(with_float > 0, "%s: no op with float", res->label);
    }
}
END_TEST

static gboolean
to_gstring(const char *data, gsize len, gpointer user_data, GError **error)
{
    (void)error;
    g_string_append_len(user_data, data, (gssize)len);
    return TRUE;
}

/* A sweep with --samples: the percentile columns, equal to a direct run's for the same
 * seed (cv 0: all equal to the makespan), and the same bytes on 1 and 2 threads. */
START_TEST(test_sweep_columns)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-samples-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "base.yaml", NULL);
    ck_assert(g_file_set_contents(path, explicit_yaml, -1, NULL));
    char *sets[] = {NULL};
    char *grid[] = {"variability.cv=0,0.1", "schedule=1f1b,zb-h1", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) sw = ppsim_sweep_new_grid(path, sets, grid, &error);
    ppsim_assert_no_error(error);
    ppsim_sweep_set_samples(sw, 64, 9);
    GString *out[2] = {g_string_new(NULL), g_string_new(NULL)};
    for (int t = 0; t < 2; t++) {
        PpsimSweepRunOptions o = {.threads = t + 1,
                                  .shard_k = 1,
                                  .shard_n = 1,
                                  .resume_after = G_MAXUINT64,
                                  .format = PPSIM_SWEEP_CSV,
                                  .write = to_gstring,
                                  .write_data = out[t]};
        g_autoptr(GPtrArray) rows =
            g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
        ck_assert(ppsim_sweep_run(sw, &o, rows, &error));
        ck_assert_uint_eq(rows->len, 4);
    }
    ck_assert_str_eq(out[0]->str, out[1]->str);
    g_autofree char *header = ppsim_sweep_csv_header(sw);
    ck_assert(strstr(header, ",makespan_mean_ms,makespan_p50_ms,makespan_p90_ms,"
                             "makespan_p99_ms,") != NULL);
    /* the cv 0.1 1F1B row against a direct run with the same seed */
    const char *direct_sets[] = {"variability.cv=0.1", "schedule=1f1b", NULL};
    g_autoptr(PpsimScenario) sc = parse(explicit_yaml, direct_sets);
    g_autoptr(GPtrArray) res = sample_all(sc, 64, 9, 1);
    g_autoptr(GString) want = g_string_new(NULL);
    g_string_append_printf(want, "2,0.1,1f1b,ok,");
    g_auto(GStrv) lines = g_strsplit(out[0]->str, "\n", -1);
    ck_assert(g_str_has_prefix(lines[2], want->str));
    g_auto(GStrv) cells = g_strsplit(lines[2], ",", -1);
    g_auto(GStrv) names = g_strsplit(g_strstrip(header), ",", -1);
    int col_p99 = -1, col_makespan = -1;
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], "makespan_p99_ms") == 0)
            col_p99 = i;
        else if (strcmp(names[i], "makespan_ms") == 0)
            col_makespan = i;
    }
    ck_assert_int_ge(col_p99, 0);
    ck_assert_int_ge(col_makespan, 0);
    g_autoptr(GString) p99 = g_string_new(NULL);
    ppsim_fmt_ms(p99, nth(res, 0)->samples->p99_ps);
    ck_assert_str_eq(cells[col_p99], p99->str);
    g_auto(GStrv) first = g_strsplit(lines[0], ",", -1); /* cv 0: p99 = the makespan */
    ck_assert_str_eq(first[col_p99], first[col_makespan]);
    g_string_free(out[0], TRUE);
    g_string_free(out[1], TRUE);
    g_unlink(path);
    g_rmdir(dir);
}
END_TEST

/* Runs the ppsim binary with @args (NULL-terminated) on scenario text @yaml; returns the
 * exit status, stdout and stderr. */
static int
run_cli(const char *yaml, const char *const *args, char **out, char **err)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-cli-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "s.yaml", NULL);
    ck_assert(g_file_set_contents(path, yaml, -1, NULL));
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)g_getenv("PPSIM_EXE"));
    g_ptr_array_add(argv, "run");
    g_ptr_array_add(argv, path);
    for (int i = 0; args[i]; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autoptr(GError) error = NULL;
    ck_assert(g_spawn_sync(dir, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, &error));
    g_unlink(path);
    g_autofree char *svg = g_build_filename(dir, "plots", "makespan-cdf.svg", NULL);
    if (g_file_test(svg, G_FILE_TEST_EXISTS)) { /* --plot plots: keep its first bytes */
        g_autofree char *text = NULL;
        ck_assert(g_file_get_contents(svg, &text, NULL, NULL));
        char *both = g_strconcat(*out, "\nSVG:", text, NULL);
        g_free(*out);
        *out = both;
        g_unlink(svg);
        g_autofree char *plots = g_build_filename(dir, "plots", NULL);
        g_rmdir(plots);
    }
    g_rmdir(dir);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The command line: the same bytes for -j 1 and -j 3 (text and JSON), the JSON keys, the
 * CDF chart, and usage errors (exit 2) and the warning without --samples. */
START_TEST(test_cli)
{
    static const char yaml[] = "training: {pp: 4, microbatches: 8}\n"
                               "costs: {forward: 1, backward_input: 1, backward_weight: 1}\n"
                               "schedule: [1f1b, zb-h1]\nvariability: {cv: 0.1}\n";
    g_autofree char *o1 = NULL, *o3 = NULL, *j1 = NULL, *j3 = NULL, *e = NULL;
    const char *a1[] = {"--no-artifacts", "--samples", "300", "--seed", "4", "-j", "1", NULL};
    const char *a3[] = {"--no-artifacts", "--samples", "300", "--seed", "4", "-j", "3", NULL};
    ck_assert_int_eq(run_cli(yaml, a1, &o1, &e), 0);
    g_clear_pointer(&e, g_free);
    ck_assert_int_eq(run_cli(yaml, a3, &o3, &e), 0);
    g_clear_pointer(&e, g_free);
    ck_assert_str_eq(o1, o3);
    ck_assert(strstr(o1, "makespan over 300 samples (seed 4)") != NULL);
    const char *b1[] = {"--no-artifacts", "--samples", "300", "--seed", "4", "-j", "1",
                        "--format",       "json",      NULL};
    const char *b3[] = {"--no-artifacts", "--samples", "300",    "--seed", "4", "-j", "3",
                        "--format",       "json",      "--plot", "plots",  NULL};
    ck_assert_int_eq(run_cli(yaml, b1, &j1, &e), 0);
    g_clear_pointer(&e, g_free);
    ck_assert_int_eq(run_cli(yaml, b3, &j3, &e), 0);
    g_clear_pointer(&e, g_free);
    ck_assert(g_str_has_prefix(j3, j1));
    ck_assert(strstr(j3, "\nSVG:<svg") != NULL);
    ck_assert(strstr(j1, "\"makespan_percentiles\":{\"mean\":") != NULL);
    ck_assert(strstr(j1, "\"p50\":") && strstr(j1, "\"p90\":") && strstr(j1, "\"p99\":"));
    ck_assert(strstr(j1, "\"critical_share\":") != NULL);
    ck_assert(strstr(j1, "\"samples\":{\"n\":300,\"seed\":4,") != NULL);
    struct {
        const char *args[6];
        const char *message;
    } bad[] = {
        {{"--seed", "3", NULL}, "--seed and --plot go with --samples"},
        {{"--samples", "-5", NULL}, "--samples must be from 1"},
        {{"--samples", "5", "--seed", "-2", NULL}, "--seed must be >= 0"},
        {{"-j", "2", NULL}, "--jobs goes with --grid or --samples"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *out = NULL, *err = NULL;
        const char *args[8] = {"--no-artifacts"};
        for (int k = 0; bad[i].args[k]; k++)
            args[k + 1] = bad[i].args[k];
        ck_assert_int_eq(run_cli(yaml, args, &out, &err), 2);
        ck_assert_msg(strstr(err, bad[i].message) != NULL, "got '%s'", err);
    }
    g_autofree char *out = NULL, *err = NULL;
    const char *plain[] = {"--no-artifacts", NULL};
    ck_assert_int_eq(run_cli(yaml, plain, &out, &err), 0);
    ck_assert(strstr(err, "variability: section applies with --samples N only") != NULL);
    ck_assert(strstr(out, "makespan over") == NULL);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("samples");
    TCase *tc = tcase_create("samples");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_prng_reference);
    tcase_add_test(tc, test_lognormal_moments);
    tcase_add_test(tc, test_cv0_is_deterministic);
    tcase_add_test(tc, test_cv0_hardware);
    tcase_add_test(tc, test_slow_device_is_scaled_costs);
    tcase_add_test(tc, test_slow_link_is_longer_p2p);
    tcase_add_test(tc, test_window_by_hand);
    tcase_add_test(tc, test_clt_one_device);
    tcase_add_test(tc, test_deterministic_any_threads);
    tcase_add_test(tc, test_dp_replicas);
    tcase_add_test(tc, test_sweep_columns);
    tcase_add_test(tc, test_slack);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    return s;
}
