/* check-memory.c: the framework's memory in hardware mode (src/cost/memory.c, src/README.md "How
 * memory is modelled"): each component's formula, a breakdown computed by hand for a small
 * model, the verdict flipping at the capacity boundary, the fits/tight/oom band by hand, the
 * generators' budget, explicit mode untouched, the bad-input errors of the new keys, and context
 * parallelism sharding gradients and optimizer states with dp. */
#include "ppsim-test.h"
#include "cost/memory.h"
#include "sim/sim.h"
#include "report/report.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include <math.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static PpsimScenario *
parse(const char *yaml, const char *const *overrides, GError **error)
{
    return ppsim_scenario_parse(yaml, strlen(yaml), "m.yaml", NULL, overrides, error);
}

/* A GPT layer stack of 4 layers (h = s = 1024, V = 32000) on 2 devices, 1F1B, m = 2. */
static const char *small_yaml = "name: small\n"
                                "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, "
                                "vocab: 32000}\n"
                                "training: {pp: 2, microbatches: 2}\n"
                                "schedule: 1f1b\n";

static PpsimRunResult *
run_small(const char *const *overrides)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(small_yaml, overrides, &error);
    ppsim_assert_no_error(error);
    PpsimRunResult *res = ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
    ppsim_assert_no_error(error);
    return res;
}

/* Model states: 2 + 4 + 12 bytes a parameter with fp32 main gradients ([MEGDO]'s 18),
 * 2 + 2 + 12 with bf16 ([ZERO]'s 16), sharded by ZeRO stage over dp ([ZERO] §5); a written
 * bytes_per_param is the total. */
