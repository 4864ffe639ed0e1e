/* check-report.c: the trace, SVG and artefact writers, checked against the replay they
 * describe: every op once with its simulated start and duration, flow arrows in pairs,
 * counters equal to the memory timeline, byte-identical output, valid XML, atomic files. */
#include "ppsim-test.h"
#include "report/artifacts.h"
#include "report/report-svg-density.h"
#include "sim/sim.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static PpsimRunResult *
replay_1f1b(int p, int m, gboolean offload)
{
    PpsimScenario *sc = ppsim_scenario_new_explicit(p, 1, m, "1f1b");
    sc->costs.p2p_ps = PPSIM_PS_PER_MS / 20;
    sc->costs.offload_ps = PPSIM_PS_PER_MS / 2;
    g_autoptr(GError) error = NULL;
    PpsimCosts *costs = ppsim_costs_new(sc, p, &error);
    /* 1F1B by hand (warm-up min(p-d-1, m)), optionally offloading every activation of
     * device 0 right after its F and reloading it just before its backward */
    PpsimSchedule *s = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(s);
    for (int d = 0; d < p; d++) {
        int w = MIN(p - d - 1, m), f = 0, b = 0;
        for (; f < w; f++)
            ppsim_schedule_push(s, d, PPSIM_OP_F, d, f);
        for (; f < m; f++, b++) {
            ppsim_schedule_push(s, d, PPSIM_OP_F, d, f);
            ppsim_schedule_push(s, d, PPSIM_OP_BW, d, b);
        }
        for (; b < m; b++)
            ppsim_schedule_push(s, d, PPSIM_OP_BW, d, b);
    }
    for (int j = 0; offload && j < m; j++) {
        ppsim_schedule_push(s, 0, PPSIM_OP_OFF, 0, j);
        ppsim_schedule_push(s, 0, PPSIM_OP_RL, 0, j);
    }
    PpsimRunResult *res =
        ppsim_sim_replay(sc, costs, s, "hand", "custom", PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    ppsim_costs_free(costs);
    ppsim_scenario_free(sc);
    return res;
}

static gboolean
to_gstring(const char *buf, gsize len, gpointer data, GError **error)
{
    (void)error;
    g_string_append_len(data, buf, len);
    return TRUE;
}

static gint64
us_to_ps(JsonObject *o, const char *key)
{
    /* "ts"/"dur" carry 6 decimals: exact microseconds with picosecond resolution */
    return (gint64)llround(json_object_get_double_member(o, key) * 1e6);
}

START_TEST(test_trace_matches_replay)
{
    g_autoptr(PpsimRunResult) res = replay_1f1b(4, 8, TRUE);
    g_autoptr(GString) a = g_string_new(NULL), b = g_string_new(NULL);
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_report_trace_write(res, to_gstring, a, &error));
    ck_assert(ppsim_report_trace_write(res, to_gstring, b, &error));
    ck_assert_str_eq(a->str, b->str);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, a->str, a->len, &error));
    JsonArray *events = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "traceEvents");
    g_autoptr(GHashTable) flow_starts = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
    guint n_ops = 0, n_finish = 0, n_counters = 0;
    gint64 cur_act[4] = {0};
    for (guint i = 0; i < json_array_get_length(events); i++) {
        JsonObject *e = json_array_get_object_element(events, i);
        const char *ph = json_object_get_string_member(e, "ph");
        if (strcmp(ph, "X") == 0) {
            int d = json_object_get_int_member(e, "pid") - 1;
            int list = json_object_get_int_member(e, "tid") - 1;
            JsonObject *args = json_object_get_object_member(e, "args");
            /* find the op: it must exist at the same position with the same timing */
            GArray *ops = list == 0 ? res->schedule->compute[d] : res->schedule->copy[d];
            GArray *tim = list == 0 ? res->compute_timing[d] : res->copy_timing[d];
            gboolean found = FALSE;
            for (guint k = 0; k < ops->len && !found; k++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, k);
                const PpsimOpTiming *t = &g_array_index(tim, PpsimOpTiming, k);
                found = op->stage == json_object_get_int_member(args, "stage") &&
                        op->microbatch == json_object_get_int_member(args, "microbatch") &&
                        strcmp(ppsim_op_kind_name(op->kind),
                               json_object_get_string_member(args, "kind")) == 0 &&
                        t->start_ps == us_to_ps(e, "ts") &&
                        t->end_ps - t->start_ps == us_to_ps(e, "dur");
            }
            ck_assert_msg(found, "trace op %u has no matching op", i);
            /* the slice's name says kind, microbatch and stage: "F3.s5" */
            g_autofree char *want = g_strdup_printf("%s%" G_GINT64_FORMAT ".s%" G_GINT64_FORMAT,
                                                    json_object_get_string_member(args, "kind"),
                                                    json_object_get_int_member(args, "microbatch"),
                                                    json_object_get_int_member(args, "stage"));
            ck_assert_str_eq(json_object_get_string_member(e, "name"), want);
            n_ops++;
        } else if (strcmp(ph, "s") == 0) {
            gint64 id = json_object_get_int_member(e, "id");
            g_array_append_val(ids, id);
        } else if (strcmp(ph, "f") == 0) {
            n_finish++;
        } else if (strcmp(ph, "C") == 0 &&
                   g_str_has_prefix(json_object_get_string_member(e, "name"), "memory (")) {
            int d = json_object_get_int_member(e, "pid") - 1;
            JsonObject *args = json_object_get_object_member(e, "args");
            cur_act[d] = (gint64)llround(json_object_get_double_member(args, "activations") *
                                         PPSIM_EXPLICIT_MEM_SCALE);
            n_counters++;
        }
    }
    ck_assert_uint_eq(n_ops, ppsim_schedule_n_ops(res->schedule));
    /* 3 boundaries x 8 microbatches x 2 directions cross devices, plus 8 offload->reload */
    ck_assert_uint_eq(ids->len, res->transfers->len + 8);
    ck_assert_uint_eq(n_finish, ids->len);
    ck_assert_uint_eq(n_counters, res->p + res->mem_samples->len - 16); /* host samples skipped */
    for (int d = 0; d < 4; d++)
        ck_assert_int_eq(cur_act[d], 0); /* everything freed by the end */
}
END_TEST

