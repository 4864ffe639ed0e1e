/* check-scenario.c: scenario files: every bad/ file fails with the error its last line
 * declares ("# expect: CODE LINE:COL message"); ok/ files parse with the right values;
 * --set overrides. */
#include "ppsim-test.h"
#include "scenario/scenario.h"
#include "scenario/scenario-schema.h"
#include "util/ppsim-error.h"
#include "util/yaml-depth.h"

#include <string.h>

static int
code_of(const char *name)
{
    const char *names[] = {"PARSE", "SCHEMA", "VALUE", "UNIT"};
    for (int i = 0; i < 4; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    ck_abort_msg("unknown code %s", name);
    return -1;
}

START_TEST(test_bad_files)
{
    g_autofree char *dir_path = ppsim_test_data_path("scenarios/bad");
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (const char *n; (n = g_dir_read_name(dir));)
        if (g_str_has_suffix(n, ".yaml"))
            g_ptr_array_add(names, g_strdup(n));
    ck_assert_int_ge(names->len, 15);
    for (guint i = 0; i < names->len; i++) {
        g_autofree char *path = g_build_filename(dir_path, names->pdata[i], NULL);
        g_autofree char *text = NULL;
        ck_assert(g_file_get_contents(path, &text, NULL, NULL));
        const char *expect = strstr(text, "# expect: ");
        ck_assert_msg(expect != NULL, "%s has no '# expect:' line", path);
        g_autofree char *line = g_strndup(expect + 10, strcspn(expect + 10, "\n"));
        g_auto(GStrv) parts = g_strsplit(line, " ", 3);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
        ck_assert_msg(sc == NULL, "%s parsed", path);
        ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, code_of(parts[0]));
        g_autofree char *want = g_strdup_printf("%s:%s: %s", path, parts[1], parts[2]);
        ck_assert_str_eq(error->message, want);
    }
}
END_TEST