START_TEST(test_model_states)
{
    PpsimTraining tr = {.bytes_per_param = 18, .main_grads = PPSIM_MAIN_GRADS_FP32};
    PpsimModelStateBytes b;
    ck_assert_double_eq(ppsim_mem_grad_bytes_per_param(&tr), 4);
    ppsim_mem_model_state(1000, &tr, 0, 8, &b);
    ck_assert_double_eq(b.weights, 2000);
    ck_assert_double_eq(b.gradients, 4000);
    ck_assert_double_eq(b.optimizer, 12000);
    ppsim_mem_model_state(1000, &tr, 1, 8, &b); /* distributed optimizer: 6 + 12/d */
    ck_assert_double_eq(b.weights + b.gradients + b.optimizer, 1000 * (6 + 12.0 / 8));
    ppsim_mem_model_state(1000, &tr, 2, 8, &b);
    ck_assert_double_eq(b.weights + b.gradients + b.optimizer, 1000 * (2 + 16.0 / 8));
    ppsim_mem_model_state(1000, &tr, 3, 8, &b);
    ck_assert_double_eq(b.weights + b.gradients + b.optimizer, 1000 * 18.0 / 8);
    tr = (PpsimTraining){.bytes_per_param = 16, .main_grads = PPSIM_MAIN_GRADS_BF16};
    ppsim_mem_model_state(1000, &tr, 0, 1, &b);
    ck_assert_double_eq(b.gradients, 2000);
    ck_assert_double_eq(b.optimizer, 12000);
    tr.bytes_per_param = 3; /* a written total smaller than weights + gradients */
    ppsim_mem_model_state(1000, &tr, 0, 1, &b);
    ck_assert_double_eq(b.weights, 2000);
    ck_assert_double_eq(b.gradients, 1000);
    ck_assert_double_eq(b.optimizer, 0);

    /* the scenario's defaults follow main_grads unless bytes_per_param is written */
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) a = parse(small_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(a->training.bytes_per_param, 18);
    const char *const bf16[] = {"training.main_grads=bf16", NULL};
    g_autoptr(PpsimScenario) c = parse(small_yaml, bf16, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(c->training.bytes_per_param, 16);
    const char *const both[] = {"training.main_grads=bf16", "training.bytes_per_param=20", NULL};
    g_autoptr(PpsimScenario) d = parse(small_yaml, both, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(d->training.bytes_per_param, 20);
}
END_TEST

/* Logits 4sbV/t kept ([KOR] §4.3) and their bf16 gradient 2sbV/t, NCCL per group (544 MiB
 * for 2 ranks, 688 MiB for more, [NCCL964]), and the total / allocatable pair: allocatable
 * is the largest allocation whose total fits, exactly. */
START_TEST(test_components)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(small_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(ppsim_mem_logits_kept_bytes(sc), 4.0 * 1024 * 1 * 32000);
    ck_assert_double_eq(ppsim_mem_logits_grad_bytes(sc), 2.0 * 1024 * 1 * 32000);
    ck_assert_double_eq(ppsim_mem_nccl_bytes(sc), 544 * MIB);
    ck_assert_int_eq(ppsim_mem_fixed_bytes(sc), (gint64)(821 * MIB + 544 * MIB));
    const char *yaml3d = "hardware: {preset: dgx-h100-80gb, nodes: 4}\n"
                         "model: {preset: llama3-8b, seq_len: 2048}\n"
                         "parallel: {tp: 4, pp: 4, dp: 2}\n"
                         "training: {microbatches: 8, microbatch_size: 2}\n";
    g_autoptr(PpsimScenario) p3 = parse(yaml3d, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(ppsim_mem_logits_kept_bytes(p3), 4.0 * 2048 * 2 * p3->model.vocab / 4);
    ck_assert_double_eq(ppsim_mem_nccl_bytes(p3), 688 * MIB + 688 * MIB + 544 * MIB);

    ck_assert_int_eq(ppsim_mem_total(1000, 7, 0.1), 1000 + 100 + 7);
    ck_assert_int_eq(ppsim_mem_allocatable(0, 7, 0.1), 0); /* no limit */
    ck_assert_int_eq(ppsim_mem_allocatable(5, 7, 0.1), 1); /* the fixed part alone exceeds */
    GRand *rng = g_rand_new_with_seed(25);
    for (int i = 0; i < 1000; i++) {
        gint64 limit =
            g_rand_int_range(rng, 1, 1 << 30) * (gint64)64 + g_rand_int_range(rng, 0, 64);
        gint64 fixed = g_rand_int_range(rng, 0, 1 << 20);
        double f = g_rand_double_range(rng, 0, 1);
        gint64 a = ppsim_mem_allocatable(limit, fixed, f);
        if (fixed >= limit)
            continue;
        ck_assert_int_le(ppsim_mem_total(a, fixed, f), limit);
        ck_assert_int_gt(ppsim_mem_total(a + 1, fixed, f), limit);
    }
    g_rand_free(rng);
}
END_TEST

/* The small model by hand. Parameters: a layer 12h^2 + 13h = 12,596,224; stage 0 adds the
 * token and position embeddings (V h + s h), stage 1 the LM head and final norm (V h + 2h).
 * Activations per layer 34 sbh (FlashAttention); stage 0 adds the embedding's dropout mask
 * (sbh), stage 1 the fp32 logits 4 sbV and the final norm's input 2 sbh. 1F1B with p = 2,
 * m = 2: device 0 holds both microbatches at F1; device 1 peaks inside B0, holding one
 * microbatch and the logits' gradient, cast to bf16 (2 sbV). Fixed: 821 MiB reserved + 544 MiB of
 * NCCL (the pipeline pair); fragmentation 2% of the allocated peak. */
START_TEST(test_breakdown_by_hand)
{
    g_autoptr(PpsimRunResult) res = run_small(NULL);
    double h = 1024, s = 1024, V = 32000, layer = 12 * h * h + 13 * h, sbh = s * h;
    double params[2] = {2 * layer + V * h + s * h, 2 * layer + V * h + 2 * h};
    ck_assert_double_eq(params[0], 59009024);
    ck_assert_double_eq(params[1], 57962496);
    double act[2] = {2 * (2 * 34 * sbh + sbh), 2 * 34 * sbh + 2 * sbh};
    double logits[2] = {0, (4 + 2) * s * V}; /* the logits and their gradient */
    gint64 reserved = (gint64)(821 * MIB), nccl = (gint64)(544 * MIB);
    const gint64 peak_by_hand[2] = {2662309478, 2770906153};
    for (int d = 0; d < 2; d++) {
        const PpsimDeviceResult *dev = &res->devices[d];
        ck_assert(dev->has_breakdown);
        ck_assert_int_eq(dev->mem_weights, (gint64)(2 * params[d]));
        ck_assert_int_eq(dev->mem_gradients, (gint64)(4 * params[d]));
        ck_assert_int_eq(dev->mem_optimizer, (gint64)(12 * params[d]));
        ck_assert_int_eq(dev->mem_activations, (gint64)act[d]);
        ck_assert_int_eq(dev->mem_logits, (gint64)logits[d]);
        ck_assert_int_eq(dev->mem_buffers, nccl);
        double allocated = 18 * params[d] + act[d] + logits[d];
        gint64 frag = (gint64)llround(0.02 * allocated);
        ck_assert_int_eq(dev->mem_overheads, reserved + frag);
        ck_assert_int_eq(dev->peak_memory, (gint64)allocated + frag + reserved + nccl);
        ck_assert_int_eq(dev->peak_memory, peak_by_hand[d]);
        ck_assert_int_eq(dev->mem_weights + dev->mem_gradients + dev->mem_optimizer +
                             dev->mem_activations + dev->mem_logits + dev->mem_buffers +
                             dev->mem_overheads,
                         dev->peak_memory);
        ck_assert_int_eq(dev->mem_free, (gint64)80 * 1024 * 1024 * 1024 - dev->peak_memory);
        /* peak_activation stays the schedule's activations: the logits' gradient is not one */
        ck_assert_int_eq(dev->peak_activation, (gint64)(d == 0 ? act[0] : act[1] + 4 * s * V));
    }
}
END_TEST

/* Fitting is peak_memory <= memory.limit, exactly: a limit of the peak fits, one byte less
 * does not (tight: not out of memory, but not fitting for plan, sweeps and search); and the
 * generators' cap is the same budget (zb under that limit fits, and its allocator share is what
 * ppsim_mem_allocatable gives). */
START_TEST(test_verdict_boundary)
{
    g_autoptr(PpsimRunResult) base = run_small(NULL);
    gint64 peak = ppsim_run_result_max_peak_memory(base);
    g_autofree char *at = g_strdup_printf("memory.limit=%" G_GINT64_FORMAT "B", peak);
    g_autofree char *below = g_strdup_printf("memory.limit=%" G_GINT64_FORMAT "B", peak - 1);
    const char *const fit[] = {at, NULL}, *const over[] = {below, NULL};
    g_autoptr(PpsimRunResult) a = run_small(fit);
    g_autoptr(PpsimRunResult) b = run_small(over);
    ck_assert(!ppsim_run_result_any_oom(a));
    ck_assert(ppsim_run_result_fits(a));
    ck_assert(!ppsim_run_result_fits(b));
    ck_assert_int_eq(ppsim_run_result_verdict(b), PPSIM_MEM_TIGHT);
    ck_assert(!ppsim_run_result_any_oom(b));
    ck_assert_int_eq(ppsim_run_result_max_peak_memory(b), peak);
    ck_assert_int_eq(b->devices[1].mem_free, -1);

    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(small_yaml, fit, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 2, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(c->memory_limit, peak);
    ck_assert_int_eq(c->estimates.memory_limit,
                     ppsim_mem_allocatable(peak, c->memory_fixed, c->memory_fragmentation));
    ck_assert_int_eq(c->estimates.memory_limit_gpu, peak);
    /* the loss's stage carries its transient in the generators' static memory */
    ck_assert_int_eq(c->estimates.stage[1].static_mem,
                     c->stage[1].static_mem + c->stage[1].logits_grad_mem);
    g_autoptr(PpsimScheduleSpec) zb = ppsim_schedule_spec_new("zb");
    g_autoptr(PpsimRunResult) z = ppsim_sim_run_spec(sc, zb, 0, &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_run_result_any_oom(z));
}
END_TEST

/* The verdict of a peak against a limit, by hand: fits up to the peak with every overhead at
 * its default, tight down to the peak with none of the allocator's fragmentation, out of
 * memory below; no limit always fits. */
START_TEST(test_verdict_function)
{
    ck_assert_int_eq(ppsim_mem_verdict(100, 90, 0), PPSIM_MEM_FITS);
    ck_assert_int_eq(ppsim_mem_verdict(100, 90, 100), PPSIM_MEM_FITS);
    ck_assert_int_eq(ppsim_mem_verdict(100, 90, 99), PPSIM_MEM_TIGHT);
    ck_assert_int_eq(ppsim_mem_verdict(100, 90, 90), PPSIM_MEM_TIGHT);
    ck_assert_int_eq(ppsim_mem_verdict(100, 90, 89), PPSIM_MEM_OOM);
    ck_assert_int_eq(ppsim_mem_verdict(100, 100, 99), PPSIM_MEM_OOM); /* no band */
    ck_assert_str_eq(ppsim_mem_verdict_name(PPSIM_MEM_FITS), "fits");
    ck_assert_str_eq(ppsim_mem_verdict_name(PPSIM_MEM_TIGHT), "tight");
    ck_assert_str_eq(ppsim_mem_verdict_name(PPSIM_MEM_OOM), "oom");
}
END_TEST

/* The band of the small model's device 1, by hand (test_breakdown_by_hand's terms): its low
 * end is the allocation plus memory.reserved and NCCL's pair buffer, 2 + 4 + 12 bytes of
 * 57,962,496 parameters, 2·34sbh + 2sbh of activations and 4sV + 2sV of logits; the default
 * peak adds 2% of the allocation. Limits between them are tight, one byte below is oom;
 * with memory.fragmentation 0 the band is empty. */
START_TEST(test_verdict_band_by_hand)
{
    double h = 1024, s = 1024, V = 32000, sbh = s * h;
    double allocated = 18 * 57962496.0 + (2 * 34 * sbh + 2 * sbh) + (4 + 2) * s * V;
    gint64 low = (gint64)allocated + (gint64)(821 * MIB) + (gint64)(544 * MIB);
    gint64 peak = low + (gint64)llround(0.02 * allocated);
    ck_assert_int_eq(peak, 2770906153); /* test_breakdown_by_hand's device 1 */
    struct {
        gint64 limit;
        PpsimMemVerdict v;
    } cases[] = {{peak, PPSIM_MEM_FITS},
                 {peak - 1, PPSIM_MEM_TIGHT},
                 {low, PPSIM_MEM_TIGHT},
                 {low - 1, PPSIM_MEM_OOM}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *lim =
            g_strdup_printf("memory.limit=%" G_GINT64_FORMAT "B", cases[i].limit);
        const char *const ovr[] = {lim, NULL};
        g_autoptr(PpsimRunResult) res = run_small(ovr);
        const PpsimDeviceResult *dev = &res->devices[1];
        ck_assert_int_eq(dev->peak_memory, peak);
        ck_assert_int_eq(dev->peak_memory_low, low);
        ck_assert_int_eq(dev->memory_verdict, cases[i].v);
        ck_assert(dev->oom == (cases[i].v == PPSIM_MEM_OOM));
        ck_assert(dev->over_budget == (cases[i].v != PPSIM_MEM_FITS));
        ck_assert_int_eq(ppsim_run_result_verdict(res), cases[i].v);
        ck_assert(ppsim_run_result_fits(res) == (cases[i].v == PPSIM_MEM_FITS));
    }
    g_autofree char *lim = g_strdup_printf("memory.limit=%" G_GINT64_FORMAT "B", low);
    const char *const nofrag[] = {lim, "memory.fragmentation=0", NULL};
    g_autoptr(PpsimRunResult) res = run_small(nofrag);
    ck_assert_int_eq(res->devices[1].peak_memory, low);
    ck_assert_int_eq(res->devices[1].memory_verdict, PPSIM_MEM_FITS);
}
END_TEST

/* The small model's device 1 band (test_verdict_band_by_hand): the peak with fragmentation
 * 0.02 and without. */
static const gint64 band_peak = 2770906153;
static gint64
band_low(void)
{
    double sbh = 1024.0 * 1024.0;
    double allocated = 18 * 57962496.0 + (2 * 34 * sbh + 2 * sbh) + 6 * 1024.0 * 32000.0;
    return (gint64)allocated + (gint64)(821 * MIB) + (gint64)(544 * MIB);
}

/* JSON: a limit inside device 1's band gives it memory_verdict "tight", peak_memory_low, and
 * oom false (oom is the oom verdict only), the result's memory_verdict "tight"; one byte
 * below the low end gives "oom" and oom true. */
START_TEST(test_verdict_json)
{
    const gint64 limits[] = {band_peak - 1, band_low() - 1};
    const char *const want[] = {"tight", "oom"};
    for (int i = 0; i < 2; i++) {
        g_autofree char *lim = g_strdup_printf("memory.limit=%" G_GINT64_FORMAT "B", limits[i]);
        const char *const ovr[] = {lim, NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = parse(small_yaml, ovr, &error);
        ppsim_assert_no_error(error);
        PpsimRunResult *res =
            ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
        ppsim_assert_no_error(error);
        g_autoptr(GPtrArray) results =
            g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_run_result_free);
        g_ptr_array_add(results, res);
        g_autoptr(GString) out = g_string_new(NULL);
        ppsim_report_json(out, sc, results);
        g_autoptr(JsonParser) parser = json_parser_new();
        ck_assert(json_parser_load_from_data(parser, out->str, out->len, &error));
        JsonObject *r = json_array_get_object_element(
            json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)),
                                         "results"),
            0);
        ck_assert_str_eq(json_object_get_string_member(r, "memory_verdict"), want[i]);
        JsonArray *devs = json_object_get_array_member(r, "devices");
        JsonObject *d0 = json_array_get_object_element(devs, 0);
        JsonObject *d1 = json_array_get_object_element(devs, 1);
        ck_assert_str_eq(json_object_get_string_member(d0, "memory_verdict"), "fits");
        ck_assert_str_eq(json_object_get_string_member(d1, "memory_verdict"), want[i]);
        ck_assert(json_object_get_boolean_member(d1, "oom") == (i == 1));
        ck_assert(!json_object_get_boolean_member(d0, "oom"));
        ck_assert_int_eq(json_object_get_int_member(d1, "peak_memory_low"), band_low());
        ck_assert_int_eq(json_object_get_int_member(d1, "peak_memory"), band_peak);
    }
}
END_TEST

/* Sweeps pack against the whole budget: a tight point's `oom` column is true (and its row
 * does not count as fitting), its memory_verdict column says tight. */
START_TEST(test_verdict_sweep)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-mem-XXXXXX", NULL);
    g_autofree char *scen = g_build_filename(dir, "small.yaml", NULL);
    g_autofree char *sweep = g_build_filename(dir, "s.yaml", NULL);
    ck_assert(g_file_set_contents(scen, small_yaml, -1, NULL));
    g_autofree char *text = g_strdup_printf(
        "scenario: small.yaml\naxes: {memory.limit: [%" G_GINT64_FORMAT "B, %" G_GINT64_FORMAT
        "B, %" G_GINT64_FORMAT "B]}\ncolumns: [peak_memory, oom, memory_verdict]\n",
        band_peak, band_peak - 1, band_low() - 1);
    ck_assert(g_file_set_contents(sweep, text, -1, NULL));
    const char *const args[] = {"sweep", sweep, "--quiet", NULL};
    PpsimTestExec r = ppsim_test_exec(NULL, args);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, ",2770906153,false,fits,\n") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, ",2770906153,true,tight,\n") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, ",2770906153,true,oom,\n") != NULL, "%s", r.out);
    ppsim_test_exec_clear(&r);
    g_unlink(scen);
    g_unlink(sweep);
    g_rmdir(dir);
}
END_TEST

