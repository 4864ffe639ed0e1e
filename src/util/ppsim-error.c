/* ppsim-error.c: the GError quarks declared in ppsim-error.h. Written out rather than with
 * G_DEFINE_QUARK, whose stringified dashed names a formatter would split. */
#include "ppsim-error.h"

GQuark
ppsim_scenario_error_quark(void)
{
    return g_quark_from_static_string("ppsim-scenario-error-quark");
}

GQuark
ppsim_sched_error_quark(void)
{
    return g_quark_from_static_string("ppsim-sched-error-quark");
}

GQuark
ppsim_sim_error_quark(void)
{
    return g_quark_from_static_string("ppsim-sim-error-quark");
}
