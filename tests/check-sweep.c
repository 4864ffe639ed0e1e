/* check-sweep.c: sweeps: constraint expressions, sweep-file errors with line and column,
 * rows in point order whatever the thread count, refused points as rows, resume after an
 * interruption anywhere, shards, and the summary's Pareto front. */
#include "ppsim-test.h"
#include "sweep/sweep.h"
#include "util/ppsim-error.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* ---- expressions ---------------------------------------------------------------------------- */

static gboolean
table_lookup(const char *path, double *out, gpointer data)
{
    (void)data;
    if (strcmp(path, "training.microbatches") == 0)
        *out = 12;
    else if (strcmp(path, "training.pp") == 0)
        *out = 4;
    else if (strcmp(path, "model.layers") == 0)
        *out = 30;
    else
        return FALSE;
    return TRUE;
}

static gboolean
eval(const char *text)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweepExpr) e = ppsim_sweep_expr_parse(text, &error);
    ppsim_assert_no_error(error);
    gboolean holds = FALSE;
    ck_assert(ppsim_sweep_expr_eval(e, table_lookup, NULL, &holds, &error));
    return holds;
}

START_TEST(test_expressions)
{
    ck_assert(eval("m % pp == 0"));
    ck_assert(!eval("layers % pp == 0")); /* 30 % 4 = 2 */
    ck_assert(eval("1 + 2 * 3 == 7"));    /* precedence */
    ck_assert(eval("(1 + 2) * 3 == 9"));
    ck_assert(eval("-m + 20 == 8"));
    ck_assert(eval("m > 8 && pp < 8 || 0"));
    ck_assert(eval("not (m < pp) and training.pp == 4"));
    ck_assert(!eval("!(m >= 12)"));
    ck_assert(eval("layers / pp == 7.5"));
    const char *bad[] = {"m %", "(m == 1", "m == 1 )", "m = 1", ""};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimSweepExpr) e = ppsim_sweep_expr_parse(bad[i], &error);
        ck_assert_msg(e == NULL, "'%s' parsed", bad[i]);
        ck_assert(strstr(error->message, "column") != NULL);
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweepExpr) e = ppsim_sweep_expr_parse("hidden > 1", &error);
    gboolean holds;
    ck_assert(!ppsim_sweep_expr_eval(e, table_lookup, NULL, &holds, &error));
    ck_assert(strstr(error->message, "'model.hidden' names no number") != NULL);
    g_clear_error(&error);
    g_autoptr(PpsimSweepExpr) z = ppsim_sweep_expr_parse("m % (pp - 4) == 0", &error);
    ck_assert(!ppsim_sweep_expr_eval(z, table_lookup, NULL, &holds, &error));
    ck_assert(strstr(error->message, "division by zero") != NULL);
}
END_TEST

/* ---- sweep files ----------------------------------------------------------------------------- */

/* Writes @yaml (with BASE replaced by the explicit-1f1b test scenario) to a temporary sweep
 * file and loads it. */