START_TEST(test_ok_files_parse)
{
    g_autofree char *dir_path = ppsim_test_data_path("scenarios/ok");
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_msg(dir != NULL, "no folder %s", dir_path);
    int n_files = 0;
    for (const char *n; (n = g_dir_read_name(dir));) {
        g_autofree char *path = g_build_filename(dir_path, n, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
        ppsim_assert_no_error(error);
        n_files++;
    }
    ck_assert_int_ge(n_files, 4);
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", NULL);
    ck_assert_ptr_nonnull(sc);
}
END_TEST

START_TEST(test_explicit_values)
{
    g_autofree char *path = ppsim_test_data_path("scenarios/ok/explicit-1f1b.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert(sc->costs.present);
    ck_assert(!sc->has_model);
    ck_assert_str_eq(sc->name, "explicit-1f1b");
    ck_assert_int_eq(sc->training.pp, 4);
    ck_assert_int_eq(sc->training.chunks, 1);
    ck_assert_int_eq(sc->costs.p2p_ps, PPSIM_PS_PER_MS / 4);
    ck_assert_int_eq(sc->costs.recompute_ps, PPSIM_PS_PER_MS); /* defaults to forward */
    ck_assert_double_eq(sc->costs.weight_activation, 1.0);
    ck_assert_int_eq(sc->schedules->len, 2);
}
END_TEST

START_TEST(test_preset_and_overrides)
{
    g_autofree char *path = ppsim_test_data_path("scenarios/ok/preset-overrides.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
    ppsim_assert_no_error(error);
    const PpsimHardware *hw = &sc->hardware;
    ck_assert_str_eq(hw->preset, "dgx-h100-80gb");
    ck_assert_double_eq(hw->gpu_peak_flops, 989e12); /* from the preset */
    ck_assert_double_eq(hw->gpu_efficiency, 0.5);    /* written before the preset key */
    ck_assert_double_eq(hw->pcie_bytes_per_s, 25e9); /* 200 Gb/s */
    ck_assert_int_eq(hw->pcie_gpus_per_switch, 2);
    ck_assert_int_eq(hw->nodes, 1);
    ck_assert_int_eq(sc->model.ffn_hidden, 4 * 2048);
    ck_assert_int_eq(sc->model.kv_heads, 4);
    ck_assert_int_eq(sc->model.stage_layers->len, 4);
    ck_assert_int_eq(g_array_index(sc->model.stage_layers, int, 1), 3);
    ck_assert_uint_eq(sc->memory_limit_bytes, 60ull << 30);
    /* an empty list clears one: ppsim chooses the split again */
    const char *const clear[] = {"model.stage_layers=[]", "model.stage_recompute=[]", NULL};
    g_autoptr(PpsimScenario) cleared = ppsim_scenario_load_file(path, clear, &error);
    ppsim_assert_no_error(error);
    ck_assert_ptr_null(cleared->model.stage_layers);
    ck_assert_ptr_null(cleared->model.stage_recompute);
    PpsimScheduleSpec *gp = g_ptr_array_index(sc->schedules, 1);
    ck_assert_str_eq(gp->name, "gpipe");
    ck_assert_str_eq(gp->label, "gp");
    ck_assert_int_eq(gp->mark.line, 18);
}
END_TEST

/* A framework sets the keys a scenario leaves out, under its conditions; a written key wins;
 * every framework's settings name real keys and values. */
START_TEST(test_frameworks)
{
    g_autofree char *path = ppsim_test_data_path("scenarios/ok/framework-nemo.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
    ppsim_assert_no_error(error);
    const PpsimParallel *par = &sc->parallel;
    ck_assert_int_eq(sc->framework, 2);
    ck_assert(par->sequence_parallel);
    ck_assert_int_eq(par->zero, 1);
    ck_assert(!par->overlap_grad_reduce); /* written */
    ck_assert(par->overlap_param_gather);
    ck_assert(par->tp_comm_overlap);
    ck_assert_int_eq(sc->training.main_grads, PPSIM_MAIN_GRADS_BF16);
    ck_assert_double_eq(sc->training.bytes_per_param, 2.0 + 2.0 + 12.0); /* follows main_grads */
    /* tp 1: no sequence parallelism, so no TP overlap either, even unwritten */
    const char *tp1[] = {"parallel.tp=1", "parallel.dp=8", NULL};
    g_autoptr(PpsimScenario) one = ppsim_scenario_load_file(path, tp1, &error);
    ppsim_assert_no_error(error);
    ck_assert(!one->parallel.sequence_parallel);
    ck_assert(!one->parallel.tp_comm_overlap);
    ck_assert_int_eq(one->parallel.zero, 1);
    /* ZeRO-3 written: the weights' all-gather of ZeRO 1 and 2 is not set */
    const char *z3[] = {"parallel.zero=3", NULL};
    g_autoptr(PpsimScenario) three = ppsim_scenario_load_file(path, z3, &error);
    ppsim_assert_no_error(error);
    ck_assert(!three->parallel.overlap_param_gather);
    /* none: ppsim's defaults */
    const char *none[] = {"framework=none", NULL};
    g_autoptr(PpsimScenario) plain = ppsim_scenario_load_file(path, none, &error);
    ppsim_assert_no_error(error);
    ck_assert(!plain->parallel.sequence_parallel);
    ck_assert_int_eq(plain->parallel.zero, 0);
    ck_assert_int_eq(plain->training.main_grads, PPSIM_MAIN_GRADS_FP32);
    /* llm-foundry: FSDP1's ZeRO-3, the fp32 reduction, the Triton FlashAttention (with flash
     * attention only: the standard kernels take no named one), the eager optimizer */
    const char *lf[] = {"framework=llm-foundry", NULL};
    g_autoptr(PpsimScenario) foundry = ppsim_scenario_load_file(path, lf, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(foundry->parallel.zero, 3);
    ck_assert_int_eq(foundry->parallel.zero3_layout, PPSIM_ZERO3_FLAT);
    ck_assert_int_eq(foundry->parallel.grad_reduce_dtype, PPSIM_GRAD_REDUCE_FP32);
    ck_assert_int_eq(foundry->model.attention_kernel, PPSIM_ATTN_FA1);
    ck_assert_int_eq(foundry->training.optimizer, PPSIM_OPTIMIZER_EAGER);
    ck_assert_str_eq(ppsim_framework_that_set(foundry, "model.attention_kernel"), "llm-foundry");
    const char *lf_std[] = {"framework=llm-foundry", "model.flash_attention=false", NULL};
    g_autoptr(PpsimScenario) lstd = ppsim_scenario_load_file(path, lf_std, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(lstd->model.attention_kernel, PPSIM_ATTN_DEFAULT);
    ck_assert_ptr_null(ppsim_framework_that_set(lstd, "model.attention_kernel"));
    const char *lf_fa2[] = {"framework=llm-foundry", "model.attention_kernel=fa2",
                            "parallel.zero=2", NULL};
    g_autoptr(PpsimScenario) lfa2 = ppsim_scenario_load_file(path, lf_fa2, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(lfa2->model.attention_kernel, PPSIM_ATTN_FA2);
    ck_assert_int_eq(lfa2->parallel.zero, 2);
    /* every framework loads, and sets each of its unconditional keys */
    int checked = 0;
    for (int i = 1; ppsim_framework_nth(i) != NULL; i++) {
        const PpsimFramework *fw = ppsim_framework_nth(i);
        g_autofree char *set = g_strdup_printf("framework=%s", fw->name);
        const char *sets[] = {set, NULL};
        g_autoptr(PpsimScenario) each = ppsim_scenario_load_file(path, sets, &error);
        ppsim_assert_no_error(error);
        ck_assert_str_eq(ppsim_framework_names[each->framework], fw->name);
        for (const PpsimFrameworkSetting *k = fw->settings; k->key; k++) {
            double v = 0;
            if (k->when != PPSIM_FW_ALWAYS || strcmp(k->key, "parallel.overlap_grad_reduce") == 0 ||
                !ppsim_scenario_lookup_number(each, k->key, &v))
                continue; /* conditional, written, or not a number */
            if (strcmp(k->value, "true") == 0 || strcmp(k->value, "false") == 0)
                ck_assert_msg(v == (strcmp(k->value, "true") == 0), "%s %s", fw->name, k->key);
            else if (g_ascii_isdigit(k->value[0]))
                ck_assert_msg(v == g_ascii_strtod(k->value, NULL), "%s %s", fw->name, k->key);
            checked++;
        }
    }
    ck_assert_int_ge(checked, 6); /* zero and the booleans at least */
    /* without a layout the parallel keys stay as they are; the others apply */
    const char *flat[] = {"parallel={}", "hardware.nodes=1", "training={pp: 1, microbatches: 4}",
                          "schedule=1f1b", NULL};
    g_autoptr(PpsimScenario) alone = ppsim_scenario_load_file(path, flat, &error);
    ppsim_assert_no_error(error);
    ck_assert(!alone->parallel.present);
    ck_assert_int_eq(alone->parallel.zero, 0);
    ck_assert_int_eq(alone->training.main_grads, PPSIM_MAIN_GRADS_BF16);
}
END_TEST

START_TEST(test_set_overrides)
{
    g_autofree char *path = ppsim_test_data_path("scenarios/ok/explicit-1f1b.yaml");
    const char *sets[] = {"training.pp=2",
                          "costs.backward_weight=2.5ms",
                          "schedule=[gpipe, {name: 1f1b, label: x}]",
                          "memory.limit=7",
                          "hardware.pcie.bandwidth=16GB/s",
                          NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, sets, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(sc->training.pp, 2);
    ck_assert_int_eq(sc->costs.backward_weight_ps, 5 * PPSIM_PS_PER_MS / 2);
    ck_assert_int_eq(sc->schedules->len, 2);
    ck_assert_str_eq(((PpsimScheduleSpec *)g_ptr_array_index(sc->schedules, 1))->label, "x");
    ck_assert_double_eq(sc->memory_limit_units, 7);
    ck_assert_double_eq(sc->hardware.pcie_bytes_per_s, 16e9);
    ck_assert(sc->has_hardware);

    const struct {
        const char *set, *message;
    } bad[] = {
        {"training.pp=zero", "--set training.pp: 'training.pp' must be a positive integer, "
                             "got 'zero'"},
        {"training.pp", "--set 'training.pp': expected KEY.PATH=VALUE, e.g. training.pp=4"},
        {"=3", "--set '=3': expected KEY.PATH=VALUE, e.g. training.pp=4"},
        {"training.ppp=3", "--set training.ppp: unknown key 'training.ppp' (did you mean 'pp'?)"},
        {"costs.forward=[1", "--set costs.forward: bad value '[1'"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *one[] = {bad[i].set, NULL};
        g_autoptr(GError) err = NULL;
        g_autoptr(PpsimScenario) s2 = ppsim_scenario_load_file(path, one, &err);
        ck_assert_ptr_null(s2);
        ck_assert_msg(g_str_has_prefix(err->message, bad[i].message), "got '%s'", err->message);
    }
}
END_TEST

/* Hostile sizes in YAML: deep nesting (libyaml is quadratic in depth) and alias bombs through
 * --set (aliases are expanded when the value is copied in) are refused, naming the limit.
 * (That they are refused in well under a second is timed by tools/bench --only hostile.) */
START_TEST(test_yaml_limits)
{
    g_autofree char *path = ppsim_test_data_path("scenarios/ok/explicit-1f1b.yaml");
    int depth = 40000;
    g_autoptr(GString) deep = g_string_new("training: ");
    for (int i = 0; i < depth; i++)
        g_string_append_c(deep, '[');
    for (int i = 0; i < depth; i++)
        g_string_append_c(deep, ']');
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(deep->str, deep->len, "deep.yaml", ".", NULL, &error);
    ck_assert_ptr_null(sc);
    ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE);
    ck_assert_str_eq(error->message, "deep.yaml:1:74: YAML nested more than 64 levels deep");

    /* ten levels of ten aliases each: 10^10 nodes once expanded */
    g_autoptr(GString) bomb = g_string_new("costs.forward=[&a0 [1,2,3,4,5,6,7,8,9,10]");
    for (int level = 1; level < 10; level++) {
        g_string_append_printf(bomb, ", &a%d [", level);
        for (int i = 0; i < 10; i++)
            g_string_append_printf(bomb, "%s*a%d", i ? "," : "", level - 1);
        g_string_append_c(bomb, ']');
    }
    g_string_append_c(bomb, ']');
    g_autofree char *deep_set = g_strconcat("costs.forward=", deep->str + 10, NULL);
    const struct {
        const char *set, *message;
    } bad[] = {
        {bomb->str, "--set costs.forward: the value expands to more than 65536 YAML nodes or 64 "
                    "levels (aliases are expanded)"},
        {"costs.forward=&a [*a]", "--set costs.forward: the value expands to more than 65536"},
        {deep_set, "--set costs.forward: value nested more than 64 levels deep (column 65)"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *one[] = {bad[i].set, NULL};
        g_autoptr(GError) err = NULL;
        g_autoptr(PpsimScenario) s2 = ppsim_scenario_load_file(path, one, &err);
        ck_assert_ptr_null(s2);
        ck_assert_msg(g_str_has_prefix(err->message, bad[i].message), "got '%s'", err->message);
    }
}
END_TEST

/* The depth check at its limit, for each kind of collection and with the quick count of
 * indicators both below and above it: 64 levels pass, 65 do not. */
START_TEST(test_yaml_depth_boundary)
{
    for (int kind = 0; kind < 3; kind++) {
        for (int depth = 63; depth <= 65; depth++) {
            g_autoptr(GString) t = g_string_new(NULL);
            for (int i = 0; i < depth; i++) /* flow sequences, flow mappings, block sequences */
                g_string_append(t, kind == 0 ? "[" : kind == 1 ? "{a: " : "- ");
            g_string_append(t, "1");
            for (int i = 0; i < depth && kind < 2; i++)
                g_string_append(t, kind == 0 ? "]" : "}");
            yaml_mark_t where;
            ck_assert_msg(ppsim_yaml_check_depth(t->str, t->len, &where) == (depth <= 64),
                          "kind %d depth %d", kind, depth);
            /* many harmless indicators (in a comment) do not change the verdict */
            g_string_append(t, "\n# ");
            for (int i = 0; i < 100; i++)
                g_string_append(t, "-:");
            ck_assert_msg(ppsim_yaml_check_depth(t->str, t->len, &where) == (depth <= 64),
                          "kind %d depth %d, long", kind, depth);
        }
    }
}
END_TEST

START_TEST(test_empty_and_explicit_constructor)
{
    g_autoptr(GError) error = NULL;
    const char *sets[] = {"training={pp: 2, microbatches: 3}", "costs.forward=2", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_scenario_parse("", 0, "empty.yaml", ".", sets, &error);
    ppsim_assert_no_error(error);
    ck_assert_str_eq(sc->name, "empty");
    ck_assert_int_eq(sc->training.microbatches, 3);
    ck_assert_str_eq(((PpsimScheduleSpec *)g_ptr_array_index(sc->schedules, 0))->name, "1f1b");
    g_autoptr(PpsimScenario) ex = ppsim_scenario_new_explicit(4, 2, 8, "gpipe");
    ck_assert(ex->costs.present);
    ck_assert_int_eq(ex->training.chunks, 2);
}
END_TEST

/* scenarios/README.md documents every key of the schema: each appears there as its dotted
 * path, as `key`, or as "key:" (in the YAML examples). Walks the key tables themselves, so a
 * key added without a word in the document fails here, naming it. */
static void
schema_keys_documented(const SchemaKey *keys, const char *prefix, const char *doc, int *n,
                       GString *missing)
{
    for (const SchemaKey *k = keys; k->name; k++) {
        g_autofree char *path =
            *prefix ? g_strconcat(prefix, ".", k->name, NULL) : g_strdup(k->name);
        g_autofree char *ticked = g_strdup_printf("`%s`", k->name);
        g_autofree char *yaml = g_strdup_printf("%s:", k->name);
        if (!strstr(doc, path) && !strstr(doc, ticked) && !strstr(doc, yaml))
            g_string_append_printf(missing, " %s", path);
        (*n)++;
        if (k->type == KEY_SECTION)
            schema_keys_documented(k->section, path, doc, n, missing);
    }
}

START_TEST(test_every_key_documented)
{
    g_autofree char *path = ppsim_test_src_path("scenarios/README.md");
    g_autofree char *doc = NULL;
    ck_assert_msg(g_file_get_contents(path, &doc, NULL, NULL), "cannot read %s", path);
    g_autoptr(GString) missing = g_string_new(NULL);
    int n = 0;
    schema_keys_documented(ppsim_scenario_schema, "", doc, &n, missing);
    ck_assert_int_ge(n, 50);
    ck_assert_msg(missing->len == 0, "scenarios/README.md does not mention:%s", missing->str);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("files");
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_every_key_documented);
    tcase_add_test(tc, test_ok_files_parse);
    tcase_add_test(tc, test_explicit_values);
    tcase_add_test(tc, test_preset_and_overrides);
    tcase_add_test(tc, test_frameworks);
    suite_add_tcase(s, tc);
    tc = tcase_create("overrides");
    tcase_add_test(tc, test_set_overrides);
    tcase_add_test(tc, test_yaml_limits);
    tcase_add_test(tc, test_yaml_depth_boundary);
    tcase_add_test(tc, test_empty_and_explicit_constructor);
    suite_add_tcase(s, tc);
    return s;
}
