/* report.h: results -> bytes. Pure writers into a GString; the CLI does the file I/O.
 *
 * Keys and columns are the contract documented in results/README.md and src/README.md; numbers are
 * locale-independent and rows stay in the scenario's schedule order, so output is byte-identical
 * run to run.
 */
#pragma once

#include <glib.h>
#include "sim/run-result.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

#define PPSIM_JSON_SCHEMA_VERSION 1

/* One row per schedule: makespan, bubble ratios, peak activation / memory, OOM. */
void ppsim_report_text(GString *out, const PpsimScenario *scenario, const GPtrArray *results);
/* The JSON object (results/README.md "Command line"): schema_version, scenario, results[...]. */
void ppsim_report_json(GString *out, const PpsimScenario *scenario, const GPtrArray *results);
/* report-samples.c, `ppsim run --samples N` (scenarios/README.md "Variability"): the result's
 * ,"makespan_percentiles":{...} members (with the deterministic makespan beside the
 * percentiles); after the table, one line per schedule; and an SVG
 * of every schedule's empirical makespan CDF on one chart (results without samples are
 * left out). */
void ppsim_report_json_samples(GString *out, const PpsimSampleSummary *s,
                               PpsimTime deterministic_ps);
void ppsim_report_text_samples(GString *out, const GPtrArray *results);
void ppsim_report_svg_cdf(GString *out, const char *title, const GPtrArray *results);
/* One row per (schedule, device). */
void ppsim_report_csv(GString *out, const PpsimScenario *scenario, const GPtrArray *results);

G_END_DECLS

G_BEGIN_DECLS

/* Receives output in chunks; returns FALSE with @error set to stop. */
typedef gboolean (*PpsimWriteFunc)(const char *buf, gsize len, gpointer user_data, GError **error);

/* Chrome/Perfetto Trace Event JSON of one replay: a process per device with compute and copy
 * threads, a "links" process when flows were recorded (a thread per source endpoint and per
 * flow in flight at once, so no two slices of a thread overlap), one complete event per op with its
 * simulated start and duration, flow arrows for cross-device dependencies and offload ->
 * reload pairs, and a memory counter per device (activations, static, buffers, limit).
 * Streamed in chunks of about 64 KiB through @write, so memory stays bounded. */
gboolean ppsim_report_trace_write(const PpsimRunResult *res, PpsimWriteFunc write,
                                  gpointer user_data, GError **error);

typedef struct {
    PpsimTime t0_ps, t1_ps; /* time window; t1 = 0: the whole run. A window reaching past
                               the end is cut there; one starting after it draws nothing and
                               the title says so. */
    int width;              /* pixels of the time axis; 0: default 1200 */
    guint64 trace_max_ops;  /* artefacts: a run with more ops gets no Perfetto trace (its
                               SVG draws density); 0: no limit */
} PpsimSvgOptions;

/* An SVG timeline in the style of the papers' figures: one row per device (compute lane
 * and a thin copy lane), blocks coloured by kind with microbatch numbers, a time axis, a
 * legend, and under it each device's activation memory curve with its peak and the limit.
 * When blocks would average under 4 pixels, lanes show utilisation density per pixel column
 * instead (report-svg-density.h). */
void ppsim_report_svg(GString *out, const PpsimRunResult *res, const PpsimSvgOptions *opts);
/* Several results stacked on one time scale, one panel each. */
void ppsim_report_svg_compare(GString *out, const GPtrArray *results, const PpsimSvgOptions *opts);

G_END_DECLS
