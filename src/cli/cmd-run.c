/* cmd-run.c: `ppsim run SCENARIO`: simulate every schedule, print a table (or JSON/CSV) on
 * stdout, and write the artefacts (summary, traces, timelines) under --output. */
#include "cli/cli.h"
#include "report/artifacts.h"
#include "report/report.h"
#include "sched/registry.h"
#include "sim/sim.h"
#include "util/bigalloc.h"
#include "util/ppsim-error.h"
#include "util/fmt.h"
#include "util/units.h"
#include "util/quote.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char **schedules; /* --schedule, repeatable */
    char **sets;      /* --set, repeatable */
    char **with;      /* --with FRAGMENT.yaml, repeatable: applied before --set */
    char *format;
    char *output;
    char *export_schedule;
    gboolean no_artifacts;
    gboolean quiet;
    gboolean timings;
    char *svg_window;
    PpsimSvgOptions svg; /* parsed from svg_window */
    char **grid;         /* --grid KEY=LIST: a sweep instead of one run */
    int jobs;
    char *shard;
    gboolean resume;
    int samples; /* --samples: Monte-Carlo replays under `variability:` */
    gint64 seed; /* --seed */
    char *plot;  /* --plot DIR: the makespan CDF chart */
    gboolean full_traces;
} RunOptions;

/* Runs with more ops than this get no Perfetto trace unless --full-traces: at about 500 bytes
 * an op (slices, flows, memory counters), a p = 32 run would write over 100 MB. */
#define RUN_TRACE_MAX_OPS 100000

static void
run_options_clear(RunOptions *o)
{
    g_strfreev(o->schedules);
    g_strfreev(o->sets);
    g_strfreev(o->with);
    g_free(o->format);
    g_free(o->output);
    g_free(o->export_schedule);
    g_free(o->svg_window);
    g_strfreev(o->grid);
    g_free(o->shard);
    g_free(o->plot);
}

/* --schedule A --schedule B (or "A,B"), or an inline spec as the scenario's `schedule` key
 * takes it: '{name: po-h, co_schedule: independent}' or a '[...]' list. */
static gboolean
run_select_schedules(PpsimScenario *sc, char **names, GError **error)
{
    if (names == NULL)
        return TRUE;
    g_autoptr(GPtrArray) chosen =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    for (char **n = names; *n; n++) {
        const char *arg = *n + strspn(*n, " \t");
        if (*arg == '{' || *arg == '[') {
            g_autoptr(GPtrArray) specs =
                ppsim_schedule_specs_parse(arg, "--schedule", sc->basedir, error);
            if (specs == NULL)
                return FALSE;
            while (specs->len > 0)
                g_ptr_array_add(chosen, g_ptr_array_steal_index(specs, 0));
            continue;
        }
        g_auto(GStrv) parts = g_strsplit(arg, ",", -1);
        for (char **part = parts; *part; part++) {
            const char *name = g_strstrip(*part);
            if (*name == '\0')
                continue;
            PpsimScheduleSpec *found = ppsim_sim_take_schedule(sc, name, error);
            if (found == NULL)
                return FALSE;
            g_ptr_array_add(chosen, found);
        }
    }
    if (chosen->len == 0) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--schedule: no schedule named (see 'ppsim list schedules')");
        return FALSE;
    }
    g_ptr_array_unref(sc->schedules);
    sc->schedules = g_steal_pointer(&chosen);
    return TRUE;
}

/* FILE for one schedule; FILE with ".<label>" before the extension for several. */
static gboolean
run_export(const char *path, const GPtrArray *results, GError **error)
{
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        g_autofree char *target = NULL;
        if (results->len == 1) {
            target = g_strdup(path);
        } else {
            const char *dot = strrchr(path, '.');
            const char *slash = strrchr(path, '/');
            gsize stem = (dot && (!slash || dot > slash)) ? (gsize)(dot - path) : strlen(path);
            g_autofree char *safe =
                g_strcanon(g_strdup(res->label),
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789-_.",
                           '_');
            target = g_strdup_printf("%.*s.%s%s", (int)stem, path, safe, path + stem);
        }
        g_autoptr(GString) csv = ppsim_schedule_to_csv(res->schedule);
        if (!ppsim_cli_write_file(target, csv->str, csv->len, error))
            return FALSE;
    }
    return TRUE;
}