typedef struct {
    gint64 start, end;
} Slice;

static int
slice_cmp(gconstpointer a, gconstpointer b)
{
    const Slice *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? 1 : x->end > y->end ? -1 : 0; /* the enclosing one first */
}

/* An offload run over shared PCIe links: the metadata uses the Trace Event Format's names,
 * every flow is a slice, and no two slices of one thread overlap partially (viewers would
 * mis-nest them); slices of one link lane do not overlap at all. */
START_TEST(test_trace_threads_do_not_overlap)
{
    g_autoptr(PpsimScenario) sc =
        ppsim_test_load_scenario("scenarios/a100_offload_pcie.yaml", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 1), PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_gt(res->flows->len, 0);
    g_autoptr(GString) a = g_string_new(NULL), b = g_string_new(NULL);
    ck_assert(ppsim_report_trace_write(res, to_gstring, a, &error));
    ck_assert(ppsim_report_trace_write(res, to_gstring, b, &error));
    ck_assert_str_eq(a->str, b->str);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, a->str, a->len, &error));
    JsonArray *events = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "traceEvents");
    g_autoptr(GHashTable) threads =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
    g_autoptr(GHashTable) named = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    guint n_links = 0, n_sorted = 0;
    for (guint i = 0; i < json_array_get_length(events); i++) {
        JsonObject *e = json_array_get_object_element(events, i);
        const char *ph = json_object_get_string_member(e, "ph");
        gint64 key = json_object_get_int_member(e, "pid") * 100000 +
                     (json_object_has_member(e, "tid") ? json_object_get_int_member(e, "tid") : 0);
        if (strcmp(ph, "M") == 0) {
            const char *name = json_object_get_string_member(e, "name");
            ck_assert_msg(
                strcmp(name, "process_name") == 0 || strcmp(name, "process_sort_index") == 0 ||
                    strcmp(name, "thread_name") == 0 || strcmp(name, "thread_sort_index") == 0,
                "metadata event %s", name);
            n_sorted += g_str_has_suffix(name, "_sort_index");
            if (strcmp(name, "thread_name") == 0)
                g_hash_table_add(named, g_memdup2(&key, sizeof key));
            continue;
        }
        if (strcmp(ph, "X") != 0)
            continue;
        n_links += json_object_get_int_member(e, "pid") == res->p + 1;
        GArray *slices = g_hash_table_lookup(threads, &key);
        if (slices == NULL) {
            slices = g_array_new(FALSE, FALSE, sizeof(Slice));
            g_hash_table_insert(threads, g_memdup2(&key, sizeof key), slices);
        }
        gint64 ts = us_to_ps(e, "ts");
        Slice sl = {ts, ts + us_to_ps(e, "dur")};
        g_array_append_val(slices, sl);
    }
    ck_assert_uint_eq(n_links, res->flows->len);
    ck_assert_uint_gt(n_sorted, 0);
    GHashTableIter it;
    gpointer k, v;
    guint link_threads = 0;
    g_hash_table_iter_init(&it, threads);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        gint64 key = *(gint64 *)k;
        GArray *slices = v;
        gboolean link = key / 100000 == res->p + 1;
        link_threads += link;
        ck_assert_msg(g_hash_table_contains(named, &key), "thread %" G_GINT64_FORMAT " unnamed",
                      key);
        g_array_sort(slices, slice_cmp);
        /* a stack of enclosing slices: each new one must end inside the innermost still open */
        g_autoptr(GArray) open = g_array_new(FALSE, FALSE, sizeof(gint64));
        for (guint i = 0; i < slices->len; i++) {
            const Slice *sl = &g_array_index(slices, Slice, i);
            while (open->len > 0 && g_array_index(open, gint64, open->len - 1) <= sl->start)
                g_array_set_size(open, open->len - 1);
            if (open->len > 0) {
                gint64 outer_end = g_array_index(open, gint64, open->len - 1);
                ck_assert_msg(!link, "link slices overlap on thread %" G_GINT64_FORMAT, key);
                ck_assert_msg(sl->end <= outer_end,
                              "partial overlap on thread %" G_GINT64_FORMAT " at %" G_GINT64_FORMAT
                              " ps",
                              key, sl->start);
            }
            g_array_append_val(open, sl->end);
        }
    }
    ck_assert_uint_gt(link_threads, 1);
}
END_TEST

