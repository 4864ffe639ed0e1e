/* report.h: results -> bytes. Pure writers into a GString; the CLI does the file I/O.
 *
 * Keys and columns are the contract of DESIGN 7; numbers are locale-independent and
 * rows stay in the scenario's schedule order, so output is byte-identical run to run.
 */
#pragma once

#include <glib.h>
#include "run-result.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

#define PPSIM_JSON_SCHEMA_VERSION 1

/* One row per schedule: makespan, bubble ratios, peak activation / memory, OOM. */
void ppsim_report_text(GString *out, const PpsimScenario *scenario, const GPtrArray *results);
/* DESIGN 7 JSON object: schema_version, scenario, results[...]. */
void ppsim_report_json(GString *out, const PpsimScenario *scenario, const GPtrArray *results);
/* One row per (schedule, device). */
void ppsim_report_csv(GString *out, const PpsimScenario *scenario, const GPtrArray *results);

G_END_DECLS
