/* check-fuzz-regress.c: replays every input kept under tests/data/fuzz-regress/<harness>/
 * through the fuzz harness bodies (tests/fuzz/fuzz-targets.c), without clang or libFuzzer:
 * each crasher the fuzzers found stays fixed, and the ASan/UBSan build checks them too. */
#include "ppsim-test.h"
#include "fuzz/fuzz-targets.h"

static const char *const harnesses[] = {"scenario", "set", "csv"};

START_TEST(test_replay)
{
    const char *name = harnesses[_i];
    PpsimFuzzFunc fn = ppsim_fuzz_lookup(name);
    ck_assert(fn != NULL); /* (a function pointer: not through void *) */
    g_autofree char *rel = g_build_filename("fuzz-regress", name, NULL);
    g_autofree char *dir_path = ppsim_test_data_path(rel);
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_msg(dir != NULL, "no folder %s", dir_path);
    int n = 0;
    for (const char *f; (f = g_dir_read_name(dir));) {
        g_autofree char *path = g_build_filename(dir_path, f, NULL);
        g_autofree char *data = NULL;
        gsize len = 0;
        ck_assert(g_file_get_contents(path, &data, &len, NULL));
        /* (slow inputs are bugs too: tools/bench --only hostile times each one) */
        fn((const guint8 *)data, len);
        n++;
    }
    ck_assert_int_gt(n, 0);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("fuzz-regress");
    TCase *tc = tcase_create("replay");
    tcase_add_loop_test(tc, test_replay, 0, G_N_ELEMENTS(harnesses));
    suite_add_tcase(s, tc);
    return s;
}
