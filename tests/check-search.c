/* check-search.c: throughput (tokens/s, TFLOP/s per GPU) against closed forms, summaries that
 * rank by throughput when the work differs, and `ppsim search`. */
#include "ppsim-test.h"
#include "report/report.h"
#include "sweep/sweep.h"

#include <glib/gstdio.h>

#include <json-glib/json-glib.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef PpsimTestExec Run;
#define run_clear ppsim_test_exec_clear

/* Runs ppsim with a NULL-terminated argument list. */
static Run
ppsim(const char *first, ...)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new();
    g_ptr_array_add(args, (gpointer)first);
    va_list ap;
    va_start(ap, first);
    for (const char *a = va_arg(ap, const char *); a; a = va_arg(ap, const char *))
        g_ptr_array_add(args, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(args, NULL);
    return ppsim_test_exec(NULL, (const char *const *)args->pdata);
}

static gboolean
one_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl != NULL && nl[1] == '\0';
}

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

/* The layouts of 8 GPUs for the 5.8B model (32 layers, 32 heads, global batch 32) with two
 * schedules, enumerated by hand here: every one is listed once, each divides, the ranking
 * is by tokens/s, and the best layout replayed by `ppsim run` gives the same tokens/s. */
START_TEST(test_search_layouts)
{
    g_autofree char *scenario = ppsim_test_src_path("scenarios/a100_8gpu.yaml");
    Run r = ppsim("search", scenario, "--gpus", "8", "--schedules", "1f1b,zb-v", "--format", "json",
                  "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *layouts = json_object_get_array_member(root, "layouts");
    double limit = json_object_get_double_member(root, "memory_limit");
    /* by hand: tp | 8, pp | 8/tp and pp | 32 layers, dp = 8/(tp pp), mbs | 32/dp; 1f1b
     * v = 1, zb-v v = 2 with 2pp | 32 */
    guint want = 0;
    for (int tp = 1; tp <= 8; tp *= 2)
        for (int pp = 1; pp <= 8 / tp; pp *= 2) {
            int dp = 8 / (tp * pp);
            for (int mbs = 1; mbs <= 8; mbs *= 2)
                if (32 % (dp * mbs) == 0)
                    want += 1 + (32 % (2 * pp) == 0);
        }
    ck_assert_uint_eq(json_array_get_length(layouts), want);
    double prev = INFINITY;
    gboolean fitting = TRUE;
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(layouts); i++) {
        JsonObject *l = json_array_get_object_element(layouts, i);
        int tp = (int)json_object_get_int_member(l, "tp");
        int pp = (int)json_object_get_int_member(l, "pp");
        int dp = (int)json_object_get_int_member(l, "dp");
        int mbs = (int)json_object_get_int_member(l, "microbatch_size");
        int m = (int)json_object_get_int_member(l, "microbatches");
        const char *sched = json_object_get_string_member(l, "schedule");
        ck_assert_int_eq(tp * pp * dp, 8);
        ck_assert_int_eq(m * mbs * dp, 32);
        g_autofree char *key = g_strdup_printf("%d %d %d %s", tp, pp, mbs, sched);
        ck_assert_msg(g_hash_table_add(seen, g_steal_pointer(&key)), "listed twice");
        gboolean fits = json_object_get_boolean_member(l, "fits");
        if (fits) {
            ck_assert_msg(fitting, "a fitting layout after one that does not fit");
            double t = json_object_get_double_member(l, "tokens_per_s");
            ck_assert(t <= prev);
            prev = t;
            ck_assert(json_object_get_double_member(l, "peak_memory") <= limit);
        }
        fitting = fits;
    }
    /* the best, replayed on its own */
    JsonObject *best = json_array_get_object_element(layouts, 0);
    ck_assert(json_object_get_boolean_member(best, "fits"));
    g_autofree char *tp =
        g_strdup_printf("parallel.tp=%" G_GINT64_FORMAT, json_object_get_int_member(best, "tp"));
    g_autofree char *pp =
        g_strdup_printf("training.pp=%" G_GINT64_FORMAT, json_object_get_int_member(best, "pp"));
    g_autofree char *dp =
        g_strdup_printf("parallel.dp=%" G_GINT64_FORMAT, json_object_get_int_member(best, "dp"));
    g_autofree char *mbs = g_strdup_printf("training.microbatch_size=%" G_GINT64_FORMAT,
                                           json_object_get_int_member(best, "microbatch_size"));
    g_autofree char *m = g_strdup_printf("training.microbatches=%" G_GINT64_FORMAT,
                                         json_object_get_int_member(best, "microbatches"));
    g_autofree char *v = g_strdup_printf("training.chunks=%" G_GINT64_FORMAT,
                                         json_object_get_int_member(best, "chunks"));
    g_autofree char *rc =
        g_strdup_printf("model.recompute=%s", json_object_get_string_member(best, "recompute"));
    g_autofree char *zero = g_strdup_printf("parallel.zero=%" G_GINT64_FORMAT,
                                            json_object_get_int_member(best, "zero"));
    Run one =
        ppsim("run", scenario, "--no-artifacts", "--format", "json", "--schedule",
              json_object_get_string_member(best, "schedule"), "--set", tp, "--set", pp, "--set",
              dp, "--set", mbs, "--set", m, "--set", v, "--set", rc, "--set", zero, NULL);
    ck_assert_msg(one.status == 0, "%s", one.err);
    g_autoptr(JsonParser) p2 = json_parser_new();
    ck_assert(json_parser_load_from_data(p2, one.out, -1, NULL));
    JsonObject *res = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p2)), "results"), 0);
    ck_assert_double_eq(json_object_get_double_member(res, "tokens_per_s"),
                        json_object_get_double_member(best, "tokens_per_s"));
    run_clear(&one);
    run_clear(&r);
}
END_TEST

