/* artifacts.c: atomic writes of the run's files; see artifacts.h. The I/O edge of the
 * report layer: everything else in src/report is pure. */
#include "report/artifacts.h"
#include "util/file-replace.h"
#include "util/ppsim-error.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>

char *
ppsim_artifacts_file_stem(const char *label)
{
    /* no separator, no leading dot (hidden files, ".."), never empty */
    char *stem = g_strcanon(g_strdup(label),
                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789._-",
                            '_');
    if (*stem == '\0' || *stem == '.') {
        char *safe = g_strconcat("_", stem, NULL);
        g_free(stem);
        stem = safe;
    }
    return stem;
}

static gboolean
artifacts_io_error(GError **error, const char *what, const char *path, int err)
{
    g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "cannot %s '%s': %s", what, path,
                g_strerror(err));
    return FALSE;
}

static gboolean
artifacts_file_write(const char *buf, gsize len, gpointer data, GError **error)
{
    FILE *f = data;
    if (fwrite(buf, 1, len, f) != len) {
        g_set_error_literal(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* Streams a trace into @path through a temporary file. */
static gboolean
artifacts_trace(const char *path, const PpsimRunResult *res, GError **error)
{
    g_autofree char *tmp = g_strdup_printf("%s.tmp", path);
    FILE *f = g_fopen(tmp, "wb");
    if (f == NULL)
        return artifacts_io_error(error, "write", path, errno);
    gboolean ok = ppsim_report_trace_write(res, artifacts_file_write, f, error);
    if (!ok)
        g_prefix_error(error, "cannot write '%s': ", path);
    if (fclose(f) != 0 && ok)
        ok = artifacts_io_error(error, "write", path, errno);
    if (ok && g_rename(tmp, path) != 0)
        ok = artifacts_io_error(error, "write", path, errno);
    if (!ok)
        g_unlink(tmp);
    return ok;
}

static gboolean
artifacts_text(const char *dir, const char *name, const GString *text, GError **error)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    return ppsim_file_replace(path, text->str, text->len, error);
}

gboolean
ppsim_artifacts_write(const char *dir, const PpsimScenario *scenario, const GPtrArray *results,
                      const GString *summary_json, const GString *summary_csv,
                      const PpsimSvgOptions *svg_opts, GError **error)
{
    (void)scenario;
    if (g_mkdir_with_parents(dir, 0755) != 0)
        return artifacts_io_error(error, "create", dir, errno);
    /* stems taken: the run's own files, then each schedule's */
    g_autoptr(GHashTable) used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_add(used, g_strdup("compare"));
    g_hash_table_add(used, g_strdup("summary"));
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        g_autofree char *stem = ppsim_artifacts_file_stem(res->label);
        for (guint k = i + 1; g_hash_table_contains(used, stem); k++) { /* a label taken */
            g_autofree char *base = ppsim_artifacts_file_stem(res->label);
            g_free(stem);
            stem = g_strdup_printf("%s-%u", base, k);
        }
        g_hash_table_add(used, g_strdup(stem));
        g_autofree char *trace_name = g_strdup_printf("%s.trace.json", stem);
        g_autofree char *trace_path = g_build_filename(dir, trace_name, NULL);
        if (svg_opts != NULL && svg_opts->trace_max_ops > 0 &&
            ppsim_schedule_n_ops(res->schedule) > svg_opts->trace_max_ops)
            g_unlink(trace_path); /* too large: none, and no stale one from an earlier run */
        else if (!artifacts_trace(trace_path, res, error))
            return FALSE;
        g_autoptr(GString) svg = g_string_new(NULL);
        ppsim_report_svg(svg, res, svg_opts);
        g_autofree char *svg_name = g_strdup_printf("%s.svg", stem);
        if (!artifacts_text(dir, svg_name, svg, error))
            return FALSE;
    }
    if (results->len >= 2) {
        g_autoptr(GString) svg = g_string_new(NULL);
        ppsim_report_svg_compare(svg, results, svg_opts);
        if (!artifacts_text(dir, "compare.svg", svg, error))
            return FALSE;
    }
    /* the summaries last: where summary.json exists, every file it speaks of does too */
    return artifacts_text(dir, "summary.csv", summary_csv, error) &&
           artifacts_text(dir, "summary.json", summary_json, error);
}
