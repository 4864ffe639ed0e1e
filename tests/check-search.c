/* check-search.c: throughput (tokens/s, TFLOP/s per GPU) against closed forms, summaries that
 * rank by throughput when the work differs, and `ppsim search`. */
#include "ppsim-test.h"
#include "sweep/sweep.h"

#include <math.h>
#include <string.h>

static void
assert_rel(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: got %.17g, want %.17g", what, got,
                  want);
}

/* One DGX A100, GPT 5.8B (gelu, FFN 4h, as many KV heads as heads): the model FLOPs of one
 * iteration are [NAR21] Eq. (3) without recompute, 72 B s l h^2 (1 + s/6h + V/12lh), and the
 * throughput columns are those FLOPs and B s tokens over the makespan. */
START_TEST(test_throughput_closed_form)
{
    const char *sets[] = {"schedule=1f1b", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", sets);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, 0, &error);
    ppsim_assert_no_error(error);
    const PpsimRunResult *r = g_ptr_array_index(results, 0);
    double B = 32, s = 4096, l = 32, h = 4096, V = 51200;
    double flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    assert_rel(r->model_flops, flops, 1e-12, "model_flops");
    double seconds = (double)r->makespan_ps / 1e12;
    assert_rel(r->tokens_per_s, B * s / seconds, 1e-12, "tokens_per_s");
    assert_rel(r->tflops_per_gpu, flops / seconds / 8 / 1e12, 1e-12, "tflops_per_gpu");
    assert_rel(r->tflops_per_gpu * 1e12, r->mfu * sc->hardware.gpu_peak_flops, 1e-12, "mfu");
}
END_TEST

/* 3D: every replica's tokens count (global batch 128 x 4096), and TFLOP/s per GPU is MFU
 * times the peak. */
START_TEST(test_throughput_3d)
{
    const char *sets[] = {"schedule=1f1b", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/llama70b_32xh100.yaml", sets);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, 0, &error);
    ppsim_assert_no_error(error);
    const PpsimRunResult *r = g_ptr_array_index(results, 0);
    ck_assert_int_eq(r->gpus, 32);
    double seconds = (double)r->makespan_ps / 1e12;
    assert_rel(r->tokens, 128.0 * 4096, 0, "tokens");
    assert_rel(r->tokens_per_s, 128.0 * 4096 / seconds, 1e-12, "tokens_per_s");
    assert_rel(r->tflops_per_gpu * 1e12, r->mfu * sc->hardware.gpu_peak_flops, 1e-12, "mfu");
}
END_TEST

static PpsimSweepRow *
row_new(guint64 point, const char *m, double makespan_ms, double tokens, double peak)
{
    PpsimSweepRow *r = g_new0(PpsimSweepRow, 1);
    r->point = point;
    r->labels = g_new0(char *, 2);
    r->labels[0] = g_strdup(m);
    r->schedule = g_strdup("1f1b");
    r->status = g_strdup("ok");
    r->has_metrics = TRUE;
    r->makespan_ms = makespan_ms;
    r->peak_memory = peak;
    r->memory_unit = g_strdup("bytes");
    r->tokens = tokens;
    r->tokens_per_s = tokens > 0 ? tokens / (makespan_ms / 1e3) : 0;
    return r;
}

/* m = 8 ends first, but m = 32 moves more tokens per second: with different work per
 * point the summary ranks by tokens/s; with the same work (or unknown), by makespan. */
START_TEST(test_summary_ranks_by_throughput)
{
    char *names[] = {"training.microbatches", NULL};
    for (int same = 0; same < 3; same++) {
        g_autoptr(GPtrArray) rows =
            g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
        double t8 = same == 1 ? 32 * 4096.0 : 8 * 4096.0, t32 = 32 * 4096.0;
        if (same == 2)
            t8 = t32 = 0; /* explicit costs: no tokens */
        g_ptr_array_add(rows, row_new(0, "8", 1000, t8, 2e9));
        g_ptr_array_add(rows, row_new(1, "32", 3000, t32, 3e9));
        g_autoptr(GString) sum = g_string_new(NULL);
        ppsim_sweep_summary(sum, rows, names, 1);
        const char *fast = strstr(sum->str, "fastest that fits");
        ck_assert_ptr_nonnull(fast);
        const char *line = strchr(fast, '\n') + 1;
        gboolean by_tput = same == 0;
        ck_assert_msg(strstr(line, by_tput ? "microbatches=32\n" : "microbatches=8\n") ==
                          strchr(line, '\n') -
                              strlen(by_tput ? "microbatches=32" : "microbatches=8"),
                      "case %d: %s", same, sum->str);
        ck_assert_int_eq(strstr(sum->str, "ranked by tokens/s") != NULL, by_tput);
        /* the front: m = 32 is both faster (by tokens/s) and larger, so both are on it by
         * throughput; by makespan m = 8 dominates */
        ck_assert_ptr_nonnull(
            strstr(sum->str, by_tput ? "Pareto front, tokens/s against peak memory (2 rows)"
                                     : "Pareto front, makespan against peak memory (1 rows)"));
    }
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("search");
    TCase *tc = tcase_create("throughput");
    tcase_add_test(tc, test_throughput_closed_form);
    tcase_add_test(tc, test_throughput_3d);
    tcase_add_test(tc, test_summary_ranks_by_throughput);
    suite_add_tcase(s, tc);
    return s;
}