/* `ppsim search` of @yaml (written to a file of its own) on @gpus GPUs, 1f1b only, as JSON:
 * its layouts, parsed into @parser; @r holds the run (run_clear it). */
static JsonArray *
search_layouts(const char *yaml, const char *gpus, Run *r, JsonParser *parser)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-search-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "search.yaml", NULL);
    ck_assert(g_file_set_contents(path, yaml, -1, NULL));
    *r = ppsim("search", path, "--gpus", gpus, "--schedules", "1f1b", "--format", "json", "-q",
               NULL);
    g_unlink(path);
    g_rmdir(dir);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert(json_parser_load_from_data(parser, r->out, -1, NULL));
    return json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)),
                                        "layouts");
}

/* Context and expert parallelism: on a Mixtral-class MoE model (8 experts, 32 heads and 8 KV
 * heads) with 16K-token sequences on 8 GPUs, the search tries cp where each rank keeps at
 * least 4K tokens (cp | 8 KV heads: 1, 2, 4) and ep | experts and ep | tp x cp x dp; by hand:
 * tp | 8, pp | 8/tp and pp | 8 layers (cut from 32, so that whole experts fit), cp |
 * 8/(tp pp), dp = 8/(tp pp cp), ep a power of two dividing 8 and tp cp dp, mbs | 16/dp; one
 * schedule (1f1b). Each layout's etp is tp when ep divides cp dp (Megatron-Core's default), else 1
 * (whole experts, EP across the TP ranks). With dp = 1 a layout's ZeRO stage acts (is not shown as
 * 0) exactly when cp > 1: ZeRO shards over dp x cp. */
START_TEST(test_search_cp_ep)
{
    static const char yaml[] = "name: moe-search\n"
                               "hardware: {preset: dgx-h100-80gb}\n"
                               "model: {preset: mixtral-8x7b, seq_len: 16384, layers: 8}\n"
                               "training: {pp: 2, global_batch: 16}\n"
                               "schedule: 1f1b\n";
    Run r;
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonArray *layouts = search_layouts(yaml, "8", &r, parser);
    guint want = 0;
    for (int tp = 1; tp <= 8; tp *= 2)
        for (int pp = 1; pp <= 8 / tp; pp *= 2)
            for (int cp = 1; cp <= 4 && cp <= 8 / (tp * pp); cp *= 2) {
                int dp = 8 / (tp * pp * cp);
                for (int ep = 1; ep <= 8 && ep <= dp * tp * cp; ep *= 2)
                    for (int mbs = 1; mbs <= 8; mbs *= 2)
                        want += 16 % (dp * mbs) == 0;
            }
    ck_assert_uint_eq(json_array_get_length(layouts), want);
    gboolean cp_seen = FALSE, ep_seen = FALSE, zero_cp_seen = FALSE, etp1_seen = FALSE;
    for (guint i = 0; i < json_array_get_length(layouts); i++) {
        JsonObject *l = json_array_get_object_element(layouts, i);
        int tp = (int)json_object_get_int_member(l, "tp");
        int pp = (int)json_object_get_int_member(l, "pp");
        int dp = (int)json_object_get_int_member(l, "dp");
        int cp = (int)json_object_get_int_member(l, "cp");
        int ep = (int)json_object_get_int_member(l, "ep");
        int etp = (int)json_object_get_int_member(l, "etp");
        ck_assert_int_eq(tp * pp * dp * cp, 8);
        ck_assert(16384 % cp == 0 && 16384 / cp >= 4096 && 8 % cp == 0);
        ck_assert(8 % ep == 0 && (dp * tp * cp) % ep == 0);
        ck_assert_int_eq(etp, (dp * cp) % ep == 0 ? tp : 1);
        etp1_seen |= etp == 1 && tp > 1;
        cp_seen |= cp > 1;
        ep_seen |= ep > 1;
        /* ZeRO shards over dp x cp: it acts (zero >= 1) with dp = 1 when cp > 1 */
        JsonNode *zn = json_object_get_member(l, "zero");
        if (dp == 1 && zn != NULL && !JSON_NODE_HOLDS_NULL(zn)) {
            ck_assert_int_eq(json_node_get_int(zn) == 0, cp == 1);
            zero_cp_seen |= cp > 1;
        }
    }
    ck_assert(cp_seen && ep_seen && zero_cp_seen && etp1_seen);
    run_clear(&r);
}
END_TEST

