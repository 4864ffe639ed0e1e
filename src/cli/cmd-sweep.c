/* cmd-sweep.c: `ppsim sweep FILE`, `ppsim merge PARTS...`, and the sweep half of
 * `ppsim run --grid`: rows streamed to a file or stdout, resume, shards, summaries, plots. */
#include "cli/cli.h"
#include "sweep/sweep.h"
#include "util/ppsim-error.h"
#include "util/read-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- output ---------------------------------------------------------------------------------- */

typedef struct {
    FILE *fp;
    const char *name;
    gboolean is_file; /* --output FILE: a failed write can be resumed */
    /* test hook (PPSIM_TEST_WRITE_FAIL_AFTER=N): writes past N bytes of this run fail with
     * ENOSPC, as on a full disk; -1 when unset */
    gint64 fail_after, written;
} Out;

static gboolean
out_fail(Out *o, int err, GError **error)
{
    g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "writing %s: %s%s", o->name,
                g_strerror(err),
                o->is_file ? " (the rows written so far are kept: make room, then run the same "
                             "command with --resume)"
                           : "");
    return FALSE;
}

static gboolean
out_write(const char *data, gsize len, gpointer user_data, GError **error)
{
    Out *o = user_data;
    if (o->fail_after >= 0 && o->written + (gint64)len > o->fail_after) {
        /* what a full disk does: the bytes that fit go out, the rest fails */
        gsize fit = (gsize)MAX(o->fail_after - o->written, 0);
        if (fwrite(data, 1, fit, o->fp) == fit)
            fflush(o->fp);
        o->written += (gint64)fit;
        return out_fail(o, ENOSPC, error);
    }
    if (fwrite(data, 1, len, o->fp) != len)
        return out_fail(o, errno, error);
    o->written += (gint64)len;
    return TRUE;
}

static gboolean
out_close(Out *o, GError **error)
{
    gboolean ok = fflush(o->fp) == 0 && !ferror(o->fp);
    int saved = errno;
    if (o->fp != stdout)
        ok = fclose(o->fp) == 0 && ok;
    if (!ok && (error == NULL || *error == NULL))
        out_fail(o, saved ? saved : errno ? errno : EIO, error);
    o->fp = NULL;
    return ok;
}

/* Opens --output @path for a sweep without truncating it and takes an exclusive lock on it
 * (flock; released when the process ends, however it ends), so that two sweeps never write
 * the same file at once: the second refuses, naming the file, before touching a byte. A file
 * system without locks (EOPNOTSUPP, ENOLCK) goes without. Returns the descriptor or -1. */
static int
out_lock(const char *path, GError **error)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "opening %s: %s", path,
                    g_strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EAGAIN)) {
        close(fd);
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                    "%s is being written by another ppsim sweep (it holds the file's lock); wait "
                    "for it to end, or write to another --output",
                    path);
        return -1;
    }
    return fd;
}

/* ---- progress ---------------------------------------------------------------------------------
 */

typedef struct {
    gint64 start, last;
    const char *label;
} Progress;