START_TEST(test_counters_follow_samples)
{
    g_autoptr(PpsimRunResult) res = replay_1f1b(2, 3, FALSE);
    /* replay the samples: the maximum of the activation counter is the reported peak */
    gint64 peak[2] = {0}, cur[2][3] = {{0}};
    for (guint i = 0; i < res->mem_samples->len; i++) {
        const PpsimMemSample *m = &g_array_index(res->mem_samples, PpsimMemSample, i);
        cur[m->pool][m->category] = m->value;
        peak[m->pool] = MAX(peak[m->pool], cur[m->pool][1] + cur[m->pool][2]);
    }
    ck_assert_int_eq(peak[0], res->devices[0].peak_activation);
    ck_assert_int_eq(peak[1], res->devices[1].peak_activation);
}
END_TEST

static gboolean
xml_valid(const char *path)
{
    if (!g_file_test("/usr/bin/xmllint", G_FILE_TEST_IS_EXECUTABLE))
        return TRUE; /* checked in CI, where tools/bootstrap installs libxml2-utils */
    const char *argv[] = {"/usr/bin/xmllint", "--noout", path, NULL};
    int status = 0;
    ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL,
                           NULL, &status, NULL));
    return g_spawn_check_wait_status(status, NULL);
}

START_TEST(test_artifacts_svg_atomic)
{
    g_autoptr(PpsimRunResult) r1 = replay_1f1b(4, 8, TRUE);
    g_autoptr(PpsimRunResult) r2 = replay_1f1b(4, 8, FALSE);
    g_free(r2->label);
    r2->label = g_strdup("no <offload> & co");
    g_autoptr(GPtrArray) results = g_ptr_array_new();
    g_ptr_array_add(results, r1);
    g_ptr_array_add(results, r2);
    g_autofree char *dir = g_dir_make_tmp("ppsim-report-XXXXXX", NULL);
    g_autoptr(GString) json = g_string_new("{}"), csv = g_string_new("x\n");
    g_autoptr(GError) error = NULL;
    PpsimScenario *sc = ppsim_scenario_new_explicit(4, 1, 8, "1f1b");
    ck_assert(ppsim_artifacts_write(dir, sc, results, json, csv, NULL, &error));
    const char *files[] = {"summary.json", "summary.csv",           "hand.trace.json",
                           "hand.svg",     "no__offload____co.svg", "no__offload____co.trace.json",
                           "compare.svg"};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = g_build_filename(dir, files[i], NULL);
        ck_assert_msg(g_file_test(path, G_FILE_TEST_EXISTS), "missing %s", files[i]);
        if (g_str_has_suffix(files[i], ".svg"))
            ck_assert_msg(xml_valid(path), "%s is not well-formed XML", files[i]);
    }
    /* one <rect> with a <title> per op, and the legend names the kinds present */
    g_autofree char *svg_path = g_build_filename(dir, "hand.svg", NULL);
    g_autofree char *svg = NULL;
    ck_assert(g_file_get_contents(svg_path, &svg, NULL, NULL));
    guint titles = 0;
    for (const char *p = svg; (p = strstr(p, "<title>")); p++)
        titles++;
    ck_assert_uint_eq(titles, ppsim_schedule_n_ops(r1->schedule));
    ck_assert(strstr(svg, ">offload</text>") && strstr(svg, ">BW backward</text>"));
    /* no temporary file is left, and a failing write leaves none either */
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    ck_assert_ptr_nonnull(d);
    guint n_files = 0;
    for (const char *n; (n = g_dir_read_name(d)); n_files++)
        ck_assert_msg(!g_str_has_suffix(n, ".tmp"), "left %s", n);
    ck_assert_uint_ge(n_files, 3); /* summary.json, summary.csv and the schedules' files */
    g_autofree char *blocker = g_build_filename(dir, "summary.json", "sub", NULL);
    ck_assert(!ppsim_artifacts_write(blocker, sc, results, json, csv, NULL, &error));
    ck_assert_ptr_nonnull(error);
    ppsim_scenario_free(sc);
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The value of attribute @name of the element starting at @elem (NAN when absent). */
static double
svg_attr(const char *elem, const char *name)
{
    const char *end = strchr(elem, '>');
    g_autofree char *key = g_strdup_printf(" %s=\"", name);
    const char *at = g_strstr_len(elem, end - elem, key);
    return at ? g_ascii_strtod(at + strlen(key), NULL) : NAN;
}