/* The layouts of @layouts whose memory plan recomputes @mode; with @fit each of them must
 * fit (the ladder keeps the last rung, full, for a layout nothing fits). */
static int
layouts_recomputing(JsonArray *layouts, const char *mode, gboolean fit)
{
    int n = 0;
    for (guint i = 0; i < json_array_get_length(layouts); i++) {
        JsonObject *l = json_array_get_object_element(layouts, i);
        JsonNode *rn = json_object_get_member(l, "recompute");
        const char *rc = rn && !JSON_NODE_HOLDS_NULL(rn) ? json_node_get_string(rn) : "";
        if (strcmp(rc, mode) == 0) {
            n++;
            ck_assert_msg(!fit || json_object_get_boolean_member(l, "fits"), "recompute %s: no fit",
                          mode);
        }
    }
    return n;
}

/* The ladder of memory plans takes recompute moe between selective and full for a mixture
 * of experts (its MLP blocks re-run): under a 60 GB limit some of the Mixtral-class layouts
 * above fit only with it, and every layout it is kept for fits; a dense model of the same
 * shape never takes it. */
START_TEST(test_search_moe_recompute)
{
    static const char *const yamls[] = {
        "name: moe-search\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {preset: mixtral-8x7b, seq_len: 16384, layers: 8}\n"
        "training: {pp: 2, global_batch: 16}\n"
        "memory: {limit: 60GB}\n"
        "schedule: 1f1b\n",
        "name: dense-search\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, mlp: swiglu,\n"
        "        seq_len: 16384, vocab: 32000}\n"
        "training: {pp: 2, global_batch: 16}\n"
        "memory: {limit: 20GB}\n"
        "schedule: 1f1b\n",
    };
    for (int dense = 0; dense < 2; dense++) {
        Run r;
        g_autoptr(JsonParser) parser = json_parser_new();
        JsonArray *layouts = search_layouts(yamls[dense], "8", &r, parser);
        int moe = layouts_recomputing(layouts, "moe", TRUE);
        int full = layouts_recomputing(layouts, "full", FALSE);
        ck_assert_msg(dense ? moe == 0 : moe > 0, "%s: %d layouts with recompute moe",
                      dense ? "dense" : "moe", moe);
        ck_assert_int_gt(full, 0);
        run_clear(&r);
    }
}
END_TEST

/* The ladder takes recompute mla_up_proj right after none for a model with multi-head latent
 * attention (its up-projections re-run): under a 30 GB limit some layouts of a small MLA model
 * fit with it, each one it is kept for fits; the same model with grouped-query attention
 * never takes it. */
START_TEST(test_search_mla_recompute)
{
    static const char *const yamls[] = {
        "name: mla-search\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {layers: 8, hidden: 2048, heads: 32, seq_len: 16384, ffn_hidden: 8192,\n"
        "        mlp: swiglu, vocab: 32000,\n"
        "        mla: {q_lora_rank: 512, kv_lora_rank: 256, qk_nope_head_dim: 128,\n"
        "              qk_rope_head_dim: 64, v_head_dim: 128}}\n"
        "training: {pp: 2, global_batch: 16}\n"
        "memory: {limit: 30GB}\n"
        "schedule: 1f1b\n",
        "name: gqa-search\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {layers: 8, hidden: 2048, heads: 32, kv_heads: 8, seq_len: 16384,\n"
        "        ffn_hidden: 8192, mlp: swiglu, vocab: 32000}\n"
        "training: {pp: 2, global_batch: 16}\n"
        "memory: {limit: 30GB}\n"
        "schedule: 1f1b\n",
    };
    for (int gqa = 0; gqa < 2; gqa++) {
        Run r;
        g_autoptr(JsonParser) parser = json_parser_new();
        JsonArray *layouts = search_layouts(yamls[gqa], "8", &r, parser);
        int up = layouts_recomputing(layouts, "mla_up_proj", TRUE);
        ck_assert_msg(gqa ? up == 0 : up > 0, "%s: %d layouts with recompute mla_up_proj",
                      gqa ? "gqa" : "mla", up);
        run_clear(&r);
    }
}
END_TEST

/* The memory ladder tries ZeRO 1 to 3 on the scenario as written: a scenario that overlaps the
 * weights' all-gather (parallel.overlap_param_gather, which ZeRO-3 ignores) keeps its ZeRO-3
 * rungs. Under a tight limit some layouts fit only with ZeRO-3; with the option they fit
 * with the same ZeRO stages as without it. */