/* One line per schedule, then the phases around them: @us = load, run (every schedule),
 * reports (text/JSON/CSV and stdout), export, artefacts, in microseconds. */
static void
run_print_timings(const GPtrArray *results, const gint64 us[5])
{
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        gsize ops = ppsim_schedule_n_ops(res->schedule);
        double loop_s = MAX(res->time_replay_us, 1) / 1e6;
        char events[96];
        if (res->one_pass)
            g_strlcpy(events, "one pass in dependency order", sizeof events);
        else
            g_snprintf(events, sizeof events, "%" G_GUINT64_FORMAT " events%s",
                       res->events_processed,
                       res->replay_reused ? "; the generator's replay of it, reused" : "");
        fprintf(stderr,
                "ppsim: timings '%s': %zu ops; schedule %.1f ms, check %.1f ms, build %.1f ms, "
                "event loop %.1f ms (%.2f M ops/s, %s), metrics %.1f ms\n",
                res->label, (size_t)ops, res->time_schedule_us / 1e3, res->time_validate_us / 1e3,
                res->time_build_us / 1e3, res->time_replay_us / 1e3, ops / loop_s / 1e6, events,
                res->time_metrics_us / 1e3);
        if (res->solver.present)
            fprintf(stderr, "ppsim: timings '%s': solver %.2f s\n", res->label,
                    res->solver.seconds);
    }
    fprintf(stderr,
            "ppsim: timings: load %.1f ms, schedules %.1f ms, reports %.1f ms, export %.1f ms, "
            "artefacts %.1f ms\n",
            us[0] / 1e3, us[1] / 1e3, us[2] / 1e3, us[3] / 1e3, us[4] / 1e3);
}

static const char run_description[] =
    "Simulates each schedule of SCENARIO (a YAML file, see scenarios/README.md) on the modelled\n"
    "hardware, or with the explicit per-op costs of its 'costs:' section, and prints one row\n"
    "per schedule: makespan, bubble ratios, peak activation and memory, out-of-memory devices.\n"
    "\n"
    "Artefacts go to --output (default results/<scenario name>/): summary.json, summary.csv,\n"
    "and per schedule a Perfetto trace and an SVG timeline.\n"
    "\n"
    "Examples:\n"
    "  ppsim run scenarios/a100_8gpu.yaml\n"
    "  ppsim run scenarios/a100_8gpu.yaml --schedule 1f1b --set training.microbatches=64\n"
    "  ppsim run x.yaml --format json --no-artifacts | jq '.results[].makespan'\n"
    "  ppsim run x.yaml --schedule 1f1b --export-schedule 1f1b.csv\n"
    "  ppsim plan x.yaml --schedule 1f1b -o plan.yaml && ppsim run x.yaml --with plan.yaml\n"
    "  ppsim run x.yaml --samples 1000 --set variability.cv=0.1 --plot plots/\n"
    "\n"
    "Exit status: 0 ok, 1 bad scenario, deadlock or I/O error, 2 usage error.";

