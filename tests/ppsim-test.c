/* ppsim-test.c: the runner main shared by every check-<module> binary. */
#include "ppsim-test.h"

#include <stdlib.h>

char *
ppsim_test_data_path(const char *relative)
{
    const char *dir = g_getenv("PPSIM_TEST_DATADIR");
    g_assert(dir != NULL);
    return g_build_filename(dir, relative, NULL);
}

char *
ppsim_test_src_path(const char *relative)
{
    const char *dir = g_getenv("PPSIM_TEST_SRCDIR");
    g_assert(dir != NULL);
    return g_build_filename(dir, relative, NULL);
}

int
main(void)
{
    SRunner *runner = srunner_create(ppsim_test_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