/* `ppsim plan` never packs into the band: with the limit at device 1's default peak the
 * run's own split (2, 2) plans; one byte less it would be tight, so whatever the plan is
 * (another split, recompute), it must fit with every overhead at its default. */
START_TEST(test_verdict_plan)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-mem-XXXXXX", NULL);
    g_autofree char *scen = g_build_filename(dir, "small.yaml", NULL);
    ck_assert(g_file_set_contents(scen, small_yaml, -1, NULL));
    for (int i = 0; i < 2; i++) {
        gint64 limit = band_peak - i;
        g_autofree char *lim = g_strdup_printf("memory.limit=%" G_GINT64_FORMAT "B", limit);
        const char *const args[] = {"plan", scen, "--set", lim, "--format", "json", NULL};
        PpsimTestExec r = ppsim_test_exec(NULL, args);
        if (r.status != 0) {
            /* refusing is fine one byte under, never at the run's own peak */
            ck_assert_msg(i == 1 && strstr(r.err, "no plan") != NULL, "%d %s", r.status, r.err);
            ppsim_test_exec_clear(&r);
            continue;
        }
        const char *plan = strstr(r.out, "\"plan\":{");
        ck_assert_msg(plan != NULL, "%s", r.out);
        const char *end = strstr(plan, "\"baselines\"");
        g_autofree char *obj = g_strndup(plan, end ? (gsize)(end - plan) : strlen(plan));
        ck_assert_msg(strstr(obj, "\"memory_verdict\":\"fits\"") != NULL, "%s", obj);
        const char *peak = strstr(obj, "\"peak_memory\":");
        ck_assert(peak != NULL);
        ck_assert_int_le(g_ascii_strtoll(peak + strlen("\"peak_memory\":"), NULL, 10), limit);
        if (i == 1) /* the run's own split is tight there */
            ck_assert_msg(strstr(obj, "\"stage_layers\":[2,2]") == NULL, "%s", obj);
        ppsim_test_exec_clear(&r);
    }
    g_unlink(scen);
    g_rmdir(dir);
}
END_TEST