static GOptionContext *
run_context(RunOptions *o)
{
    GOptionEntry entries[] = {
        {"schedule", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o->schedules,
         "Run only these schedules (repeatable, or comma-separated)", "NAME"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets,
         "Override a scenario value, e.g. training.pp=4 (repeatable)", "KEY.PATH=VALUE"},
        {"with", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->with,
         "Apply a scenario fragment (e.g. from 'ppsim plan -o') before --set (repeatable)",
         "FILE.yaml"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o->format,
         "Output on stdout: text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output,
         "Directory for artefacts (default results/<scenario name>)", "DIR"},
        {"no-artifacts", 0, 0, G_OPTION_ARG_NONE, &o->no_artifacts,
         "Print results only; write no files", NULL},
        {"export-schedule", 0, 0, G_OPTION_ARG_FILENAME, &o->export_schedule,
         "Write the generated schedule as PyTorch-pipelining CSV (several schedules: "
         "FILE.<label>.csv)",
         "FILE"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "No progress messages on stderr", NULL},
        {"svg-window", 0, 0, G_OPTION_ARG_STRING, &o->svg_window,
         "Draw only this time window in the SVG timelines, in ms (e.g. 0:250)", "T0:T1"},
        {"timings", 0, 0, G_OPTION_ARG_NONE, &o->timings,
         "Print where the time went, phase by phase (schedule generation included), on stderr",
         NULL},
        {"grid", 'g', 0, G_OPTION_ARG_STRING_ARRAY, &o->grid,
         "Sweep: one row per point x schedule over these values (repeatable, crossed), e.g. "
         "training.microbatches=8,16,32 or schedule=1f1b,zb-v; --output then names the rows "
         "file",
         "KEY.PATH=LIST"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs,
         "With --grid or --samples: threads (default: the cores; the output is the same for "
         "any N)",
         "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &o->shard,
         "With --grid: run only shard K of N (join the parts with 'ppsim merge')", "K/N"},
        {"resume", 0, 0, G_OPTION_ARG_NONE, &o->resume,
         "With --grid: keep the rows already in --output FILE and run the rest", NULL},
        {"samples", 'n', 0, G_OPTION_ARG_INT, &o->samples,
         "Replay each schedule N times under the scenario's variability: section (per-op "
         "lognormal noise, slow devices and links, slowdown windows) and report makespan "
         "percentiles and critical-path shares; with --grid, N per point",
         "N"},
        {"seed", 0, 0, G_OPTION_ARG_INT64, &o->seed,
         "With --samples: the random seed (default 1); the same seed gives the same output", "S"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot,
         "With --samples: write DIR/makespan-cdf.svg, every schedule's makespan CDF on one chart",
         "DIR"},
        {"full-traces", 0, 0, G_OPTION_ARG_NONE, &o->full_traces,
         "Write the Perfetto trace of runs above 100,000 ops too (about 500 bytes an op)", NULL},
        G_OPTION_ENTRY_NULL};
    GOptionContext *ctx = g_option_context_new("SCENARIO - simulate pipeline schedules");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, run_description);
    return ctx;
}

/* --svg-window against the results: starting at or after every makespan it would draw
 * nothing, an error naming the makespan; past some schedules' ends, a warning for each (the
 * SVG cuts a window that overlaps the run at the run's end). */
static gboolean
run_check_window(const PpsimSvgOptions *svg, const GPtrArray *results, GError **error)
{
    PpsimTime longest = 0;
    for (guint i = 0; i < results->len; i++)
        longest =
            MAX(longest, ((const PpsimRunResult *)g_ptr_array_index(results, i))->makespan_ps);
    if (svg->t0_ps >= longest) {
        g_autoptr(GString) msg = g_string_new("--svg-window starts at ");
        ppsim_fmt_fixed(msg, (double)svg->t0_ps / PPSIM_PS_PER_MS, 3);
        g_string_append(msg, " ms, at or after the end of the run (makespan ");
        ppsim_fmt_fixed(msg, (double)longest / PPSIM_PS_PER_MS, 3);
        g_string_append_printf(msg, " ms%s): nothing to draw",
                               results->len > 1 ? ", the longest of the schedules" : "");
        g_set_error_literal(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE, msg->str);
        return FALSE;
    }
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        if (svg->t0_ps < res->makespan_ps)
            continue;
        g_autoptr(GString) msg = g_string_new(NULL);
        ppsim_fmt_fixed(msg, (double)res->makespan_ps / PPSIM_PS_PER_MS, 3);
        fprintf(stderr,
                "ppsim: warning: schedule '%s' ends at %s ms, before --svg-window starts; "
                "its timeline is empty\n",
                res->label, msg->str);
    }
    return TRUE;
}