static gboolean
svg_fill_is(const char *elem, const char *fill)
{
    const char *end = strchr(elem, '>');
    g_autofree char *key = g_strdup_printf(" fill=\"%s\"", fill);
    return g_strstr_len(elem, end - elem, key) != NULL;
}

/* 1F1B p = 64, m = 1024: 2,048 ops per lane over about 1,000 pixels. Each lane is drawn as its
 * busy share per pixel column: the rectangles on a device's lane cover at least the pixels of
 * its busy time, and their width x opacity is its busy time to within the opacity steps. */
START_TEST(test_svg_density_large_run)
{
    g_autoptr(PpsimRunResult) res = replay_1f1b(64, 1024, FALSE);
    g_autoptr(GString) svg = g_string_new(NULL), again = g_string_new(NULL);
    ppsim_report_svg(svg, res, NULL);
    ppsim_report_svg(again, res, NULL);
    ck_assert_str_eq(svg->str, again->str);
    ck_assert(strstr(svg->str, "a stack of the kinds") != NULL);
    ck_assert_uint_lt(svg->len, 4 * 1024 * 1024);
    /* the lanes: grey background rectangles, in device order; inside each, the drawn area of
     * a kind (width x height over the lane's height) is its busy time in pixels */
    double lane_y[64], lane_h = 0, lane_x = 0, plot_w = 0, weighted[64] = {0}, fwd[64] = {0};
    int lanes = 0;
    guint rects = 0;
    for (const char *r = svg->str; (r = strstr(r, "<rect ")); r++) {
        double y = svg_attr(r, "y"), h = svg_attr(r, "height");
        if (svg_fill_is(r, "#f3f3f3")) {
            ck_assert_int_lt(lanes, 64);
            lane_y[lanes++] = y;
            lane_h = h;
            lane_x = svg_attr(r, "x");
            plot_w = svg_attr(r, "width");
            continue;
        }
        if (lanes == 0 || y < lane_y[lanes - 1] - 0.01 ||
            y + h > lane_y[lanes - 1] + lane_h + 0.01 || lane_h < 4)
            continue; /* legend, axis ticks, copy lanes */
        double w = svg_attr(r, "width");
        ck_assert(svg_fill_is(r, "#4e79a7") || svg_fill_is(r, "#2f7d3a")); /* F or BW */
        ck_assert(svg_attr(r, "x") >= lane_x && svg_attr(r, "x") + w <= lane_x + plot_w + 0.01);
        ck_assert(isnan(svg_attr(r, "fill-opacity")));
        weighted[lanes - 1] += w * h / lane_h;
        if (svg_fill_is(r, "#4e79a7"))
            fwd[lanes - 1] += w * h / lane_h;
        rects++;
    }
    ck_assert_int_eq(lanes, 64);
    ck_assert_uint_lt(rects, ppsim_schedule_n_ops(res->schedule) / 4);
    for (int d = 0; d < 64; d++) {
        double px_per_ps = plot_w / (double)res->makespan_ps;
        double busy = (double)res->devices[d].busy_ps * px_per_ps, f = 0;
        const GArray *ops = res->schedule->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOpTiming *t = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
            if (g_array_index(ops, PpsimOp, i).kind == PPSIM_OP_F)
                f += (double)(t->end_ps - t->start_ps) * px_per_ps;
        }
        ck_assert_msg(fabs(weighted[d] - busy) <= plot_w * 0.5 / PPSIM_SVG_DENSITY_LEVELS + 1,
                      "device %d: %.1f px drawn, %.1f px busy", d, weighted[d], busy);
        /* forwards in proportion (1F1B's are a third of its busy time here), not hidden
         * under the longer backwards */
        ck_assert_msg(fabs(fwd[d] - f) <= plot_w * 1.0 / PPSIM_SVG_DENSITY_LEVELS + 1,
                      "device %d: %.1f px of forwards drawn, %.1f px busy in F", d, fwd[d], f);
    }
    /* a window of a few dozen ops is drawn as blocks, one tooltip per op */
    PpsimSvgOptions window = {.t0_ps = res->makespan_ps / 2,
                              .t1_ps = res->makespan_ps / 2 + 20 * PPSIM_PS_PER_MS};
    g_string_truncate(svg, 0);
    ppsim_report_svg(svg, res, &window);
    ck_assert(strstr(svg->str, "a stack of the kinds") == NULL);
    ck_assert(strstr(svg->str, "<title>") != NULL);
}
END_TEST

