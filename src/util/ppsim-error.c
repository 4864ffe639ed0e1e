/* ppsim-error.c: the GError quarks declared in ppsim-error.h. */
#include "ppsim-error.h"

G_DEFINE_QUARK(ppsim-scenario-error-quark, ppsim_scenario_error)
G_DEFINE_QUARK(ppsim-sched-error-quark, ppsim_sched_error)
G_DEFINE_QUARK(ppsim-sim-error-quark, ppsim_sim_error)