START_TEST(test_search_ladder_keeps_param_gather)
{
    static const char *const yamls[] = {
        "name: dense-search\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, mlp: swiglu,\n"
        "        seq_len: 4096, vocab: 32000}\n"
        "training: {pp: 2, global_batch: 16}\n"
        "memory: {limit: 8GB}\n"
        "schedule: 1f1b\n",
        "name: dense-search\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, mlp: swiglu,\n"
        "        seq_len: 4096, vocab: 32000}\n"
        "parallel: {overlap_param_gather: true}\n"
        "training: {pp: 2, global_batch: 16}\n"
        "memory: {limit: 8GB}\n"
        "schedule: 1f1b\n",
    };
    int zero3[2] = {0, 0}, fits[2] = {0, 0};
    for (int with = 0; with < 2; with++) {
        Run r;
        g_autoptr(JsonParser) parser = json_parser_new();
        JsonArray *layouts = search_layouts(yamls[with], "8", &r, parser);
        for (guint i = 0; i < json_array_get_length(layouts); i++) {
            JsonObject *l = json_array_get_object_element(layouts, i);
            if (!json_object_get_boolean_member(l, "fits"))
                continue;
            fits[with]++;
            JsonNode *zn = json_object_get_member(l, "zero");
            zero3[with] += zn != NULL && !JSON_NODE_HOLDS_NULL(zn) && json_node_get_int(zn) == 3;
        }
        run_clear(&r);
    }
    ck_assert_int_gt(zero3[0], 0);
    ck_assert_int_eq(zero3[1], zero3[0]);
    ck_assert_int_eq(fits[1], fits[0]);
}
END_TEST

/* A scenario's per-stage lists fit its own pp only: the search drops them, and each layout
 * splits its layers evenly (here stage_layers written for pp 2, 4 GPUs searched). */
START_TEST(test_search_drops_stage_lists)
{
    static const char yaml[] = "name: split\n"
                               "hardware: {preset: dgx-a100-80gb}\n"
                               "model: {layers: 8, hidden: 1024, heads: 16, seq_len: 1024,\n"
                               "        stage_layers: [3, 5], stage_recompute: [full, none]}\n"
                               "training: {pp: 2, global_batch: 8}\n"
                               "schedule: 1f1b\n";
    Run r;
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonArray *layouts = search_layouts(yaml, "4", &r, parser);
    gboolean pp4 = FALSE;
    for (guint i = 0; i < json_array_get_length(layouts); i++) {
        JsonObject *l = json_array_get_object_element(layouts, i);
        JsonNode *fits = json_object_get_member(l, "fits");
        ck_assert(fits != NULL && json_node_get_boolean(fits));
        pp4 |= json_object_get_int_member(l, "pp") == 4;
    }
    ck_assert(pp4);
    run_clear(&r);
}
END_TEST

/* Bad input: no flag, a count no layout divides, a model that fits no layout, a GPU the
 * kernel model cannot time: one line each, saying what is closest or what is missing. */
START_TEST(test_search_errors)
{
    g_autofree char *scenario = ppsim_test_src_path("scenarios/a100_8gpu.yaml");
    Run r = ppsim("search", scenario, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert(one_line(r.err) && strstr(r.err, "--gpus N is required"));
    run_clear(&r);
    r = ppsim("search", scenario, "--gpus", "0", NULL); /* given, but no GPU */
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "--gpus must be >= 1, got 0"), "%s", r.err);
    run_clear(&r);
    r = ppsim("search", scenario, "--gpus", "12", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "nearest GPU counts with a layout: 8, 16"), "%s",
                  r.err);
    ck_assert_str_eq(r.out, "");
    run_clear(&r);
    r = ppsim("search", scenario, "--gpus", "3", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "no layout divides") &&
                      strstr(r.err, "layout: 2, 4"),
                  "%s", r.err);
    run_clear(&r);
    r = ppsim("search", scenario, "--gpus", "8", "--set", "memory.limit=2GiB", "--schedules",
              "1f1b", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "no layout of 8 GPUs fits in 2.00 GiB") &&
                      strstr(r.err, "closest: tp="),
                  "%s", r.err);
    run_clear(&r);
    /* a GPU the kernel model cannot time fails every layout alike: the reason, once */
    r = ppsim("search", scenario, "--gpus", "8", "--set", "model.attention_kernel=fa3", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "'hardware.gpu.attention_efficiency_fa3'"), "%s",
                  r.err);
    ck_assert_str_eq(r.out, "");
    run_clear(&r);
    r = ppsim("search", scenario, "--gpus", "8", "--schedules", "zbv", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "zb-v"), "%s", r.err);
    run_clear(&r);
    /* --resume on another search's rows */
    g_autofree char *dir = g_dir_make_tmp("ppsim-search-XXXXXX", NULL);
    g_autofree char *rows = g_build_filename(dir, "rows.csv", NULL);
    r = ppsim("search", scenario, "--gpus", "8", "--schedules", "1f1b", "--rows", rows, "-q", NULL);
    ck_assert_int_eq(r.status, 0);
    run_clear(&r);
    r = ppsim("search", scenario, "--gpus", "8", "--schedules", "zb-h1", "--rows", rows, "--resume",
              "-q", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "holds another search's rows"), "%s", r.err);
    run_clear(&r);
    g_unlink(rows);
    g_rmdir(dir);
}
END_TEST