/* --samples: the Monte-Carlo replays of every schedule, on -j threads. */
static gboolean
run_samples(const RunOptions *o, const PpsimScenario *sc, GPtrArray *results, GError **error)
{
    PpsimSampleOptions opt = {.samples = o->samples,
                              .seed = o->seed == G_MININT64 ? 1 : (guint64)o->seed,
                              .threads = o->jobs > 0 ? o->jobs : (int)g_get_num_processors()};
    for (guint i = 0; i < results->len; i++) {
        PpsimRunResult *res = g_ptr_array_index(results, i);
        if (!ppsim_sim_sample(sc, res, &opt, error)) {
            g_prefix_error(error, "schedule '%s': ", res->label);
            return FALSE;
        }
        if (o->timings)
            fprintf(stderr, "ppsim: timings '%s': %d samples in %.1f ms (%.0f samples/s)\n",
                    res->label, o->samples, res->time_samples_us / 1e3,
                    o->samples / (MAX(res->time_samples_us, 1) / 1e6));
    }
    return TRUE;
}

/* --plot DIR: DIR/makespan-cdf.svg. */
static gboolean
run_plot(const char *dir, const PpsimScenario *sc, const GPtrArray *results, GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "--plot: cannot create '%s': %s", dir, g_strerror(e));
        return FALSE;
    }
    g_autoptr(GString) svg = g_string_new(NULL);
    ppsim_report_svg_cdf(svg, sc->name, results);
    g_autofree char *path = g_build_filename(dir, "makespan-cdf.svg", NULL);
    return ppsim_cli_write_file(path, svg->str, svg->len, error);
}