/* Generators with a memory cap pack to the budget the verdict uses: under memory.limit 36
 * and 38 GiB on the A100 scenario, zb, zb-v and adaoffload fill the limit to within 3 GiB
 * and never run out (a cap of memory.limit less the model states alone would overpack by the
 * ~2.2 GiB of NCCL, context and fragmentation). */
START_TEST(test_generators_use_the_verdict)
{
    static const char *const limits[] = {"memory.limit=36GiB", "memory.limit=38GiB"};
    static const char *const gens[] = {"zb", "zb-v", "adaoffload"};
    for (guint i = 0; i < G_N_ELEMENTS(limits); i++) {
        const char *const ovr[] = {limits[i], "training.chunks=2", NULL};
        g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", ovr);
        for (guint g = 0; g < G_N_ELEMENTS(gens); g++) {
            g_autoptr(GError) error = NULL;
            g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new(gens[g]);
            g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, spec, 0, &error);
            ppsim_assert_no_error(error);
            gint64 peak = ppsim_run_result_max_peak_memory(res);
            ck_assert_msg(ppsim_run_result_fits(res), "%s under %s: %.2f GiB", gens[g], limits[i],
                          peak / 1073741824.0);
            ck_assert_int_gt(peak, (gint64)sc->memory_limit_bytes - ((gint64)3 << 30));
        }
    }
}
END_TEST