static void
progress_show(guint64 done, guint64 total, gpointer user_data)
{
    Progress *p = user_data;
    gint64 now = g_get_monotonic_time();
    if (done < total && now - p->last < 200000)
        return;
    p->last = now;
    double elapsed = (double)(now - p->start) / 1e6;
    double eta = done > 0 ? elapsed * (double)(total - done) / (double)done : 0;
    int width = 30, filled = total ? (int)(width * done / total) : width;
    fprintf(
        stderr,
        "\rppsim: %s [%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " points, ETA %.0f s   ",
        p->label, filled, "##############################", width - filled, "", done, total, eta);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* ---- resume -----------------------------------------------------------------------------------
 */

/* Reads what an interrupted run left in @path: keeps the header and every row of the points
 * before the last one written (which may be incomplete), truncates the file there and sets
 * *@resume_after. A missing or empty file starts afresh (FALSE in *@have_header). */
static gboolean
resume_prepare(const char *path, const char *header, int shard_k, int shard_n, GPtrArray *rows,
               guint64 *resume_after, gboolean *have_header, GError **error)
{
    *resume_after = G_MAXUINT64;
    *have_header = FALSE;
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_test(path, G_FILE_TEST_EXISTS))
        return TRUE;
    if (!ppsim_read_file(path, PPSIM_CSV_MAX_BYTES, "a sweep's rows", &text, &len, error))
        return FALSE;
    while (len > 0 && text[len - 1] != '\n') /* a row cut mid-way */
        len--;
    if (len > 0 && ppsim_sweep_shard_line(text, len, NULL, NULL) == len)
        len = 0;    /* a shard's first line alone: start afresh */
    if (len == 0) { /* nothing whole, not even the header (cut by a kill or a full disk) */
        if (truncate(path, 0) != 0) {
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "--resume: truncating %s: %s",
                        path, g_strerror(errno));
            return FALSE;
        }
        return TRUE;
    }
    g_autoptr(GArray) offsets = g_array_new(FALSE, FALSE, sizeof(gsize));
    g_autoptr(GPtrArray) got = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    if (!ppsim_sweep_parse_csv(text, len, path, header, got, offsets, error)) {
        g_prefix_error(error, "--resume: ");
        return FALSE;
    }
    int file_k = 1, file_n = 1;
    gsize skip = ppsim_sweep_shard_line(text, len, &file_k, &file_n);
    if (file_k != shard_k || file_n != shard_n) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                    "--resume: %s holds shard %d/%d, not %d/%d", path, file_k, file_n, shard_k,
                    shard_n);
        return FALSE;
    }
    *have_header = TRUE;
    gsize keep = skip + strlen(header);
    if (got->len > 0) {
        guint64 last = ((PpsimSweepRow *)g_ptr_array_index(got, got->len - 1))->point;
        guint n = got->len;
        while (n > 0 && ((PpsimSweepRow *)g_ptr_array_index(got, n - 1))->point == last)
            n--;
        keep = n < got->len ? g_array_index(offsets, gsize, n) : len;
        *resume_after = last > 0 ? last - 1 : G_MAXUINT64;
        for (guint i = 0; i < n; i++)
            g_ptr_array_add(rows, g_steal_pointer(&got->pdata[i]));
    }
    if (truncate(path, (off_t)keep) != 0) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "--resume: truncating %s: %s", path,
                    g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* ---- summaries ----------------------------------------------------------------------------------
 */

static char **
axis_names(const PpsimSweep *s, int *n, int *m_axis)
{
    GPtrArray *names = g_ptr_array_new();
    *m_axis = -1;
    for (guint i = 0; i < s->axes->len; i++) {
        const PpsimSweepAxis *a = g_ptr_array_index(s->axes, i);
        if (strcmp(a->path, "schedule") == 0)
            continue;
        if (strcmp(a->path, "training.microbatches") == 0)
            *m_axis = (int)names->len;
        g_ptr_array_add(names, g_strdup(a->path));
    }
    *n = (int)names->len;
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

static gboolean
write_plots(const char *dir, const GPtrArray *rows, char **names, int n, int m_axis, double limit,
            GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "--plot: creating %s: %s", dir,
                    g_strerror(errno));
        return FALSE;
    }
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_sweep_svg_pareto(svg, rows, names, n, limit);
    g_autofree char *pareto = g_build_filename(dir, "pareto.svg", NULL);
    if (!ppsim_cli_write_file(pareto, svg->str, svg->len, error))
        return FALSE;
    if (m_axis < 0)
        return TRUE;
    g_string_truncate(svg, 0);
    ppsim_sweep_svg_bubble(svg, rows, names, n, m_axis);
    g_autofree char *bubble = g_build_filename(dir, "bubble.svg", NULL);
    return ppsim_cli_write_file(bubble, svg->str, svg->len, error);
}

/* ---- running
 * ------------------------------------------------------------------------------------- */

