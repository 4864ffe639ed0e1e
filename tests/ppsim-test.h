/* ppsim-test.h: shared helpers for the Check test binaries. */
#pragma once

#include <check.h>
#include <stdarg.h>
#include <glib.h>
#include "sim/sim.h"

/* Each check-<module>.c defines this. */
Suite *ppsim_test_suite(void);

/* One run of the ppsim executable ($PPSIM_EXE): exit status (-1 when killed), stdout, stderr. */
typedef struct {
    int status;
    char *out;
    char *err;
} PpsimTestExec;

/* Runs $PPSIM_EXE with @args (NULL-terminated, after the program name) in @cwd (nullable). */
PpsimTestExec ppsim_test_exec(const char *cwd, const char *const *args);
/* Runs it with a va_list of const char * closed by NULL. */
PpsimTestExec ppsim_test_exec_va(const char *cwd, va_list ap);
void ppsim_test_exec_clear(PpsimTestExec *r);

/* Adds @test to @tc where ppsim was built with the CBC solver; elsewhere counts it as skipped,
 * and the binary, after running the rest, names it and exits 77 (meson: skipped), so a test
 * that needs CBC never passes without running. */
#define ppsim_test_add_cbc(tc, test) ppsim_test_add_cbc_full((tc), (test), #test)
void ppsim_test_add_cbc_full(TCase *tc, const TTest *test, const char *name);

/* Path under tests/data (PPSIM_TEST_DATADIR), newly allocated. */
char *ppsim_test_data_path(const char *relative);
/* Path under the source root (PPSIM_TEST_SRCDIR), newly allocated. */
char *ppsim_test_src_path(const char *relative);

/* Loads the scenario file at @relative under the source root (with --set style
 * @overrides, nullable), failing the test on any error. Returns: (transfer full). */
PpsimScenario *ppsim_test_load_scenario(const char *relative, const char *const *overrides);

/* @n doubles drawn uniformly from [@lo, @hi) by @rng (a fixed-seed GRand). */
GArray *ppsim_test_random_doubles(int n, GRand *rng, double lo, double hi);

/* Replays schedule @name on @scenario, with generator option @key = @value unless @key is
 * NULL. Returns: (transfer full) (nullable). */
PpsimRunResult *ppsim_test_run_option(const PpsimScenario *scenario, const char *name,
                                      const char *key, const char *value, GError **error);

/* The report of the one run @r of @scenario: JSON when @json, else the text. Returns:
 * (transfer full) */
GString *ppsim_test_report_one(const PpsimScenario *scenario, PpsimRunResult *r, gboolean json);

/* Fails the test with the error's message unless @error is NULL. */
#define ppsim_assert_no_error(error)                                                               \
    ck_assert_msg((error) == NULL, "unexpected error: %s", (error) ? (error)->message : "")

/* Fails unless @error is set with @domain and @code; frees nothing. */
#define ppsim_assert_error(error, want_domain, want_code)                                          \
    do {                                                                                           \
        ck_assert_msg((error) != NULL, "expected an error, got none");                             \
        ck_assert_msg(g_error_matches((error), (want_domain), (want_code)),                        \
                      "wrong error (domain %s code %d): %s", g_quark_to_string((error)->domain),   \
                      (error)->code, (error)->message);                                            \
    } while (0)

/* The note of choice @key in @res's "chosen for you" list, NULL when there is none. */
const char *ppsim_test_choice_note(const PpsimRunResult *res, const char *key);

/* Checks the `budget` option of searching generator @name on @sc (run with option
 * @key = @value as well unless @key is NULL): the default budget gives the schedule the
 * unlimited search gives, with no "budget" choice; so does budget 0; a bad budget is refused.
 * Returns the default run. (transfer full) */
PpsimRunResult *ppsim_test_budget_default_is_full(const PpsimScenario *sc, const char *name,
                                                  const char *key, const char *value);