/* Explicit-cost mode counts none of it: no breakdown, no fixed part, the limit as given. */
START_TEST(test_explicit_untouched)
{
    const char *yaml = "training: {pp: 4, microbatches: 8}\n"
                       "schedule: 1f1b\n"
                       "costs: {forward: 1, backward_input: 1, backward_weight: 1}\n"
                       "memory: {limit: 3}\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(c->memory_fixed, 0);
    ck_assert_int_eq(c->estimates.memory_limit, c->memory_limit);
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
    ppsim_assert_no_error(error);
    ck_assert(!res->devices[0].has_breakdown);
    ck_assert_int_eq(res->devices[0].peak_memory, 4 * PPSIM_EXPLICIT_MEM_SCALE);
    ck_assert(res->devices[0].oom && !res->devices[1].oom);
}
END_TEST

/* FP8 with 16-bit weights (training.fp8_weights unset): Transformer Engine keeps each linear
 * layer's weight in FP8 and its transpose, 2 more bytes a weight; the embedding and the LM
 * head (V x h / tp on the first and last stage) stay 16-bit. With training.fp8_weights the
 * weights cost what bf16 weights cost; under ZeRO-3 the copies cover the two whole units it
 * holds. fp8_weights without training.dtype: fp8 is an error naming the key. */
