/* op-cache.c: cached schedules ([OP] §4.2); see op-cache.h.
 *
 * [OP] discretises the estimated parameters "into proportional values" and warm-starts the
 * solver from the most similar cached schedule. Here similarity is equality of the
 * discretised key (costs relative to the mean forward, so a uniformly faster machine hits
 * the same entry), and an entry is only ever a candidate warm start: it is checked, timed
 * and measured on the current costs like any other, so a stale entry can cost time, never
 * a wrong result. The only file I/O of the generators lives here.
 */
#include "sched/optpipe/op-cache.h"
#include "util/file-replace.h"
#include "util/ppsim-error.h"
#include "util/read-file.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* 2: the metadata holds the CSV's SHA-256, so a corrupt or swapped CSV is never taken */
#define CACHE_VERSION 2
/* Largest metadata file read (one JSON line of about 200 bytes is written). */
#define CACHE_META_MAX_BYTES 65536

static void
key_ratio(GString *k, double value, double unit, int steps)
{
    g_string_append_printf(k, "%ld,", unit > 0 ? lround(value / unit * steps) : 0L);
}

char *
ppsim_op_cache_key(const PpsimPipelineShape *shape, const PpsimCostEstimates *c,
                   const gint64 *limit, gboolean offload)
{
    double unit = 0;
    for (int s = 0; s < c->n_stages; s++)
        unit += (double)c->stage[s].f_ps / c->n_stages;
    GString *k = g_string_new(NULL);
    g_string_append_printf(k, "v%d;p%d;m%d;off%d;comm", CACHE_VERSION, shape->p, shape->m, offload);
    key_ratio(k, (double)c->comm_ps, unit, 8);
    for (int s = 0; s < c->n_stages; s++) {
        const PpsimStageEstimate *st = &c->stage[s];
        g_string_append_printf(k, ";s%d:", s);
        key_ratio(k, (double)st->f_ps, unit, 8);
        key_ratio(k, (double)st->b_ps, unit, 8);
        key_ratio(k, (double)st->w_ps, unit, 8);
        key_ratio(k, (double)st->off_ps, unit, 8);
        key_ratio(k, (double)st->act_w, (double)st->act, 8);
        if (limit != NULL)
            g_string_append_printf(k, "cap%ld", (long)floor((double)limit[s] / st->act * 4));
    }
    return g_string_free(k, FALSE);
}

static char *
cache_path(const char *dir, const char *key, const char *ext)
{
    g_autofree char *hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);
    g_autofree char *name = g_strdup_printf("optpipe-%.16s.%s", hash, ext);
    return g_build_filename(dir, name, NULL);
}

PpsimSchedule *
ppsim_op_cache_load(const char *dir, const char *key, int p, int m, char **warning)
{
    *warning = NULL;
    g_autofree char *csv_path = cache_path(dir, key, "csv");
    g_autofree char *meta_path = cache_path(dir, key, "json");
    if (!g_file_test(meta_path, G_FILE_TEST_EXISTS))
        return NULL;
    g_autofree char *meta = NULL, *csv = NULL;
    gsize csv_len = 0;
    g_autoptr(GError) error = NULL;
    gsize meta_len = 0;
    if (!ppsim_read_file(meta_path, CACHE_META_MAX_BYTES, "a cache entry's metadata", &meta,
                         &meta_len, &error) ||
        !ppsim_read_file(csv_path, PPSIM_CSV_MAX_BYTES, "a schedule CSV", &csv, &csv_len, &error)) {
        *warning = g_strdup_printf("cached schedule ignored: %s", error->message);
        return NULL;
    }
    g_autofree char *want = g_strdup_printf("\"key\":\"%s\"", key);
    if (memchr(meta, '\0', meta_len) != NULL || strstr(meta, want) == NULL) {
        *warning = g_strdup_printf("cached schedule '%s' ignored: stale or corrupt metadata "
                                   "(another key)",
                                   meta_path);
        return NULL;
    }
    g_autofree char *sum =
        g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)csv, csv_len);
    g_autofree char *want_sum = g_strdup_printf("\"csv_sha256\":\"%s\"", sum);
    if (strstr(meta, want_sum) == NULL) {
        *warning = g_strdup_printf("cached schedule '%s' ignored: its checksum is not the one "
                                   "its metadata recorded (corrupt, or another entry's file)",
                                   csv_path);
        return NULL;
    }
    g_autoptr(PpsimSchedule) s = ppsim_schedule_from_csv(csv, csv_len, csv_path, &error);
    if (s != NULL && (s->n_devices != p || s->n_stages != p || s->n_microbatches != m))
        g_set_error(&error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "shape p=%d m=%d, expected p=%d m=%d", s->n_devices, s->n_microbatches, p, m);
    if (error == NULL)
        ppsim_schedule_validate(s, &error);
    if (error != NULL) {
        *warning = g_strdup_printf("cached schedule '%s' ignored: %s", csv_path, error->message);
        return NULL;
    }
    return g_steal_pointer(&s);
}

gboolean
ppsim_op_cache_store(const char *dir, const char *key, const PpsimSchedule *sched,
                     PpsimTime makespan_ps, GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "cannot create the cache directory '%s': %s", dir, g_strerror(e));
        return FALSE;
    }
    g_autofree char *csv_path = cache_path(dir, key, "csv");
    g_autofree char *meta_path = cache_path(dir, key, "json");
    g_autoptr(GString) csv = ppsim_schedule_to_csv(sched);
    g_autofree char *sum =
        g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)csv->str, csv->len);
    g_autofree char *meta =
        g_strdup_printf("{\"version\":%d,\"key\":\"%s\",\"p\":%d,\"m\":%d,\"makespan_ms\":%.6f,"
                        "\"csv_sha256\":\"%s\"}\n",
                        CACHE_VERSION, key, sched->n_devices, sched->n_microbatches,
                        (double)makespan_ps / 1e9, sum);
    return ppsim_file_replace(csv_path, csv->str, csv->len, error) &&
           ppsim_file_replace(meta_path, meta, strlen(meta), error);
}
