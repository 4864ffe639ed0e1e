#include "ppsim-test.h"
Suite *ppsim_test_suite(void) { return suite_create("schedule"); }
