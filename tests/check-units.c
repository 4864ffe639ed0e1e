/* check-units.c: the quantity grammar, did-you-mean, locale-free formatting, CSV fields, and
 * input as messages quote it (capped, escaped) and as the size-limited reader reads it. */
#include "ppsim-test.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"
#include "util/quote.h"
#include "util/read-file.h"
#include "util/suggest.h"
#include "util/units.h"

#include <glib/gstdio.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double
parse_ok(const char *text, PpsimDimension dim, const char *def)
{
    double v = -1;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(ppsim_units_parse(text, dim, def, &v, &error), "'%s': %s", text,
                  error ? error->message : "");
    return v;
}

START_TEST(test_units_good)
{
    ck_assert_double_eq(parse_ok("80GiB", PPSIM_DIM_BYTES, NULL), 80.0 * (1ull << 30));
    ck_assert_double_eq(parse_ok("80 GB", PPSIM_DIM_BYTES, NULL), 80e9);
    ck_assert_double_eq(parse_ok("2TiB", PPSIM_DIM_BYTES, NULL), 2.0 * (1ull << 40));
    ck_assert_double_eq(parse_ok("25GB/s", PPSIM_DIM_BANDWIDTH, NULL), 25e9);
    ck_assert_double_eq(parse_ok("200Gbps", PPSIM_DIM_BANDWIDTH, NULL), 25e9);
    ck_assert_double_eq(parse_ok("400 Gb/s", PPSIM_DIM_BANDWIDTH, NULL), 50e9);
    ck_assert_double_eq(parse_ok("1.5MiB/s", PPSIM_DIM_BANDWIDTH, NULL), 1.5 * 1048576);
    ck_assert_double_eq_tol(parse_ok("2us", PPSIM_DIM_TIME, NULL), 2e-6, 1e-18);
    ck_assert_double_eq_tol(parse_ok("1.5ms", PPSIM_DIM_TIME, NULL), 1.5e-3, 1e-18);
    ck_assert_double_eq_tol(parse_ok("18.522", PPSIM_DIM_TIME, "ms"), 18.522e-3, 1e-15);
    ck_assert_double_eq(parse_ok("312TFLOPS", PPSIM_DIM_FLOPS, NULL), 312e12);
    ck_assert_double_eq(parse_ok("989 TFLOP/s", PPSIM_DIM_FLOPS, NULL), 989e12);
    ck_assert_double_eq(parse_ok("1.4G", PPSIM_DIM_COUNT, NULL), 1.4e9);
    ck_assert_double_eq(parse_ok("16", PPSIM_DIM_COUNT, NULL), 16);
    ck_assert_double_eq(parse_ok("1e3KB", PPSIM_DIM_BYTES, NULL), 1e6);
    ck_assert_double_eq(parse_ok("0B", PPSIM_DIM_BYTES, NULL), 0);
}
END_TEST

START_TEST(test_units_bad)
{
    const struct {
        const char *text;
        PpsimDimension dim;
        const char *message;
    } cases[] = {
        {"80", PPSIM_DIM_BYTES, "missing unit in '80' (expected a size like '80GiB')"},
        {"80 GX", PPSIM_DIM_BYTES, "expected a size like '80GiB', got '80 GX'"},
        {"25GB/s", PPSIM_DIM_TIME, "expected a time like '2us', got '25GB/s'"},
        {"-1GB", PPSIM_DIM_BYTES, "expected a size like '80GiB', got '-1GB'"},
        {"nanGB", PPSIM_DIM_BYTES, "expected a size like '80GiB', got 'nanGB'"},
        {"", PPSIM_DIM_TIME, "expected a time like '2us', got ''"},
        {"2usx", PPSIM_DIM_TIME, "expected a time like '2us', got '2usx'"},
        {"25gb/s", PPSIM_DIM_BANDWIDTH, "expected a bandwidth like '25GB/s', got '25gb/s'"},
        {"312TF", PPSIM_DIM_FLOPS, "expected a FLOP rate like '312TFLOPS', got '312TF'"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        double v;
        g_autoptr(GError) error = NULL;
        ck_assert(!ppsim_units_parse(cases[i].text, cases[i].dim, NULL, &v, &error));
        ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_UNIT);
        ck_assert_str_eq(error->message, cases[i].message);
    }
}
END_TEST