int
ppsim_cli_sweep_rows(const PpsimSweep *s, const PpsimCliSweepOptions *o, GPtrArray *rows)
{
    g_autoptr(GError) error = NULL;
    PpsimSweepRunOptions run = {.threads =
                                    o->threads > 0 ? o->threads : (int)g_get_num_processors(),
                                .shard_k = 1,
                                .shard_n = 1,
                                .resume_after = G_MAXUINT64,
                                .format = PPSIM_SWEEP_CSV,
                                .write = out_write};
    if (o->format != NULL && strcmp(o->format, "jsonl") == 0)
        run.format = PPSIM_SWEEP_JSONL;
    else if (o->format != NULL && strcmp(o->format, "csv") != 0)
        return ppsim_cli_usage_quoted("--format must be csv or jsonl for a sweep, got", o->format);
    if (o->shard != NULL) {
        char *end = NULL;
        gint64 k = g_ascii_strtoll(o->shard, &end, 10), n = 0;
        if (end != o->shard && *end == '/')
            n = g_ascii_strtoll(end + 1, &end, 10);
        if (*end != '\0' || n < 1 || k < 1 || k > n || n > G_MAXINT)
            return ppsim_cli_usage_quoted("--shard must be K/N with 1 <= K <= N, got", o->shard);
        run.shard_k = (int)k;
        run.shard_n = (int)n;
    }
    if (o->resume && o->output == NULL)
        return ppsim_cli_usage("--resume needs --output FILE (the rows written so far)");
    if (o->resume && run.format != PPSIM_SWEEP_CSV)
        return ppsim_cli_usage("--resume reads CSV output; drop --format jsonl");
    g_autofree char *header = ppsim_sweep_csv_header(s);
    gboolean have_header = FALSE;
    Out out = {.fp = stdout, .name = "stdout", .fail_after = -1};
    const char *hook = g_getenv("PPSIM_TEST_WRITE_FAIL_AFTER");
    if (hook != NULL && *hook != '\0')
        out.fail_after = g_ascii_strtoll(hook, NULL, 10);
    if (o->output != NULL) {
        /* the lock first: a second sweep must not truncate (or resume) a file in use */
        int fd = out_lock(o->output, &error);
        if (fd < 0)
            return ppsim_cli_fail(error);
        struct stat st;
        gboolean regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        if (o->resume && !resume_prepare(o->output, header, run.shard_k, run.shard_n, rows,
                                         &run.resume_after, &have_header, &error)) {
            close(fd);
            return ppsim_cli_fail(error);
        }
        if (regular && !o->resume && ftruncate(fd, 0) != 0) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "opening %s: %s", o->output,
                        g_strerror(errno));
            close(fd);
            return ppsim_cli_fail(error);
        }
        if (regular)
            lseek(fd, 0, SEEK_END);
        out.name = o->output;
        out.is_file = regular;
        out.fp = fdopen(fd, "w");
        if (out.fp == NULL) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "opening %s: %s", o->output,
                        g_strerror(errno));
            close(fd);
            return ppsim_cli_fail(error);
        }
    }
    run.write_data = &out;
    Progress prog = {g_get_monotonic_time(), 0, o->progress_label ? o->progress_label : "sweep"};
    if (!o->quiet && isatty(STDERR_FILENO)) {
        run.progress = progress_show;
        run.progress_data = &prog;
    }
    gboolean ok = TRUE;
    if (run.format == PPSIM_SWEEP_CSV && !have_header && run.shard_n > 1) {
        g_autofree char *tag =
            g_strdup_printf("# ppsim sweep shard %d/%d\n", run.shard_k, run.shard_n);
        ok = out_write(tag, strlen(tag), &out, &error);
    }
    if (run.format == PPSIM_SWEEP_CSV && !have_header)
        ok = ok && out_write(header, strlen(header), &out, &error);
    ok = ok && ppsim_sweep_run(s, &run, rows, &error);
    ok = out_close(&out, &error) && ok;
    if (!ok)
        return ppsim_cli_fail(error);
    return PPSIM_EXIT_OK;
}