/* Interleaved: the legend explains the lighter shade of later chunks; 1F1B has none. */
START_TEST(test_svg_legend_later_chunks)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(4, 2, 8, "interleaved");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_report_svg(svg, res, NULL);
    ck_assert(strstr(svg->str, "fill-opacity=\"0.6\"") != NULL);
    ck_assert(strstr(svg->str, ">lighter: later chunks</text>") != NULL);
    g_autoptr(PpsimRunResult) plain = replay_1f1b(4, 8, FALSE);
    g_string_truncate(svg, 0);
    ppsim_report_svg(svg, plain, NULL);
    ck_assert(strstr(svg->str, "later chunks") == NULL);
}
END_TEST

/* Optimizer steps on a host CPU worker (T-Offload) get a lane of their own under each
 * device's copy lane, labelled "cpu"; runs without them have no such lane. */
START_TEST(test_svg_cpu_lane)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(4, 2, 8, "tpipe");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res =
        ppsim_test_run_option(sc, "tpipe", "offload_optimizer", "t-offload", &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_report_svg(svg, res, NULL);
    int lanes = 0;
    double last_copy_y = -1, first_opt_y = -1;
    for (const char *at = svg->str; (at = strstr(at, ">cpu</text>")) != NULL; at++)
        lanes++;
    ck_assert_int_eq(lanes, 4);
    /* device 0's OPT block lies below its gradient D2H, on a lane of its own */
    const char *goff = strstr(svg->str, "<title>GOFF");
    const char *opt = strstr(svg->str, "<title>OPT");
    ck_assert(goff != NULL && opt != NULL);
    const char *r = g_strrstr_len(svg->str, goff - svg->str, "<rect");
    ck_assert(sscanf(strstr(r, " y=\"") + 4, "%lf", &last_copy_y) == 1);
    r = g_strrstr_len(svg->str, opt - svg->str, "<rect");
    ck_assert(sscanf(strstr(r, " y=\"") + 4, "%lf", &first_opt_y) == 1);
    ck_assert(first_opt_y > last_copy_y);
    g_autoptr(PpsimRunResult) plain = replay_1f1b(4, 8, FALSE);
    g_string_truncate(svg, 0);
    ppsim_report_svg(svg, plain, NULL);
    ck_assert(strstr(svg->str, ">cpu</text>") == NULL);
}
END_TEST