static int
run_main(RunOptions *o, const char *path)
{
    g_autoptr(GError) error = NULL;
    gint64 t = g_get_monotonic_time(), us[5] = {0};
    /* a large schedule and its replay fill megabytes of mid-sized arrays, whose first
     * touches cost more than the replay itself in 4 KiB pages on a virtual machine */
    ppsim_bigalloc_prepare_heap();
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_load_file(path, (const char *const *)o->sets, &error);
    if (sc == NULL)
        return ppsim_cli_fail(error);
    if (!run_select_schedules(sc, o->schedules, &error))
        return ppsim_cli_fail(error);
    us[0] = g_get_monotonic_time() - t;
    PpsimSimFlags flags = o->no_artifacts ? 0 : PPSIM_SIM_RECORD;
    if (o->samples > 0 && !sc->costs.present) /* the sampler reads the transfers' times */
        flags |= PPSIM_SIM_RECORD;
    g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, flags, &error);
    if (results == NULL)
        return ppsim_cli_fail(error);
    if (o->samples > 0 && !run_samples(o, sc, results, &error))
        return ppsim_cli_fail(error);
    if (o->samples == 0 && sc->variability.present && !o->quiet)
        fprintf(stderr, "ppsim: warning: the variability: section applies with --samples N "
                        "only; this run is the deterministic one\n");
    g_autoptr(GPtrArray) warnings = ppsim_sim_warnings(sc, results);
    for (guint i = 0; i < warnings->len; i++)
        ppsim_cli_warning(g_ptr_array_index(warnings, i));
    for (guint i = 0; i < results->len && !o->quiet; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        if (res->solver.present && res->solver.warning[0]) {
            g_autofree char *w =
                g_strdup_printf("schedule '%s': %s", res->label, res->solver.warning);
            ppsim_cli_warning(w);
        }
    }
    if (o->svg_window && !o->no_artifacts && !run_check_window(&o->svg, results, &error))
        return ppsim_cli_fail(error);
    us[1] = g_get_monotonic_time() - t - us[0];
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) json = g_string_new(NULL);
    g_autoptr(GString) csv = g_string_new(NULL);
    gboolean text = o->format == NULL || strcmp(o->format, "text") == 0;
    gboolean want_json = !o->no_artifacts || (!text && strcmp(o->format, "json") == 0);
    gboolean want_csv = !o->no_artifacts || (!text && strcmp(o->format, "csv") == 0);
    if (want_json) /* the artefacts' summary.json, or stdout */
        ppsim_report_json(json, sc, results);
    if (want_csv)
        ppsim_report_csv(csv, sc, results);
    if (text) {
        ppsim_report_text(out, sc, results);
        ppsim_report_text_samples(out, results);
    } else
        g_string_append_len(out, strcmp(o->format, "json") == 0 ? json->str : csv->str,
                            strcmp(o->format, "json") == 0 ? json->len : csv->len);
    if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout) != 0)
        return ppsim_cli_usage_io("writing the results to stdout");
    /* SIGINT, SIGTERM and SIGHUP wait until the files are written: an interrupt then never
     * leaves a temporary file or a summary without its traces (the writes take well under
     * a second next to the simulation); a pending signal acts when they are done. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    us[2] = g_get_monotonic_time() - t - us[0] - us[1];
    sigprocmask(SIG_BLOCK, &block, &old);
    gboolean ok = o->export_schedule == NULL || run_export(o->export_schedule, results, &error);
    us[3] = g_get_monotonic_time() - t - us[0] - us[1] - us[2];
    g_autofree char *dir = NULL;
    if (ok && !o->no_artifacts) {
        o->svg.trace_max_ops = o->full_traces ? 0 : RUN_TRACE_MAX_OPS;
        for (guint i = 0; i < results->len && !o->full_traces && !o->quiet; i++) {
            const PpsimRunResult *res = g_ptr_array_index(results, i);
            gsize n = ppsim_schedule_n_ops(res->schedule);
            if (n > RUN_TRACE_MAX_OPS)
                fprintf(stderr,
                        "ppsim: note: '%s' has %zu ops: no Perfetto trace (about %zu MB; "
                        "--full-traces writes it); its SVG shows density\n",
                        res->label, (size_t)n, (size_t)(n * 500 / 1000000));
        }
        g_autofree char *stem = ppsim_artifacts_file_stem(sc->name);
        dir = o->output ? g_strdup(o->output) : g_build_filename("results", stem, NULL);
        ok = ppsim_artifacts_write(dir, sc, results, json, csv, &o->svg, &error);
    }
    if (ok && o->plot != NULL)
        ok = run_plot(o->plot, sc, results, &error);
    sigprocmask(SIG_SETMASK, &old, NULL);
    us[4] = g_get_monotonic_time() - t - us[0] - us[1] - us[2] - us[3];
    if (!ok)
        return ppsim_cli_fail(error);
    if (dir != NULL && !o->quiet)
        fprintf(stderr, "ppsim: wrote artefacts to %s/\n", dir);
    if (o->timings)
        run_print_timings(results, us);
    return PPSIM_EXIT_OK;
}

/* "T0:T1": two times, in ms when bare (the scenario's grammar: "0:2s" works too), finite and
 * at most the largest time ppsim takes, with T0 < T1. */
static gboolean
run_parse_window(const char *text, PpsimSvgOptions *svg, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(text, ":", 2);
    double t[2];
    if (g_strv_length(parts) != 2) {
        g_autofree char *q = ppsim_quote(text);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--svg-window must be T0:T1 in ms, got '%s'", q);
        return FALSE;
    }
    for (int i = 0; i < 2; i++)
        if (!ppsim_units_parse(parts[i], PPSIM_DIM_TIME, "ms", &t[i], error)) {
            g_prefix_error(error, "--svg-window %s: ", i == 0 ? "T0" : "T1");
            return FALSE;
        }
    svg->t0_ps = ppsim_time_from_seconds(t[0]);
    svg->t1_ps = ppsim_time_from_seconds(t[1]);
    if (svg->t1_ps <= svg->t0_ps) {
        g_autofree char *q = ppsim_quote(text);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--svg-window must be T0:T1 with T0 < T1, got '%s'", q);
        return FALSE;
    }
    return TRUE;
}