static PpsimSweep *
load(const char *yaml, char **path_out, GError **error)
{
    g_autofree char *base = ppsim_test_data_path("scenarios/ok/explicit-1f1b.yaml");
    g_auto(GStrv) parts = g_strsplit(yaml, "BASE", -1);
    g_autofree char *text = g_strjoinv(base, parts);
    char *path = NULL;
    int fd = g_file_open_tmp("sweep-XXXXXX.yaml", &path, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    PpsimSweep *s = ppsim_sweep_load_file(path, error);
    if (path_out)
        *path_out = path;
    else {
        g_unlink(path);
        g_free(path);
    }
    return s;
}

/* Each bad sweep file fails at load with the sweep file's line:col and a message. */
START_TEST(test_file_errors)
{
    static const struct {
        const char *yaml, *where, *what;
    } cases[] = {
        {"scenario: BASE\naxes:\n  training.microbatch: [8]\n",
         ":3:25:", "unknown key 'training.microbatch' (did you mean 'microbatches'?)"},
        {"scenario: BASE\naxes:\n  training.pp: [4, x]\n",
         ":3:20:", "'training.pp' must be a positive integer"},
        {"scenario: BASE\naxes:\n  training.pp: []\n", ":3:16:", "axis 'training.pp' is empty"},
        {"scenario: BASE\naxes:\n  training.pp: {from: 2, to: 8, stp: 2}\n",
         ":3:33:", "did you mean 'step'"},
        {"scenario: BASE\naxes:\n  training.pp: {from: 2, to: 8, step: 0}\n",
         ":3:16:", "step must be > 0"},
        {"scenario: BASE\nzip:\n  - {training.pp: [2, 4], training.microbatches: [8]}\n",
         ":3:27:", "zipped axis 'training.microbatches' has 1 values"},
        {"scenario: BASE\naxis:\n  training.pp: [2]\n", ":2:1:", "did you mean 'axes'"},
        {"scenario: BASE\ncolumns: [makespan]\n", ":2:11:", "unknown column 'makespan'"},
        {"scenario: BASE\nconstraints: [\"m % pp = 0\"]\n", ":2:15:", "column 8: unexpected text"},
        {"scenario: BASE\nconstraints: [\"hiden > 2\"]\n", ":2:15:", "'hiden' names no number"},
        {"axes: {training.pp: [2]}\n", ":1:1:", "missing key 'scenario'"},
        {"scenario: nonexistent.yaml\n", ":1:11:", "scenario:"},
        {"scenario: BASE\naxes:\n  schedule: [1f1b, {nme: zb}]\n",
         ":3:20:", "missing key 'name' in schedule"},
        /* a range is tried at its first two values and its last: a fractional step on an
         * integer key fails at the second, a range past the key's bound at the last */
        {"scenario: BASE\naxes:\n  training.microbatches: {from: 4, to: 8, step: 0.5}\n",
         ":3:26:", "value '4.5'"},
        {"scenario: BASE\naxes:\n  training.microbatches: {from: 1, to: 2e7, step: 1e6}\n",
         ":3:26:", "value '19000001'"},
        /* aliases are expanded into text: cycles and bombs stop; deep nesting is refused */
        {"scenario: BASE\nset: {x: &a [*a]}\n", ":2:10:", "the value expands to more than 16 MiB"},
        {"scenario: BASE\naxes:\n  training.pp: [&a [*a]]\n", ":3:17:", "expands to more than"},
        {"scenario: BASE\nset: {x: "
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}\n",
         ":2:72:", "nested more than 64 levels"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimSweep) s = load(cases[i].yaml, NULL, &error);
        ck_assert_msg(s == NULL, "case %u loaded", i);
        ck_assert_msg(strstr(error->message, cases[i].where) != NULL &&
                          strstr(error->message, cases[i].what) != NULL,
                      "case %u: %s", i, error->message);
    }
}
END_TEST

/* ---- running -----------------------------------------------------------------------------------
 */

static gboolean
to_gstring(const char *data, gsize len, gpointer user_data, GError **error)
{
    (void)error;
    g_string_append_len(user_data, data, (gssize)len);
    return TRUE;
}

/* The whole output of @s with @threads threads, shard @k/@n, resuming after @after. */
static GString *
run(const PpsimSweep *s, int threads, int k, int n, guint64 after, GPtrArray *rows)
{
    GString *out = g_string_new(NULL);
    PpsimSweepRunOptions o = {.threads = threads,
                              .shard_k = k,
                              .shard_n = n,
                              .resume_after = after,
                              .format = PPSIM_SWEEP_CSV,
                              .write = to_gstring,
                              .write_data = out};
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_sweep_run(s, &o, rows, &error));
    return out;
}

static const char grid_yaml[] = "scenario: BASE\n"
                                "set: {training.chunks: 2}\n"
                                "axes:\n"
                                "  training.pp: [2, 4, 16]\n"
                                "  training.microbatches: {from: 4, to: 32, times: 2}\n"
                                "  schedule: [[1f1b, interleaved, zb-h1]]\n"
                                "constraints: [\"m >= pp / 2\"]\n";