/* Windows: one reaching past the end is cut there (same picture as up to the end); one
 * starting after the end says so in the title; peak labels sit right of the memory charts. */
START_TEST(test_svg_window_and_memory_labels)
{
    g_autoptr(PpsimRunResult) res = replay_1f1b(4, 8, TRUE);
    PpsimTime end = res->makespan_ps;
    g_autoptr(GString) whole = g_string_new(NULL), cut = g_string_new(NULL);
    ppsim_report_svg(whole, res, NULL);
    PpsimSvgOptions past = {.t0_ps = 0, .t1_ps = 2 * end};
    ppsim_report_svg(cut, res, &past);
    ck_assert_str_eq(whole->str, cut->str);
    g_autoptr(GString) half = g_string_new(NULL), half_cut = g_string_new(NULL);
    PpsimSvgOptions w1 = {.t0_ps = end / 2, .t1_ps = end},
                    w2 = {.t0_ps = end / 2, .t1_ps = 3 * end};
    ppsim_report_svg(half, res, &w1);
    ppsim_report_svg(half_cut, res, &w2);
    ck_assert_str_eq(half->str, half_cut->str);
    ck_assert(strstr(half->str, "nothing in the window") == NULL);
    g_autoptr(GString) after = g_string_new(NULL);
    PpsimSvgOptions w3 = {.t0_ps = end + 1, .t1_ps = end + PPSIM_PS_PER_MS};
    ppsim_report_svg(after, res, &w3);
    ck_assert(strstr(after->str, "nothing in the window, which starts after the end") != NULL);
    /* each device's peak label lies right of its chart, clear of the curve */
    double chart_right = 0;
    guint labels = 0;
    for (const char *e = whole->str; (e = strstr(e, "<rect ")); e++)
        if (svg_fill_is(e, "#fafafa"))
            chart_right = svg_attr(e, "x") + svg_attr(e, "width");
    ck_assert(chart_right > 0);
    for (const char *e = whole->str; (e = strstr(e, "<text ")); e++) {
        const char *text = strchr(e, '>') + 1;
        if (!g_str_has_prefix(strstr(text, " ") ? strstr(text, " ") : "", " units<"))
            continue;
        ck_assert_msg(svg_attr(e, "x") > chart_right, "peak label at x = %.1f inside the chart",
                      svg_attr(e, "x"));
        labels++;
    }
    ck_assert_uint_eq(labels, 4);
}
END_TEST