START_TEST(test_fp8_weight_copies)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {preset: llama3-8b, seq_len: 4096}\n"
                       "parallel: {tp: 2, dp: 2, zero: 1}\n"
                       "training: {microbatches: 4, pp: 2, dtype: fp8}\n"
                       "schedule: 1f1b\n";
    const char *const own[] = {"training.fp8_weights=true", NULL};
    const char *const bf[] = {"training.dtype=bf16", NULL};
    const char *const z3[] = {"parallel.zero=3", NULL};
    const char *const z3own[] = {"parallel.zero=3", "training.fp8_weights=true", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) a = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) b = parse(yaml, own, &error);
    g_autoptr(PpsimScenario) c = parse(yaml, bf, &error);
    g_autoptr(PpsimScenario) d = parse(yaml, z3, &error);
    g_autoptr(PpsimScenario) e = parse(yaml, z3own, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) ca = ppsim_costs_new(a, 2, &error);
    g_autoptr(PpsimCosts) cb = ppsim_costs_new(b, 2, &error);
    g_autoptr(PpsimCosts) cc = ppsim_costs_new(c, 2, &error);
    g_autoptr(PpsimCosts) cd = ppsim_costs_new(d, 2, &error);
    g_autoptr(PpsimCosts) ce = ppsim_costs_new(e, 2, &error);
    ppsim_assert_no_error(error);
    double ends = 128256.0 * 4096 / 2; /* the embedding or the head over tp 2 */
    for (int s = 0; s < 2; s++) {
        const PpsimStageCost *x = &ca->stage[s], *y = &cb->stage[s], *z = &cc->stage[s];
        ck_assert_double_eq(y->weights_mem, z->weights_mem);
        ck_assert_double_eq_tol(x->weights_mem - y->weights_mem, 2.0 * (x->params - ends), 1e-3);
        ck_assert_int_gt(x->static_mem, y->static_mem);
        ck_assert_double_eq_tol(cd->stage[s].weights_mem - ce->stage[s].weights_mem,
                                2.0 * 2.0 * cd->stage[s].unit_params, 1e-3);
    }
    const char *const late[] = {"training.dtype=bf16", "training.fp8_weights=true", NULL};
    g_autoptr(GError) bad = NULL;
    g_autoptr(PpsimScenario) none = parse(yaml, late, &bad);
    ck_assert_ptr_null(none);
    ck_assert_ptr_nonnull(bad);
    ck_assert_ptr_nonnull(strstr(bad->message, "training.fp8_weights"));
    ck_assert_ptr_nonnull(strstr(bad->message, "training.dtype: fp8"));
}
END_TEST