/* Rows come in point order and are the same bytes with 1 or 2 threads; a refused or invalid
 * point is a row with its error; constraints drop points. */
START_TEST(test_rows_deterministic)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) s = load(grid_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_eq(s->n_points, 12);
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    g_autoptr(GString) one = run(s, 1, 1, 1, G_MAXUINT64, rows);
    g_autoptr(GString) two = run(s, 2, 1, 1, G_MAXUINT64, NULL);
    ck_assert_str_eq(one->str, two->str);
    /* pp = 16 with m = 4 is dropped by the constraint (4 < 8); 11 points x 3 schedules */
    ck_assert_uint_eq(rows->len, 33);
    guint64 prev = 0;
    guint refused = 0;
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        ck_assert_uint_ge(r->point, prev);
        prev = r->point;
        ck_assert(strcmp(r->labels[0], "16") != 0 || strcmp(r->labels[1], "4") != 0);
        if (strcmp(r->status, "refused") == 0) {
            refused++;
            ck_assert(!r->has_metrics);
            /* interleaved with m not a multiple of p: Megatron's rule */
            ck_assert_str_eq(r->schedule, "interleaved");
        }
    }
    ck_assert_uint_gt(refused, 0);
    ck_assert(strstr(one->str, ",refused,") != NULL);
    ck_assert(strstr(one->str, "m a multiple of the group size") != NULL);
}
END_TEST

/* Killing a run at any byte and resuming gives the uninterrupted output, byte for byte: the
 * CLI keeps the rows of the points before the last one written and runs the rest. */
START_TEST(test_resume_anywhere)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) s = load(grid_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autofree char *header = ppsim_sweep_csv_header(s);
    g_autoptr(GString) body = run(s, 1, 1, 1, G_MAXUINT64, NULL);
    g_autoptr(GString) full = g_string_new(header);
    g_string_append(full, body->str);
    for (gsize cut = strlen(header); cut <= full->len; cut += 61) {
        /* what resume_prepare does: whole lines, then drop the last point's rows */
        gsize len = cut;
        while (len > 0 && full->str[len - 1] != '\n')
            len--;
        g_autoptr(GPtrArray) rows =
            g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
        g_autoptr(GArray) offsets = g_array_new(FALSE, FALSE, sizeof(gsize));
        ck_assert(ppsim_sweep_parse_csv(full->str, len, "part", header, rows, offsets, &error));
        gsize keep = strlen(header);
        guint64 after = G_MAXUINT64;
        if (rows->len > 0) {
            guint64 last = ((PpsimSweepRow *)g_ptr_array_index(rows, rows->len - 1))->point;
            guint n = rows->len;
            while (n > 0 && ((PpsimSweepRow *)g_ptr_array_index(rows, n - 1))->point == last)
                n--;
            keep = n < rows->len ? g_array_index(offsets, gsize, n) : len;
            after = last > 0 ? last - 1 : G_MAXUINT64;
        }
        g_autoptr(GString) again = g_string_new_len(full->str, (gssize)keep);
        g_autoptr(GString) rest = run(s, 2, 1, 1, after, NULL);
        g_string_append(again, rest->str);
        ck_assert_str_eq(again->str, full->str);
    }
    /* a file of another sweep is refused */
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    ck_assert(!ppsim_sweep_parse_csv("point,x,schedule,status,error\n", 30, "other", header, rows,
                                     NULL, &error));
    ck_assert(strstr(error->message, "not this sweep's") != NULL);
}
END_TEST