static char *
file_text(const char *path)
{
    char *t = NULL;
    ck_assert(g_file_get_contents(path, &t, NULL, NULL));
    return t;
}

/* SIGKILL at random moments, then --resume, again and again: the rows file and the output
 * end byte for byte as an uninterrupted search's. */
START_TEST(test_search_resume_after_kills)
{
    g_autofree char *scenario = ppsim_test_src_path("scenarios/a100_8gpu.yaml");
    g_autofree char *dir = g_dir_make_tmp("ppsim-search-XXXXXX", NULL);
    g_autofree char *ref_rows = g_build_filename(dir, "ref.csv", NULL);
    g_autofree char *rows = g_build_filename(dir, "rows.csv", NULL);
    const char *sched = "1f1b,interleaved,zb-h1,zb-v,v-half,gis,po-h";
    Run ref = ppsim("search", scenario, "--gpus", "8", "--schedules", sched, "--rows", ref_rows,
                    "-q", "-j", "2", NULL);
    ck_assert_msg(ref.status == 0, "%s", ref.err);
    g_autofree char *ref_text = file_text(ref_rows);
    GRand *rng = g_rand_new_with_seed(29);
    for (int trial = 0; trial < 3; trial++) {
        g_unlink(rows);
        int kills = 0;
        for (int attempt = 0; attempt < 4; attempt++) {
            const char *argv[] = {g_getenv("PPSIM_EXE"),
                                  "search",
                                  scenario,
                                  "--gpus",
                                  "8",
                                  "--schedules",
                                  sched,
                                  "--rows",
                                  rows,
                                  "--resume",
                                  "-q",
                                  "-j",
                                  "2",
                                  NULL};
            GPid pid;
            ck_assert(g_spawn_async(NULL, (char **)argv, NULL,
                                    G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                                        G_SPAWN_STDERR_TO_DEV_NULL,
                                    NULL, NULL, &pid, NULL));
            g_usleep((gulong)g_rand_int_range(rng, 0, 600000));
            kill(pid, SIGKILL);
            int status = 0;
            waitpid(pid, &status, 0);
            g_spawn_close_pid(pid);
            kills += WIFSIGNALED(status);
        }
        Run fin = ppsim("search", scenario, "--gpus", "8", "--schedules", sched, "--rows", rows,
                        "--resume", "-q", "-j", "1", NULL);
        ck_assert_msg(fin.status == 0, "%s", fin.err);
        ck_assert_str_eq(fin.out, ref.out);
        g_autofree char *text = file_text(rows);
        ck_assert_msg(strcmp(text, ref_text) == 0, "trial %d (%d kills): rows differ", trial,
                      kills);
        run_clear(&fin);
    }
    g_rand_free(rng);
    run_clear(&ref);
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    ck_assert(g_spawn_command_line_sync(rm, NULL, NULL, NULL, NULL));
}
END_TEST

/* Writes @yaml to a new temporary file; returns its path. */
static char *
temp_file(const char *name, const char *yaml)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-sweepfix-XXXXXX", NULL);
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, yaml, -1, NULL));
    return path;
}

/* A schedule-name typo in a sweep file, as an axis value or in `set:`, fails at load with
 * the sweep file's line and column. */
START_TEST(test_sweep_schedule_typo)
{
    g_autofree char *base = ppsim_test_src_path("scenarios/zb_table5.yaml");
    g_autofree char *axis_yaml = g_strdup_printf(
        "scenario: %s\naxes:\n  training.microbatches: [8, 16]\n  schedule: [1f1b, zbh1]\n", base);
    g_autofree char *axis = temp_file("axis.yaml", axis_yaml);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) s1 = ppsim_sweep_load_file(axis, &error);
    ck_assert_ptr_null(s1);
    g_autofree char *want = g_strdup_printf("%s:4:20: unknown schedule 'zbh1' (did you mean "
                                            "'zb-h1'?)",
                                            axis);
    ck_assert_str_eq(error->message, want);
    g_clear_error(&error);
    g_autofree char *set_yaml =
        g_strdup_printf("scenario: %s\nset: {schedule: [1f1b, {name: zb-v}, zbv]}\naxes:\n"
                        "  training.microbatches: [8]\n",
                        base);
    g_autofree char *set = temp_file("set.yaml", set_yaml);
    g_autoptr(PpsimSweep) s2 = ppsim_sweep_load_file(set, &error);
    ck_assert_ptr_null(s2);
    ck_assert_msg(g_str_has_prefix(error->message, set) && strstr(error->message, ":2:17: ") &&
                      strstr(error->message, "did you mean 'zb-v'"),
                  "%s", error->message);
}
END_TEST

/* hardware.nodes in `set:` is judged with the point's layout: 8 nodes with dp 4 on an axis
 * loads (the base alone is 4 x 4 x 2 = 32 GPUs), even though the first point (dp 2) does not
 * fill the nodes: that point is an invalid row, not a failed load. */