START_TEST(test_time_rounding)
{
    ck_assert_int_eq(ppsim_time_from_seconds(1e-3), PPSIM_PS_PER_MS);
    ck_assert_int_eq(ppsim_time_from_seconds(18.522e-3), 18522000000);
    ck_assert_int_eq(ppsim_time_from_seconds(0.5e-12), 1); /* half away from zero */
    /* no undefined conversion, whatever the double: clamped to 2^60 */
    ck_assert_int_eq(ppsim_time_from_seconds(1e30), PPSIM_COST_MAX);
    ck_assert_int_eq(ppsim_time_from_seconds(-1e30), -PPSIM_COST_MAX);
    ck_assert_int_eq(ppsim_round_clamped(NAN), PPSIM_COST_MAX);
    ck_assert_int_eq(ppsim_round_clamped(INFINITY), PPSIM_COST_MAX);
    ck_assert_int_eq(ppsim_mul_clamped(3, 5), 15);
    ck_assert_int_eq(ppsim_mul_clamped(16777215, G_GINT64_CONSTANT(10000000000000000)),
                     PPSIM_COST_MAX);
    ck_assert_int_eq(ppsim_mul_clamped(0, G_MAXINT64), 0);
    ck_assert_int_eq(ppsim_time_from_seconds(0.49e-12), 0);
}
END_TEST

START_TEST(test_suggest)
{
    const char *keys[] = {"hardware", "model", "training", "schedule", "memory", "costs", NULL};
    ck_assert_str_eq(ppsim_suggest("hardwre", keys), "hardware");
    ck_assert_str_eq(ppsim_suggest("trainnig", keys), "training"); /* transposition */
    ck_assert_str_eq(ppsim_suggest("sched", keys), "schedule");    /* unique prefix */
    ck_assert_ptr_null(ppsim_suggest("zebra", keys));
    ck_assert_uint_eq(ppsim_edit_distance("ab", "ba"), 1);
    ck_assert_uint_eq(ppsim_edit_distance("", "abc"), 3);
}
END_TEST

/* The numbers every output format writes, in whatever locale is current. */
static void
fmt_sample(GString *s)
{
    ppsim_fmt_fixed(s, 3.14159, 2);
    g_string_append_c(s, ' ');
    ppsim_fmt_fixed(s, -0.0001, 2);
    g_string_append_c(s, ' ');
    ppsim_fmt_double(s, 0.1);
    g_string_append_c(s, ' ');
    ppsim_fmt_ms(s, 18522000000);
    g_string_append_c(s, ' ');
    ppsim_fmt_ms(s, 1);
    g_string_append_c(s, ' ');
    ppsim_fmt_ms(s, 7 * PPSIM_PS_PER_MS);
    g_string_append_c(s, ' ');
    ppsim_fmt_bytes_human(s, 1.5 * (1 << 30));
}

#define FMT_SAMPLE "3.14 0.00 0.1 18.522 0.000000001 7 1.50 GiB"

START_TEST(test_fmt_c_locale)
{
    g_autoptr(GString) s = g_string_new(NULL);
    fmt_sample(s);
    ck_assert_str_eq(s->str, FMT_SAMPLE);
}
END_TEST

/* Under a locale whose decimal separator is a comma (switched per thread with uselocale), the
 * output is the same. Skipped, with a message, when no such locale is installed. */
START_TEST(test_fmt_comma_locale)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8",  "fr_FR.UTF-8",
                                        "fr_FR.utf8",  "nl_NL.UTF-8", "ru_RU.UTF-8"};
    locale_t loc = (locale_t)0;
    const char *name = NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(names) && loc == (locale_t)0; i++) {
        loc = newlocale(LC_ALL_MASK, names[i], (locale_t)0);
        name = names[i];
    }
    if (loc == (locale_t)0) {
        fprintf(stderr, "check-units: SKIP locale-free formatting under a decimal-comma locale: "
                        "none of de_DE, fr_FR, nl_NL, ru_RU is installed\n");
        return;
    }
    locale_t old = uselocale(loc);
    ck_assert_msg(strcmp(localeconv()->decimal_point, ",") == 0, "%s: decimal point '%s'", name,
                  localeconv()->decimal_point);
    g_autoptr(GString) s = g_string_new(NULL);
    fmt_sample(s);
    uselocale(old);
    freelocale(loc);
    ck_assert_str_eq(s->str, FMT_SAMPLE);
}
END_TEST

/* One CSV field, RFC 4180: quoted when it holds , " CR or LF; quotes doubled; with one_line
 * the line breaks become spaces inside the quotes. */