/* Shards partition the points; their rows sorted by point are the single run's. */
START_TEST(test_shards)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) s = load(grid_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    g_autoptr(GString) one = run(s, 1, 1, 1, G_MAXUINT64, all);
    g_auto(GStrv) lines = g_strsplit(one->str, "\n", -1);
    g_autoptr(GPtrArray) merged = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; lines[i] && *lines[i]; i++)
        g_ptr_array_add(merged, NULL);
    guint total = 0;
    for (int k = 1; k <= 3; k++) {
        g_autoptr(GPtrArray) rows =
            g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
        g_autoptr(GString) part = run(s, 2, k, 3, G_MAXUINT64, rows);
        g_auto(GStrv) pl = g_strsplit(part->str, "\n", -1);
        for (guint i = 0; i < rows->len; i++) {
            const PpsimSweepRow *r = g_ptr_array_index(rows, i);
            ck_assert_uint_eq(r->point % 3, (guint64)(k - 1));
            /* the same line as in the single run, at the same rank */
            guint at = 0;
            while (strcmp(lines[at], pl[i]) != 0)
                at++;
            ck_assert_ptr_null(g_ptr_array_index(merged, at));
            merged->pdata[at] = g_strdup(pl[i]);
            total++;
        }
    }
    ck_assert_uint_eq(total, all->len);
}
END_TEST

static gboolean
row_listed(const char *text, const PpsimSweepRow *r)
{
    g_autofree char *tag =
        g_strdup_printf("  %s  training.microbatches=%s\n", r->schedule, r->labels[0]);
    return strstr(text, tag) != NULL;
}

/* The Pareto front: no row that fits is at least as fast and as small as a front row while
 * better in one; every fitting row off the front is dominated by one on it. */
START_TEST(test_summary_pareto)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) s =
        load("scenario: BASE\nset: {training.chunks: 2}\naxes:\n  training.microbatches: [8, 16]\n"
             "  schedule: [1f1b, gpipe, zb-h1, zb-h2, {name: zb, memory_limit: 2}, zb-v, v-min]\n",
             NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    g_autoptr(GString) out = run(s, 2, 1, 1, G_MAXUINT64, rows);
    char *names[] = {"training.microbatches", NULL};
    g_autoptr(GString) sum = g_string_new(NULL);
    ppsim_sweep_summary(sum, rows, names, 1);
    ck_assert(strstr(sum->str, "sweep: 14 points, 14 rows: 14 ok") != NULL);
    const char *front = strstr(sum->str, "Pareto front");
    ck_assert_ptr_nonnull(front);
    /* check the front printed against a brute-force front */
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        gboolean dominated = FALSE;
        for (guint j = 0; j < rows->len; j++) {
            const PpsimSweepRow *q = g_ptr_array_index(rows, j);
            if (q->makespan_ms <= r->makespan_ms && q->peak_memory <= r->peak_memory &&
                (q->makespan_ms < r->makespan_ms || q->peak_memory < r->peak_memory))
                dominated = TRUE;
        }
        gboolean listed = row_listed(front, r);
        if (listed)
            ck_assert_msg(!dominated, "%s m=%s is on the front but dominated", r->schedule,
                          r->labels[0]);
        if (!listed && !dominated) { /* only a tie with a listed row may stay off */
            gboolean tie = FALSE;
            for (guint j = 0; j < rows->len; j++) {
                const PpsimSweepRow *q = g_ptr_array_index(rows, j);
                tie |= q != r && q->makespan_ms == r->makespan_ms &&
                       q->peak_memory == r->peak_memory && row_listed(front, q);
            }
            ck_assert_msg(tie, "%s m=%s is not dominated but off the front", r->schedule,
                          r->labels[0]);
        }
    }
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_sweep_svg_pareto(svg, rows, names, 1, 0);
    ck_assert(g_str_has_prefix(svg->str, "<svg") && strstr(svg->str, "Pareto front") != NULL);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_expressions);
    tcase_add_test(tc, test_file_errors);
    tcase_add_test(tc, test_rows_deterministic);
    tcase_add_test(tc, test_resume_anywhere);
    tcase_add_test(tc, test_shards);
    tcase_add_test(tc, test_summary_pareto);
    suite_add_tcase(s, tc);
    return s;
}