START_TEST(test_sweep_layout_in_set)
{
    g_autofree char *base = ppsim_test_src_path("scenarios/llama70b_32xh100.yaml");
    g_autofree char *yaml = g_strdup_printf("scenario: %s\nset: {hardware.nodes: 8, schedule: "
                                            "1f1b}\naxes:\n  parallel.dp: [2, 4]\n",
                                            base);
    g_autofree char *path = temp_file("nodes.yaml", yaml);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) s = ppsim_sweep_load_file(path, &error);
    ppsim_assert_no_error(error);
    Run r = ppsim("sweep", path, "-q", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "\n1,4,1f1b,ok,") && strstr(r.out, "\n0,2,,invalid,") &&
                      strstr(r.out, "8 x 8 = 64"),
                  "%s", r.out);
    run_clear(&r);
    /* without an axis to complete it, the base's error stands */
    g_autofree char *bad_yaml = g_strdup_printf(
        "scenario: %s\nset: {hardware.nodes: 8}\naxes:\n  training.chunks: [2]\n", base);
    g_autofree char *bad = temp_file("bad.yaml", bad_yaml);
    g_autoptr(PpsimSweep) s2 = ppsim_sweep_load_file(bad, &error);
    ck_assert_ptr_null(s2);
    ck_assert_msg(strstr(error->message, "8 x 8 = 64") != NULL, "%s", error->message);
}
END_TEST

/* `ppsim merge` of a sharded sweep with a shard missing (or given twice) fails; with every
 * shard it writes the single run's file. */
START_TEST(test_merge_missing_shard)
{
    g_autofree char *base = ppsim_test_src_path("scenarios/zb_table5.yaml");
    g_autofree char *yaml = g_strdup_printf(
        "scenario: %s\naxes:\n  training.microbatches: [8, 16, 24]\n  schedule: [1f1b, zb-h1]\n",
        base);
    g_autofree char *sweep = temp_file("s.yaml", yaml);
    g_autofree char *dir = g_path_get_dirname(sweep);
    char *parts[4];
    for (int k = 1; k <= 3; k++) {
        parts[k] = g_strdup_printf("%s/p%d.csv", dir, k);
        g_autofree char *shard = g_strdup_printf("%d/3", k);
        Run r = ppsim("sweep", sweep, "--shard", shard, "-o", parts[k], "-q", NULL);
        ck_assert_int_eq(r.status, 0);
        run_clear(&r);
    }
    g_autofree char *one = g_strdup_printf("%s/one.csv", dir);
    g_autofree char *all = g_strdup_printf("%s/all.csv", dir);
    Run r = ppsim("sweep", sweep, "-o", one, "-q", NULL);
    run_clear(&r);
    r = ppsim("merge", parts[1], parts[3], "-o", all, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(one_line(r.err) && strstr(r.err, "missing shard 2/3"), "%s", r.err);
    run_clear(&r);
    r = ppsim("merge", parts[1], parts[1], parts[3], "-o", all, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "both shard 1/3") != NULL, "%s", r.err);
    run_clear(&r);
    r = ppsim("merge", parts[1], parts[2], parts[3], "-o", all, NULL);
    ck_assert_int_eq(r.status, 0);
    run_clear(&r);
    g_autofree char *a = file_text(one), *b = file_text(all);
    ck_assert_str_eq(a, b);
    for (int k = 1; k <= 3; k++)
        g_free(parts[k]);
}
END_TEST

/* The y tick labels of a plot: the texts right-aligned left of the frame. */
static GArray *
y_ticks(const char *svg)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(double));
    for (const char *p = svg; (p = strstr(p, "<text text-anchor=\"end\" x=\"74\"")); p++) {
        const char *gt = strchr(p, '>');
        double x = g_ascii_strtod(gt + 1, NULL);
        g_array_append_val(v, x);
    }
    return v;
}

/* Sweep plots: ticks are whole multiples of a 1, 2 or 5 x 10^k step; the makespan axis of
 * rows between 4,000 and 4,500 ms does not start at 0 (it would squash them into a strip),
 * and the front's points are numbered with their configurations. */
START_TEST(test_plot_ticks)
{
    char *names[] = {"training.microbatches", NULL};
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    g_ptr_array_add(rows, row_new(0, "8", 4012, 0, 2.1e9));
    g_ptr_array_add(rows, row_new(1, "16", 4377, 0, 1.3e9));
    g_ptr_array_add(rows, row_new(2, "24", 4460, 0, 3.3e9));
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_sweep_svg_pareto(svg, rows, names, 1, 0);
    g_autoptr(GArray) t = y_ticks(svg->str);
    ck_assert_uint_ge(t->len, 3);
    double step = g_array_index(t, double, 1) - g_array_index(t, double, 0);
    double mag = pow(10, floor(log10(step))), f = step / mag;
    ck_assert_msg(fabs(f - 1) < 1e-9 || fabs(f - 2) < 1e-9 || fabs(f - 5) < 1e-9, "step %g", step);
    for (guint i = 0; i < t->len; i++) {
        double v = g_array_index(t, double, i);
        ck_assert_msg(fabs(v / step - round(v / step)) < 1e-9, "tick %g, step %g", v, step);
    }
    ck_assert(g_array_index(t, double, 0) > 3000 && g_array_index(t, double, 0) <= 4012);
    ck_assert(g_array_index(t, double, t->len - 1) >= 4460);
    /* front: 4012 ms at 2.1 GB, then 4377 at 1.3 GB (4460 at 3.3 GB is dominated) */
    ck_assert(strstr(svg->str, ">1: 1f1b m=8</text>") != NULL);
    ck_assert(strstr(svg->str, ">2: 1f1b m=16</text>") != NULL);
    ck_assert(strstr(svg->str, ">3: ") == NULL);
}
END_TEST