START_TEST(test_fmt_csv_field)
{
    static const struct {
        const char *in;
        gboolean one_line;
        const char *want;
    } cases[] = {
        {"plain", FALSE, "plain"},
        {"", FALSE, ""},
        {"zb {memory_limit: 8}", FALSE, "zb {memory_limit: 8}"},
        {"a,b", FALSE, "\"a,b\""},
        {"say \"hi\"", FALSE, "\"say \"\"hi\"\"\""},
        {"two\nlines", FALSE, "\"two\nlines\""},
        {"cr\rhere", FALSE, "\"cr\rhere\""},
        {"two\r\nlines", TRUE, "\"two  lines\""},
        {"x,\"y\"\n", TRUE, "\"x,\"\"y\"\" \""},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GString) s = g_string_new(NULL);
        ppsim_fmt_csv_field(s, cases[i].in, cases[i].one_line);
        ck_assert_str_eq(s->str, cases[i].want);
    }
}
END_TEST

/* Quoted input: 100 characters then "…", control bytes and non-UTF-8 bytes escaped, valid
 * multi-byte characters kept (counted once), NUL inside a counted string shown. */
START_TEST(test_quote)
{
    g_autofree char *x100 = g_strnfill(100, 'x'), *x101 = g_strnfill(101, 'x');
    g_autofree char *q100 = ppsim_quote(x100), *q101 = ppsim_quote(x101);
    ck_assert_str_eq(q100, x100);
    g_autofree char *want101 = g_strconcat(x100, "…", NULL);
    ck_assert_str_eq(q101, want101);
    g_autofree char *ctl = ppsim_quote_len("a\r\n\t\x1b[2J\0b\xff\xc3\xa9\xc2\x9b", 15);
    ck_assert_str_eq(ctl, "a\\r\\n\\t\\x1B[2J\\x00b\\xFFé\\xC2\\x9B");
    g_autoptr(GString) many = g_string_new(NULL);
    for (int i = 0; i < 150; i++)
        g_string_append(many, "é");
    g_autofree char *qm = ppsim_quote(many->str);
    ck_assert_int_eq(g_utf8_strlen(qm, -1), 101); /* 100 characters, then … */
    g_autofree char *safe = ppsim_message_sanitize("line 1\nline\r2 \x1b[31m", 4096);
    ck_assert_str_eq(safe, "line 1\nline\\r2 \\x1B[31m");
    g_autofree char *big = g_strnfill(10000, 'y');
    g_autofree char *cut = ppsim_message_sanitize(big, 4096);
    ck_assert_uint_eq(strlen(cut), 4096 + strlen("…"));
}
END_TEST

/* The reader stops at its limit (a regular file by its size, /dev/zero at its first NUL)
 * and names the file and the limit. */
START_TEST(test_read_file_limits)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-read-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "f.txt", NULL);
    ck_assert(g_file_set_contents(path, "0123456789", 10, NULL));
    char *text = NULL;
    gsize len = 0;
    GError *error = NULL;
    ck_assert(ppsim_read_file(path, 10, "a test file", &text, &len, &error));
    ck_assert_uint_eq(len, 10);
    ck_assert_str_eq(text, "0123456789");
    g_free(text);
    ck_assert(!ppsim_read_file(path, 9, "a test file", &text, &len, &error));
    ck_assert_msg(strstr(error->message, "more than 9 bytes, the limit for a test file"), "%s",
                  error->message);
    g_clear_error(&error);
    ck_assert(g_file_set_contents(path, "ab\ncd\0e", 8, NULL));
    ck_assert(!ppsim_read_file(path, 100, "a test file", &text, &len, &error));
    ck_assert_msg(strstr(error->message, "f.txt:2:3: a NUL byte (a test file is text"), "%s",
                  error->message);
    g_clear_error(&error);
    if (g_file_test("/dev/zero", G_FILE_TEST_EXISTS)) {
        ck_assert(
            !ppsim_read_file("/dev/zero", (gsize)1 << 30, "a test file", &text, &len, &error));
        ck_assert_msg(strstr(error->message, "/dev/zero:1:1: a NUL byte"), "%s", error->message);
        g_clear_error(&error);
    }
    g_unlink(path);
    g_rmdir(dir);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, test_units_good);
    tcase_add_test(tc, test_units_bad);
    tcase_add_test(tc, test_time_rounding);
    tcase_add_test(tc, test_suggest);
    tcase_add_test(tc, test_fmt_c_locale);
    tcase_add_test(tc, test_fmt_comma_locale);
    tcase_add_test(tc, test_fmt_csv_field);
    tcase_add_test(tc, test_quote);
    tcase_add_test(tc, test_read_file_limits);
    suite_add_tcase(s, tc);
    return s;
}
