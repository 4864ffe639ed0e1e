/* artifacts.h: the files `ppsim run` leaves under results/<scenario>/ (or --output). */
#pragma once

#include <glib.h>
#include "report/report.h"

G_BEGIN_DECLS

/* Writes into @dir (created if needed): per result <label>.trace.json (Perfetto) and
 * <label>.svg (timeline), compare.svg for two results or more, and last summary.csv and
 * summary.json (the given text): where summary.json exists, every file it names does too.
 * @svg (nullable) sets the SVG time window and width, and the op count above which a result
 * gets no trace (svg->trace_max_ops). Labels become file names by
 * ppsim_artifacts_file_stem(); a stem already taken (two schedules with one label, or a label
 * "compare" or "summary") gets "-N". Every file goes to a temporary name and is renamed, so
 * an interrupted run never leaves a half-written file; on error the temporary file is
 * removed. Errors: G_FILE_ERROR or PPSIM_SIM_ERROR_IO naming the path. */
gboolean ppsim_artifacts_write(const char *dir, const PpsimScenario *scenario,
                               const GPtrArray *results, const GString *summary_json,
                               const GString *summary_csv, const PpsimSvgOptions *svg,
                               GError **error);

/* The file-name form of a label or a scenario name: every character outside [A-Za-z0-9._-]
 * becomes '_' (so no '/'), and a name that is empty or starts with '.' (hidden, "..") gets a
 * leading '_'. Returns: (transfer full). */
char *ppsim_artifacts_file_stem(const char *label);

G_END_DECLS
