/* ppsim-error.h: GError domains and codes of every ppsim module.
 *
 * Recoverable failures are GErrors; bugs are asserts. Messages are lower-case,
 * without a final period, and name their subject in quotes.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define PPSIM_SCENARIO_ERROR (ppsim_scenario_error_quark())
#define PPSIM_SCHED_ERROR (ppsim_sched_error_quark())
#define PPSIM_SIM_ERROR (ppsim_sim_error_quark())

typedef enum {
    PPSIM_SCENARIO_ERROR_PARSE,  /* not YAML, or not the expected node shape */
    PPSIM_SCENARIO_ERROR_SCHEMA, /* unknown or missing key */
    PPSIM_SCENARIO_ERROR_VALUE,  /* a value out of range or inconsistent with others */
    PPSIM_SCENARIO_ERROR_UNIT,   /* a quantity with a bad or missing unit */
} PpsimScenarioError;

typedef enum {
    PPSIM_SCHED_ERROR_UNKNOWN,     /* no generator of that name */
    PPSIM_SCHED_ERROR_UNSUPPORTED, /* the generator refuses this (p, m, v) or option */
    PPSIM_SCHED_ERROR_INVALID,     /* a schedule (generated or read) fails the checker */
    PPSIM_SCHED_ERROR_PARSE,       /* a schedule file cannot be read */
} PpsimSchedError;

typedef enum {
    PPSIM_SIM_ERROR_DEADLOCK, /* no event left but ops remain */
    PPSIM_SIM_ERROR_LIMIT,    /* a size or time limit was hit */
    PPSIM_SIM_ERROR_IO,       /* writing an artefact failed */
} PpsimSimError;

GQuark ppsim_scenario_error_quark(void);
GQuark ppsim_sched_error_quark(void);
GQuark ppsim_sim_error_quark(void);

G_END_DECLS