/* Context parallelism shards like data parallelism: Megatron's gradient buffers and
 * distributed optimizer live on the dp x cp group ([MEG] `intra_dp_cp_group`), so tp 2,
 * cp 2, dp 2 holds per GPU exactly the model states of tp 2, cp 1, dp 4 (the same
 * parameters per GPU, the same four shards), for every ZeRO stage; and by hand, ZeRO-2 keeps
 * 2 + 16/4 bytes a parameter. NCCL counts the context ring's group and the gradients'
 * dp x cp group: pipeline pair 544 + tensor pair 544 + context pair 544 + dp x cp of four
 * 688 MiB. */
START_TEST(test_context_parallel_shards)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 4096}\n"
                       "training: {microbatches: 4}\n"
                       "schedule: 1f1b\n";
    static const char *const zeros[] = {"parallel.zero=0", "parallel.zero=1", "parallel.zero=2",
                                        "parallel.zero=3"};
    for (guint z = 0; z < G_N_ELEMENTS(zeros); z++) {
        g_autoptr(GError) error = NULL;
        const char *const cp[] = {"parallel.tp=2", "parallel.cp=2", "parallel.dp=2",
                                  "training.pp=2", zeros[z],        NULL};
        const char *const dp[] = {"parallel.tp=2", "parallel.cp=1", "parallel.dp=4",
                                  "training.pp=2", zeros[z],        NULL};
        g_autoptr(PpsimScenario) a = parse(yaml, cp, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimScenario) b = parse(yaml, dp, &error);
        ppsim_assert_no_error(error);
        ck_assert_int_eq(ppsim_mem_shard_ranks(a), 4);
        ck_assert_int_eq(ppsim_mem_shard_ranks(b), 4);
        g_autoptr(PpsimCosts) ca = ppsim_costs_new(a, 2, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimCosts) cb = ppsim_costs_new(b, 2, &error);
        ppsim_assert_no_error(error);
        for (int s = 0; s < 2; s++) {
            const PpsimStageCost *x = &ca->stage[s], *y = &cb->stage[s];
            ck_assert_double_eq(x->params, y->params);
            ck_assert_double_eq(x->weights_mem, y->weights_mem);
            ck_assert_double_eq(x->grads_mem, y->grads_mem);
            ck_assert_double_eq(x->opt_mem, y->opt_mem);
            ck_assert_int_eq(x->static_mem, y->static_mem);
            if (z == 2) {
                ck_assert_double_eq_tol(x->weights_mem + x->grads_mem + x->opt_mem,
                                        x->params * (2 + 16.0 / 4), 1e-3);
                ck_assert_double_eq_tol(x->grads_mem, x->params * 4 / 4, 1e-3);
            }
            if (z == 0) /* nothing sharded: cp does not divide the model states */
                ck_assert_double_eq_tol(x->opt_mem, x->params * 12, 1e-3);
            if (z == 3) {
                /* ZeRO-3 also holds two gathered units whole (the one computing, the one
                 * prefetched), 2 bytes a parameter, beyond the 2/4 bytes of its shard: a
                 * Llama 3 8B layer over tp 2 (QKV 4096 x 6144, output 4096^2, three FFN
                 * matrices of 4096 x 14336, two norms), or the embedding or head (128,256 x
                 * 4096), the larger */
                double h = 4096, layer = h * 6144 + h * h + 3 * h * 14336 + 2 * h;
                double unit = MAX(layer, 128256 * h) / 2;
                ck_assert_double_eq_tol(x->unit_params, unit, 1e-3);
                ck_assert_double_eq_tol(x->weights_mem, x->params * 2 / 4 + 4 * unit, 1e-3);
            }
        }
        ck_assert_double_eq(ppsim_mem_nccl_bytes(a), 3 * 544 * MIB + 688 * MIB);
        ck_assert_double_eq(ppsim_mem_nccl_bytes(b), 2 * 544 * MIB + 688 * MIB);
    }
    /* ZeRO with dp = 1 still shards over cp > 1: no "does nothing" warning; with cp = 1 too,
     * the warning */
    static const char *const cps[][2] = {{"parallel.cp=2", "parallel.tp=2"},
                                         {"parallel.cp=1", "parallel.tp=4"}};
    for (guint i = 0; i < G_N_ELEMENTS(cps); i++) {
        g_autoptr(GError) error = NULL;
        const char *const ovr[] = {
            cps[i][0],          cps[i][1], "parallel.dp=1", "training.pp=2", "parallel.zero=1",
            "hardware.nodes=1", NULL};
        g_autoptr(PpsimScenario) sc = parse(yaml, ovr, &error);
        ppsim_assert_no_error(error);
        g_autoptr(GPtrArray) none = g_ptr_array_new();
        g_autoptr(GPtrArray) warns = ppsim_sim_warnings(sc, none);
        gboolean said = FALSE;
        for (guint k = 0; k < warns->len; k++)
            said |= strstr(g_ptr_array_index(warns, k), "does nothing with dp x cp = 1") != NULL;
        ck_assert_int_eq(said, i == 1);
    }
}
END_TEST