/* The memory panel fits its scale to the data: the A100 run's 80 GiB limit is far above
 * 1F1B's peaks, so the scale ends at the largest peak and starts at the static memory. */
START_TEST(test_memory_panel_scale)
{
    const char *sets[] = {"schedule=1f1b", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", sets);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    const PpsimRunResult *r = g_ptr_array_index(results, 0);
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_report_svg(svg, r, NULL);
    ck_assert_msg(strstr(svg->str, "; limit 80.0 GiB, above the scale)") != NULL, "%.300s",
                  strstr(svg->str, "memory per device"));
    ck_assert(strstr(svg->str, "scale 0 B") == NULL && strstr(svg->str, "scale 0.0") == NULL);
    g_autofree char *top =
        g_strdup_printf(" to %.1f GiB", (double)ppsim_run_result_max_peak_memory(r) / 1073741824.0);
    ck_assert_msg(strstr(svg->str, top) != NULL, "%s", top);
}
END_TEST

/* A run above 100,000 ops writes no trace unless --full-traces, and says so. */
START_TEST(test_large_run_artifacts)
{
    g_autofree char *scenario = ppsim_test_src_path("scenarios/zb_table5.yaml");
    g_autofree char *dir = g_dir_make_tmp("ppsim-big-XXXXXX", NULL);
    g_autofree char *trace = g_build_filename(dir, "1f1b.trace.json", NULL);
    g_autofree char *svgf = g_build_filename(dir, "1f1b.svg", NULL);
    Run r = ppsim("run", scenario, "--schedule", "1f1b", "--set", "training.pp=32", "--set",
                  "training.microbatches=1600", "-o", dir, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "'1f1b' has 102400 ops: no Perfetto trace") != NULL, "%s", r.err);
    ck_assert(!g_file_test(trace, G_FILE_TEST_EXISTS) && g_file_test(svgf, G_FILE_TEST_EXISTS));
    run_clear(&r);
    r = ppsim("run", scenario, "--schedule", "1f1b", "--set", "training.pp=32", "--set",
              "training.microbatches=1600", "-o", dir, "--full-traces", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.err, "no Perfetto trace") == NULL);
    ck_assert(g_file_test(trace, G_FILE_TEST_EXISTS));
    run_clear(&r);
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    ck_assert(g_spawn_command_line_sync(rm, NULL, NULL, NULL, NULL));
}
END_TEST

/* Smaller things: an out-of-memory run says what to try; '1F1B' is 1f1b and 'zbv' suggests
 * zb-v; a missing file is one line; validate's approximate rows say why; plan without
 * --schedule names the schedule it planned; the main job replays every family. */
