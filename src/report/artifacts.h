/* artifacts.h: the files `ppsim run` leaves under results/<scenario>/ (or --output). */
#pragma once

#include <glib.h>
#include "report/report.h"

G_BEGIN_DECLS

/* Writes into @dir (created if needed): summary.json and summary.csv (the given text), and
 * per result <label>.trace.json (Perfetto) and <label>.svg (timeline), plus compare.svg for
 * two results or more; @svg (nullable) sets the SVG time window and width. Labels become file names
 * with every character outside [A-Za-z0-9._-] replaced by '_'. Every file is written to
 * "<name>.tmp" and renamed, so an interrupted run never leaves a half-written file; on error the
 * temporary file is removed. Errors: G_FILE_ERROR or PPSIM_SIM_ERROR_IO naming the path. */
gboolean ppsim_artifacts_write(const char *dir, const PpsimScenario *scenario,
                               const GPtrArray *results, const GString *summary_json,
                               const GString *summary_csv, const PpsimSvgOptions *svg,
                               GError **error);

/* The file-name form of a schedule label. Returns: (transfer full). */
char *ppsim_artifacts_file_stem(const char *label);

G_END_DECLS