typedef struct {
    GArray *sizes; /* gsize: each chunk's length, in order */
    char first, last;
} Chunks;

static gboolean
record_chunk(const char *buf, gsize len, gpointer data, GError **error)
{
    (void)error;
    Chunks *c = data;
    if (c->sizes->len == 0)
        c->first = buf[0];
    c->last = buf[len - 1];
    g_array_append_val(c->sizes, len);
    return TRUE;
}

/* 1F1B p = 64, m = 2048 (262,144 ops) streams its trace in 64 KiB chunks (not timed): every
 * chunk but the last holds at least 64 KiB and at most one event more, so the writer's buffer
 * never grows with the run; the last is the rest; together they are the whole JSON object. */
START_TEST(test_large_trace_streams)
{
    enum { CHUNK = 64 * 1024, ONE_EVENT = 4096 };
    g_autoptr(PpsimRunResult) res = replay_1f1b(64, 2048, FALSE);
    Chunks c = {.sizes = g_array_new(FALSE, FALSE, sizeof(gsize))};
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_report_trace_write(res, record_chunk, &c, &error));
    ppsim_assert_no_error(error);
    gsize bytes = 0;
    for (guint i = 0; i < c.sizes->len; i++) {
        gsize n = g_array_index(c.sizes, gsize, i);
        bytes += n;
        if (i + 1 < c.sizes->len)
            ck_assert_msg(n >= CHUNK && n < CHUNK + ONE_EVENT, "chunk %u of %u: %zu bytes", i,
                          c.sizes->len, n);
        else
            ck_assert_msg(n > 0 && n < CHUNK + ONE_EVENT, "last chunk: %zu bytes", n);
    }
    ck_assert_uint_gt(bytes, 262144 * 100); /* at least 100 bytes per op's slice */
    ck_assert_uint_ge(c.sizes->len, bytes / (CHUNK + ONE_EVENT));
    ck_assert_uint_le(c.sizes->len, bytes / CHUNK + 1);
    ck_assert_int_eq(c.first, '{');
    ck_assert_msg(c.last == '}' || c.last == '\n', "the stream ends with '%c'", c.last);
    g_array_unref(c.sizes);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("trace");
    tcase_add_test(tc, test_trace_matches_replay);
    tcase_add_test(tc, test_trace_threads_do_not_overlap);
    tcase_add_test(tc, test_counters_follow_samples);
    tcase_add_test(tc, test_artifacts_svg_atomic);
    tcase_add_test(tc, test_svg_legend_later_chunks);
    tcase_add_test(tc, test_svg_cpu_lane);
    tcase_add_test(tc, test_svg_window_and_memory_labels);
    suite_add_tcase(s, tc);
    tc = tcase_create("slow");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_large_trace_streams);
    tcase_add_test(tc, test_svg_density_large_run);
    suite_add_tcase(s, tc);
    return s;
}