/* Bad input names the key and its place. */
START_TEST(test_bad_input)
{
    static const struct {
        const char *yaml;
        const char *needle;
        const char *where;
    } bad[] = {
        {"memory: {fragmentation: -0.1}\n", "'memory.fragmentation' must be a number in [0, 1]",
         "m.yaml:5:25:"},
        {"memory: {fragmentation: 1.5}\n", "'memory.fragmentation' must be a number in [0, 1]",
         "m.yaml:5:25:"},
        {"memory: {reserved: 80GiB}\n", "'memory.reserved' (80.000 GiB) must be smaller than",
         "m.yaml:5:10:"},
        {"memory: {reserved: 1GiB}\nhardware: {gpu: {memory: 512MiB}}\n",
         "'memory.reserved' (1.000 GiB) must be smaller than", "m.yaml:5:10:"},
        {"training: {main_grads: fp16}\n", "'training.main_grads' must be one of fp32, bf16",
         "m.yaml:5:48:"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *yaml = g_strconcat(small_yaml, bad[i].yaml, NULL);
        if (strstr(bad[i].yaml, "training:")) { /* one training section */
            g_free(yaml);
            yaml = g_strdup("name: small\n"
                            "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, "
                            "vocab: 32000}\n"
                            "schedule: 1f1b\n"
                            "hardware: {preset: dgx-a100-80gb}\n"
                            "training: {pp: 2, microbatches: 2, main_grads: fp16}\n");
        }
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
        ck_assert_ptr_null(sc);
        ck_assert_ptr_nonnull(error);
        ck_assert_msg(strstr(error->message, bad[i].needle) != NULL, "%s", error->message);
        ck_assert_msg(g_str_has_prefix(error->message, bad[i].where), "%s", error->message);
    }
    /* 0 and 1 are accepted */
    const char *const ok[] = {"memory.fragmentation=0", NULL}, *const one[] = {
                                                                   "memory.fragmentation=1", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) a = parse(small_yaml, ok, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) b = parse(small_yaml, one, &error);
    ppsim_assert_no_error(error);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, test_model_states);
    tcase_add_test(tc, test_components);
    tcase_add_test(tc, test_breakdown_by_hand);
    tcase_add_test(tc, test_verdict_boundary);
    tcase_add_test(tc, test_verdict_function);
    tcase_add_test(tc, test_verdict_band_by_hand);
    tcase_add_test(tc, test_verdict_json);
    tcase_add_test(tc, test_verdict_sweep);
    tcase_add_test(tc, test_verdict_plan);
    tcase_add_test(tc, test_generators_use_the_verdict);
    tcase_add_test(tc, test_explicit_untouched);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_context_parallel_shards);
    tcase_add_test(tc, test_fp8_weight_copies);
    suite_add_tcase(s, tc);
    return s;
}