START_TEST(test_small_things)
{
    const char *sets[] = {"schedule=[gpipe, 1f1b]", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", sets);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, 0, &error);
    ppsim_assert_no_error(error);
    g_autoptr(GPtrArray) warnings = ppsim_sim_warnings(sc, results);
    guint advice = 0;
    for (guint i = 0; i < warnings->len; i++) {
        const char *w = g_ptr_array_index(warnings, i);
        if (strstr(w, "out of memory") == NULL)
            continue;
        advice++;
        const PpsimRunResult *gpipe = g_ptr_array_index(results, 0);
        g_autofree char *head = g_strdup_printf(
            "schedule 'gpipe': devices 0,1,2,3,4,5,6,7 out of memory (device 7: peak %.1f GiB "
            "over the limit 80.0 GiB",
            (double)gpipe->devices[7].peak_memory / 1073741824.0);
        ck_assert_msg(g_str_has_prefix(w, head) && strstr(w, "try recompute") &&
                          strstr(w, "ppsim search"),
                      "%s", w);
    }
    ck_assert_uint_eq(advice, 1); /* gpipe only: 1f1b fits */

    g_autofree char *main_job = ppsim_test_src_path("scenarios/a100_8gpu.yaml");
    Run r = ppsim("run", main_job, "--schedule", "1F1B", "--no-artifacts", NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "\n1f1b "), "%s", r.err);
    run_clear(&r);
    r = ppsim("run", main_job, "--schedule", "zbv", "--no-artifacts", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "ppsim: error: --schedule: unknown schedule 'zbv' (did you mean "
                            "'zb-v'?)\n");
    run_clear(&r);
    const char *missing[][3] = {{"run", "/nonexistent/x.yaml", NULL},
                                {"sweep", "/nonexistent/x.yaml", NULL},
                                {"search", "/nonexistent/x.yaml", "--gpus=8"},
                                {"plan", "/nonexistent/x.yaml", NULL}};
    for (guint i = 0; i < G_N_ELEMENTS(missing); i++) {
        r = ppsim(missing[i][0], missing[i][1], missing[i][2], NULL);
        ck_assert_int_eq(r.status, 1);
        ck_assert_msg(one_line(r.err) && strstr(r.err, "/nonexistent/x.yaml") &&
                          strstr(r.err, "No such file"),
                      "%s: %s", missing[i][0], r.err);
        run_clear(&r);
    }
    r = ppsim("validate", "--schedule", "zb-h1", "--grid", "p=2", "--grid", "m=1", NULL);
    ck_assert_msg(strstr(r.out, "approx: exact only when uniform stages, p2p = 0, m >= p") != NULL,
                  "%s", r.out);
    run_clear(&r);
    g_autofree char *plan = ppsim_test_src_path("scenarios/plan/gpt-30l-a100-pp8.yaml");
    r = ppsim("plan", plan, "--no-replay", "--heuristic", NULL);
    ck_assert_msg(r.status == 0 && strstr(r.err, "ppsim: note: planned for '1f1b'"), "%s", r.err);
    run_clear(&r);
    /* the main job: every family, each replayed */
    g_autoptr(PpsimScenario) all = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", NULL);
    const char *families[] = {"1f1b", "zb-v", "po-h", "tpipe", "adaoffload", "optpipe"};
    for (guint f = 0; f < G_N_ELEMENTS(families); f++) {
        gboolean found = FALSE;
        for (guint i = 0; i < all->schedules->len; i++) {
            const PpsimScheduleSpec *spec = g_ptr_array_index(all->schedules, i);
            found |= strcmp(spec->name, families[f]) == 0;
            if (strcmp(spec->name, "tpipe") == 0) {
                gboolean trecomp = FALSE;
                for (guint k = 0; k < spec->options->len; k++)
                    trecomp |= strcmp(g_array_index(spec->options, PpsimOptionValue, k).value,
                                      "t-recomp") == 0;
                ck_assert(trecomp);
            }
        }
        ck_assert_msg(found, "the main job has no %s", families[f]);
    }
    g_autoptr(GPtrArray) every = ppsim_sim_run_all(all, 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_eq(every->len, all->schedules->len);
}
END_TEST

/* --plan: each of the top layouts gets the planner's split (pp stages summing to the 32
 * layers) and its replayed tokens/s. */
START_TEST(test_search_plan)
{
    g_autofree char *scenario = ppsim_test_src_path("scenarios/a100_8gpu.yaml");
    Run r = ppsim("search", scenario, "--gpus", "8", "--schedules", "1f1b,zb-h1", "--top", "3",
                  "--plan", "--format", "json", "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonArray *layouts =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "layouts");
    for (guint i = 0; i < json_array_get_length(layouts); i++) {
        JsonObject *l = json_array_get_object_element(layouts, i);
        ck_assert_int_eq(json_object_has_member(l, "planned"), i < 3);
        if (i >= 3)
            continue;
        JsonObject *p = json_object_get_object_member(l, "planned");
        ck_assert_msg(json_object_has_member(p, "stages"), "layout %u: %s", i,
                      json_object_has_member(p, "error") ? json_object_get_string_member(p, "error")
                                                         : "");
        ck_assert(json_object_get_double_member(p, "tokens_per_s") > 0);
        g_auto(GStrv) st = g_strsplit_set(json_object_get_string_member(p, "stages"), "[ ]", -1);
        int sum = 0, n = 0;
        for (char **x = st; *x; x++)
            if (**x) {
                sum += atoi(*x);
                n++;
            }
        ck_assert_int_eq(sum, 32);
        ck_assert_int_eq(n, (int)json_object_get_int_member(l, "pp"));
    }
    run_clear(&r);
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
    tc = tcase_create("search");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_search_layouts);
    tcase_add_test(tc, test_search_cp_ep);
    tcase_add_test(tc, test_search_moe_recompute);
    tcase_add_test(tc, test_search_mla_recompute);
    tcase_add_test(tc, test_search_ladder_keeps_param_gather);
    tcase_add_test(tc, test_search_drops_stage_lists);
    tcase_add_test(tc, test_search_errors);
    tcase_add_test(tc, test_search_resume_after_kills);
    tcase_add_test(tc, test_search_plan);
    suite_add_tcase(s, tc);
    tc = tcase_create("sweep-fixes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sweep_schedule_typo);
    tcase_add_test(tc, test_sweep_layout_in_set);
    tcase_add_test(tc, test_merge_missing_shard);
    suite_add_tcase(s, tc);
    tc = tcase_create("plots");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_plot_ticks);
    tcase_add_test(tc, test_memory_panel_scale);
    tcase_add_test(tc, test_large_run_artifacts);
    suite_add_tcase(s, tc);
    tc = tcase_create("small-things");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_small_things);
    suite_add_tcase(s, tc);
    return s;
}