/* --grid: the scenario becomes the base of a sweep. */
static int
run_grid(RunOptions *o, const char *path)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSweep) sweep = ppsim_sweep_new_grid(path, o->sets, o->grid, &error);
    if (sweep == NULL)
        return ppsim_cli_fail(error);
    ppsim_sweep_set_samples(sweep, o->samples, o->seed == G_MININT64 ? 1 : (guint64)o->seed);
    const char *format = o->format;
    if (format != NULL && strcmp(format, "json") == 0)
        format = "jsonl";
    PpsimCliSweepOptions so = {.output = o->output,
                               .format = (char *)format,
                               .threads = o->jobs,
                               .shard = o->shard,
                               .resume = o->resume,
                               .quiet = o->quiet};
    return ppsim_cli_sweep(sweep, &so);
}

int
ppsim_cmd_run(int argc, char **argv)
{
    RunOptions o = {.seed = G_MININT64}; /* unset: 1 */
    g_autoptr(GOptionContext) ctx = run_context(&o);
    g_autoptr(GError) error = NULL;
    int rc;
    if (!ppsim_cli_parse(ctx, &argc, &argv))
        rc = PPSIM_EXIT_USAGE;
    else if (o.format && strcmp(o.format, "text") && strcmp(o.format, "json") &&
             strcmp(o.format, "csv"))
        rc = ppsim_cli_usage_quoted("--format must be text, json or csv, got", o.format);
    else if (o.svg_window && !run_parse_window(o.svg_window, &o.svg, &error))
        rc = ppsim_cli_usage("%s", error->message);
    else if (argc != 2)
        rc = ppsim_cli_usage(argc < 2 ? "missing SCENARIO (see 'ppsim run --help')"
                                      : "expected one SCENARIO, got %d arguments",
                             argc - 1);
    else if (o.grid == NULL && (o.shard || o.resume))
        rc = ppsim_cli_usage("--shard and --resume go with --grid");
    else if (o.grid == NULL && o.jobs && o.samples == 0)
        rc = ppsim_cli_usage("--jobs goes with --grid or --samples");
    else if (o.samples < 0 || o.samples > 10000000)
        rc = ppsim_cli_usage("--samples must be from 1 to 10000000, got %d", o.samples);
    else if (o.seed < 0 && o.seed != G_MININT64)
        rc = ppsim_cli_usage("--seed must be >= 0, got %" G_GINT64_FORMAT, o.seed);
    else if (o.samples == 0 && (o.seed != G_MININT64 || o.plot))
        rc = ppsim_cli_usage("--seed and --plot go with --samples");
    else if (o.grid != NULL && o.plot)
        rc = ppsim_cli_usage("--plot is for one run, not --grid");
    else if (o.grid != NULL && (o.schedules || o.export_schedule || o.svg_window || o.timings))
        rc = ppsim_cli_usage("with --grid, choose schedules with --grid schedule=A,B; "
                             "--export-schedule, --svg-window and --timings are for one run");
    else if (o.jobs < 0)
        rc = ppsim_cli_usage("--jobs must be >= 1, got %d", o.jobs);
    else {
        if (o.with != NULL && !ppsim_cli_with_overrides(o.with, &o.sets, &error))
            rc = ppsim_cli_fail(error);
        else if (o.grid != NULL)
            rc = run_grid(&o, argv[1]);
        else
            rc = run_main(&o, argv[1]);
    }
    run_options_clear(&o);
    return rc;
}