int
ppsim_cli_sweep(const PpsimSweep *s, const PpsimCliSweepOptions *o)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    int rc = ppsim_cli_sweep_rows(s, o, rows);
    if (rc != PPSIM_EXIT_OK)
        return rc;
    int n = 0, m_axis = -1;
    g_auto(GStrv) names = axis_names(s, &n, &m_axis);
    g_autoptr(GString) sum = g_string_new(NULL);
    ppsim_sweep_summary(sum, rows, names, n);
    fputs(sum->str, o->output != NULL ? stdout : stderr);
    if (fflush(stdout) != 0)
        return ppsim_cli_usage("writing stdout: %s", g_strerror(errno));
    /* the memory limit as a line, when every point has the base's (no axis sets it) */
    double limit = 0;
    const PpsimScenario *base = s->base_sc;
    gboolean limit_axis = FALSE;
    for (guint i = 0; i < s->axes->len; i++)
        limit_axis |=
            strcmp(((PpsimSweepAxis *)g_ptr_array_index(s->axes, i))->path, "memory.limit") == 0;
    if (base != NULL && !limit_axis)
        limit = base->costs.present ? base->memory_limit_units : (double)base->memory_limit_bytes;
    if (o->plot != NULL && !write_plots(o->plot, rows, names, n, m_axis, limit, &error))
        return ppsim_cli_fail(error);
    return PPSIM_EXIT_OK;
}

static const char sweep_description[] =
    "Runs every point of the sweep FILE (a YAML file: a base scenario, axes over any key\n"
    "path, constraints) and writes one row per point and schedule, in point order whatever\n"
    "the thread count: point, the axes, schedule, status (ok, refused, invalid, failed),\n"
    "makespan_ms, bubble ratios, peaks, memory_unit, oom, error. A refused or failed point\n"
    "is a row, never an abort. A summary follows: the fastest configuration that fits, per\n"
    "schedule, and the Pareto front of makespan against peak memory (on stdout when rows go\n"
    "to --output, else on stderr).\n\n"
    "--output FILE is locked while a sweep writes it: a second sweep on the same file\n"
    "refuses. After an interruption (a kill, a full disk) --resume keeps the rows written\n"
    "and runs the rest; the file ends as an uninterrupted run's, byte for byte.\n\n"
    "Example sweep file:\n"
    "  scenario: ../scenarios/zb_table5.yaml\n"
    "  axes:\n"
    "    training.pp: [4, 8]\n"
    "    training.microbatches: {from: 8, to: 64, times: 2}\n"
    "    schedule: [1f1b, zb-h1, {name: zb, memory_limit: 2}]\n"
    "  constraints: [\"m % pp == 0\"]\n\n"
    "Examples:\n"
    "  ppsim sweep s.yaml -o rows.csv -j 2 --plot plots/\n"
    "  ppsim sweep s.yaml -o part1.csv --shard 1/4   # then: ppsim merge part*.csv -o rows.csv\n"
    "  ppsim sweep s.yaml -o rows.csv --resume       # after an interruption\n";

int
ppsim_cmd_sweep(int argc, char **argv)
{
    PpsimCliSweepOptions o = {0};
    int samples = 0;
    gint64 seed = 1;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
         "Write the rows to FILE (default: stdout)", "FILE"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &o.format, "Rows as csv (default) or jsonl",
         "FORMAT"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o.threads, "Threads (default: the core count)", "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
         "Run only shard K of N (points with point % N == K - 1)", "K/N"},
        {"resume", 0, 0, G_OPTION_ARG_NONE, &o.resume,
         "Keep the rows already in --output and run the rest", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o.plot,
         "Write pareto.svg (and bubble.svg when training.microbatches is an axis) to DIR", "DIR"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "No progress bar", NULL},
        {"samples", 'n', 0, G_OPTION_ARG_INT, &samples,
         "Also replay each point's schedules N times under the scenario's variability: section "
         "and add the columns makespan_mean_ms, makespan_p50_ms, makespan_p90_ms, "
         "makespan_p99_ms",
         "N"},
        {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "With --samples: the random seed (default 1)",
         "S"},
        G_OPTION_ENTRY_NULL};
    g_autoptr(GOptionContext) ctx = g_option_context_new("FILE - run a design-space sweep");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, sweep_description);
    int rc;
    if (!ppsim_cli_parse(ctx, &argc, &argv)) {
        rc = PPSIM_EXIT_USAGE;
    } else if (argc != 2) {
        rc = ppsim_cli_usage("expected one sweep FILE (see 'ppsim sweep --help')");
    } else if (o.threads < 0) {
        rc = ppsim_cli_usage("--jobs must be >= 1, got %d", o.threads);
    } else if (samples < 0 || samples > 10000000 || seed < 0) {
        rc = ppsim_cli_usage("--samples must be from 1 to 10000000 and --seed >= 0");
    } else {
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimSweep) s = ppsim_sweep_load_file(argv[1], &error);
        if (s != NULL)
            ppsim_sweep_set_samples(s, samples, (guint64)seed);
        rc = s ? ppsim_cli_sweep(s, &o) : ppsim_cli_fail(error);
    }
    g_free(o.output);
    g_free(o.format);
    g_free(o.shard);
    g_free(o.plot);
    return rc;
}

/* ---- merge
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    guint64 point;
    guint part;
    guint seq; /* order of reading: a point's rows keep their order */
    const PpsimSweepRow *row;
    const char *line;
    gsize len;
} Line;

static int
cmp_line(gconstpointer pa, gconstpointer pb)
{
    const Line *a = pa, *b = pb;
    if (a->point != b->point)
        return a->point < b->point ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int
ppsim_cmd_merge(int argc, char **argv)
{
    char *output = NULL;
    GOptionEntry entries[] = {{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
                               "Write the merged rows to FILE (default: stdout)", "FILE"},
                              G_OPTION_ENTRY_NULL};
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("PART... - join the CSV parts of a sharded sweep");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(
        ctx, "Joins the CSV parts written by 'ppsim sweep --shard K/N' (or 'ppsim run --grid\n"
             "--shard K/N') into the file a single run writes, byte for byte: one header, the\n"
             "rows by point. The parts must come from the same sweep (same header) and hold\n"
             "disjoint points. Prints the sweep's summary.\n");
    g_autofree char *out_name = NULL;
    if (!ppsim_cli_parse(ctx, &argc, &argv)) {
        g_free(output);
        return PPSIM_EXIT_USAGE;
    }
    out_name = output;
    if (argc < 2)
        return ppsim_cli_usage("expected the CSV parts to merge (see 'ppsim merge --help')");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(Line));
    g_autofree char *header = NULL;
    int shards_n = -1;                 /* the parts' N (0: an unsharded file) */
    g_autofree int *shard_part = NULL; /* [N + 1]: the part holding shard K, 0 = none */
    for (int i = 1; i < argc; i++) {
        char *text = NULL;
        gsize len = 0;
        if (!ppsim_read_file(argv[i], PPSIM_CSV_MAX_BYTES, "a sweep part", &text, &len, &error))
            return ppsim_cli_fail(error);
        g_ptr_array_add(texts, text);
        int k = 0, n = 0;
        gsize skip = ppsim_sweep_shard_line(text, len, &k, &n);
        if (shards_n < 0) {
            shards_n = n;
            shard_part = g_new0(int, n + 1);
        }
        if (n != shards_n) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "%s: %s, but %s %s", argv[i],
                        n ? "a shard of a sweep cut in a different count" : "not a shard", argv[1],
                        shards_n ? "is one" : "is not");
            return ppsim_cli_fail(error);
        }
        if (n > 0 && shard_part[k] != 0) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "%s and %s are both shard %d/%d", argv[shard_part[k]], argv[i], k, n);
            return ppsim_cli_fail(error);
        }
        if (n > 0)
            shard_part[k] = i;
        if (n == 0 && argc > 2) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "%s: not a shard (no '# ppsim sweep shard K/N' line): merge the parts "
                        "of one 'ppsim sweep --shard K/N' run",
                        argv[i]);
            return ppsim_cli_fail(error);
        }
        const char *nl = memchr(text + skip, '\n', len - skip);
        g_autofree char *h = nl ? g_strndup(text + skip, nl - (text + skip) + 1) : NULL;
        if (h == NULL || (header != NULL && strcmp(h, header) != 0)) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "%s: %s", argv[i],
                        h ? "its header differs from the first part's (another sweep?)"
                          : "no header line");
            return ppsim_cli_fail(error);
        }
        if (header == NULL)
            header = g_steal_pointer(&h);
        if (len > 0 && text[len - 1] != '\n') {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "%s: the last row is cut (an interrupted shard: rerun it with --resume)",
                        argv[i]);
            return ppsim_cli_fail(error);
        }
        g_autoptr(GArray) offsets = g_array_new(FALSE, FALSE, sizeof(gsize));
        guint first = rows->len;
        if (!ppsim_sweep_parse_csv(text, len, argv[i], header, rows, offsets, &error))
            return ppsim_cli_fail(error);
        for (guint r = 0; r < offsets->len; r++) {
            gsize at = g_array_index(offsets, gsize, r);
            const char *end = memchr(text + at, '\n', len - at);
            const PpsimSweepRow *row = g_ptr_array_index(rows, first + r);
            Line l = {row->point, (guint)i,  lines->len,
                      row,        text + at, (gsize)(end - (text + at)) + 1};
            g_array_append_val(lines, l);
        }
    }
    for (int k = 1; k <= shards_n; k++)
        if (shard_part[k] == 0) {
            g_autoptr(GString) missing = g_string_new(NULL);
            for (int j = k; j <= shards_n; j++)
                if (shard_part[j] == 0)
                    g_string_append_printf(missing, "%s%d/%d", missing->len ? ", " : "", j,
                                           shards_n);
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "missing shard %s: run it (--shard K/N, or --resume a killed one) and "
                        "merge all %d parts",
                        missing->str, shards_n);
            return ppsim_cli_fail(error);
        }
    g_array_sort(lines, cmp_line);
    for (guint i = 1; i < lines->len; i++) {
        const Line *a = &g_array_index(lines, Line, i - 1), *b = &g_array_index(lines, Line, i);
        if (a->point == b->point && a->part != b->part) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "point %" G_GUINT64_FORMAT " is in both %s and %s (overlapping shards)",
                        a->point, argv[a->part], argv[b->part]);
            return ppsim_cli_fail(error);
        }
    }
    Out out = {.fp = stdout, .name = "stdout", .fail_after = -1};
    if (out_name != NULL) {
        out.name = out_name;
        out.fp = fopen(out_name, "w");
        if (out.fp == NULL) {
            g_set_error(&error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO, "opening %s: %s", out_name,
                        g_strerror(errno));
            return ppsim_cli_fail(error);
        }
    }
    gboolean ok = out_write(header, strlen(header), &out, &error);
    for (guint i = 0; i < lines->len && ok; i++)
        ok = out_write(g_array_index(lines, Line, i).line, g_array_index(lines, Line, i).len, &out,
                       &error);
    ok = out_close(&out, &error) && ok;
    if (!ok)
        return ppsim_cli_fail(error);
    /* the summary, with the axis names from the header */
    g_auto(GStrv) cols = g_strsplit(header, ",", -1);
    int n = 0;
    while (cols[n + 1] != NULL && strcmp(cols[n + 1], "schedule") != 0)
        n++;
    g_autoptr(GPtrArray) sorted = g_ptr_array_new(); /* as one run would have them */
    for (guint i = 0; i < lines->len; i++)
        g_ptr_array_add(sorted, (gpointer)g_array_index(lines, Line, i).row);
    g_autoptr(GString) sum = g_string_new(NULL);
    ppsim_sweep_summary(sum, sorted, cols + 1, n);
    fputs(sum->str, out_name != NULL ? stdout : stderr);
    return PPSIM_EXIT_OK;
}
