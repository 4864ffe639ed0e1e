/* cmd-calibrate.c: `ppsim calibrate SCENARIO SECONDS [SCENARIO SECONDS]...`: one hardware
 * efficiency fitted to measured runs of the user's own stack (sim.h ppsim_calibrate). */
#include "cli/cli.h"
#include "sim/sim.h"
#include "util/fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char *schedule;
    char *key;
    char **sets;
    char **with;
    char *format;
} CalOptions;

static const char calibrate_description[] =
    "ppsim's presets carry constants fitted on published runs of Megatron-LM and NeMo\n"
    "(results/measured.md): another stack, cluster or software release may run the same\n"
    "layout faster or slower. Given the measured seconds per iteration of one or more runs of\n"
    "your own, each described by a scenario, calibrate finds the value of one hardware\n"
    "efficiency (--key; by default the share of the GEMM peak that large GEMMs reach,\n"
    "hardware.gpu.gemm_efficiency, or for runs in FP8 hardware.gpu.gemm_efficiency_fp8)\n"
    "that makes ppsim's iterations take those times: exactly for one run, with the least\n"
    "mean |error| for several. It prints each run's time and error with the scenario's own\n"
    "value and with the fitted one, and the --set that carries the value to other layouts\n"
    "of the same stack. The value is searched in [0.01, 1]; one run whose measured time no\n"
    "value reaches is an error naming the bound (a run faster than ppsim at efficiency 1:\n"
    "its time is set by what the key does not scale). The key must be a hardware.* key\n"
    "naming an efficiency (gpu.memory_efficiency, gpu.attention_efficiency_cudnn,\n"
    "network.bus_efficiency, ...): calibrate the one your runs are most sensitive to, and\n"
    "check the fit on a run you did not fit on.\n"
    "\n"
    "SECONDS is a plain number of seconds per iteration (global batch), e.g. 12.5 or 12.5s.\n"
    "\n"
    "Examples:\n"
    "  ppsim calibrate my-run.yaml 14.2\n"
    "  ppsim calibrate a.yaml 14.2 b.yaml 27.9 --schedule interleaved\n"
    "  ppsim calibrate my-run.yaml 14.2 --key hardware.gpu.memory_efficiency --format json\n"
    "  ppsim run other-layout.yaml --set hardware.gpu.gemm_efficiency=0.5712\n"
    "\n"
    "Exit status: 0 ok, 1 bad scenario or no value reaches the measured time, 2 usage error.";

static void
opts_clear(CalOptions *o)
{
    g_free(o->schedule);
    g_free(o->key);
    g_strfreev(o->sets);
    g_strfreev(o->with);
    g_free(o->format);
}

/* SECONDS: a positive number, optionally followed by "s". */
static gboolean
parse_seconds(const char *text, double *out)
{
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text)
        return FALSE;
    if (*end == 's')
        end++;
    if (*end != '\0' || !isfinite(v) || v <= 0)
        return FALSE;
    *out = v;
    return TRUE;
}

static void
pct(GString *out, double x)
{
    double r = round(x * 10.0) / 10.0 + 0.0; /* no negative zero */
    if (r >= 0)
        g_string_append_c(out, '+');
    ppsim_fmt_fixed(out, r, 1);
    g_string_append_c(out, '%');
}

static double
rel(double sim, double meas)
{
    return (sim - meas) / meas * 100.0;
}

static void
cal_text(GString *out, const PpsimCalibration *cal, const PpsimCalibrateRun *runs, const char *key)
{
    int wp = 8, ws = 8;
    for (int i = 0; i < cal->n_runs; i++) {
        wp = MAX(wp, (int)g_utf8_strlen(runs[i].path, -1));
        ws = MAX(ws, (int)g_utf8_strlen(cal->runs[i].schedule, -1));
    }
    g_string_append_printf(out,
                           "calibrating %s on %d measured run%s: ppsim's seconds per iteration "
                           "with the scenario's own value (given) and the fitted one\n",
                           key, cal->n_runs, cal->n_runs == 1 ? "" : "s");
    g_string_append_printf(out, "%-*s  %-*s  %10s %9s %8s %9s %8s  %s\n", wp, "scenario", ws,
                           "schedule", "measured s", "given s", "error", "fitted s", "error",
                           "given value");
    for (int i = 0; i < cal->n_runs; i++) {
        const PpsimCalibratedRun *r = &cal->runs[i];
        g_autoptr(GString) e1 = g_string_new(NULL);
        g_autoptr(GString) e2 = g_string_new(NULL);
        g_autoptr(GString) v1 = g_string_new(NULL);
        pct(e1, rel(r->before_s, runs[i].measured_s));
        pct(e2, rel(r->after_s, runs[i].measured_s));
        if (r->value_before > 0)
            g_string_append_printf(v1, "%.4g", r->value_before);
        else
            g_string_append(v1, "unset");
        g_string_append_printf(out, "%-*s  %-*s  %10.3f %9.3f %8s %9.3f %8s  %s\n", wp,
                               runs[i].path, ws, r->schedule, runs[i].measured_s, r->before_s,
                               e1->str, r->after_s, e2->str, v1->str);
    }
    g_autoptr(GString) v = g_string_new(NULL);
    ppsim_fmt_double(v, cal->value);
    g_string_append_printf(out, "fitted %s = %s: mean |error| ", key, v->str);
    ppsim_fmt_fixed(out, cal->mean_before, 1);
    g_string_append(out, "% given, ");
    ppsim_fmt_fixed(out, cal->mean_after, 1);
    g_string_append_printf(out, "%% fitted (%d replays)\n", cal->replays);
    g_string_append_printf(out, "reuse it: ppsim run SCENARIO --set %s=%s\n", key, v->str);
}

static void
cal_json(GString *out, const PpsimCalibration *cal, const PpsimCalibrateRun *runs, const char *key)
{
    g_string_append(out, "{\"schema_version\":1,\"key\":");
    ppsim_fmt_json_string(out, key);
    g_string_append(out, ",\"value\":");
    ppsim_fmt_double(out, cal->value);
    g_string_append(out, ",\"mean_abs_error_before\":");
    ppsim_fmt_double(out, cal->mean_before);
    g_string_append(out, ",\"mean_abs_error_after\":");
    ppsim_fmt_double(out, cal->mean_after);
    g_string_append_printf(out, ",\"replays\":%d,\"runs\":[", cal->replays);
    for (int i = 0; i < cal->n_runs; i++) {
        const PpsimCalibratedRun *r = &cal->runs[i];
        g_string_append(out, i ? ",{\"scenario\":" : "{\"scenario\":");
        ppsim_fmt_json_string(out, runs[i].path);
        g_string_append(out, ",\"schedule\":");
        ppsim_fmt_json_string(out, r->schedule);
        g_string_append(out, ",\"value_before\":");
        ppsim_fmt_double(out, r->value_before);
        g_string_append(out, ",\"measured_s\":");
        ppsim_fmt_double(out, runs[i].measured_s);
        g_string_append(out, ",\"before_s\":");
        ppsim_fmt_double(out, r->before_s);
        g_string_append(out, ",\"after_s\":");
        ppsim_fmt_double(out, r->after_s);
        g_string_append(out, ",\"error_before\":");
        ppsim_fmt_double(out, rel(r->before_s, runs[i].measured_s));
        g_string_append(out, ",\"error_after\":");
        ppsim_fmt_double(out, rel(r->after_s, runs[i].measured_s));
        g_string_append_c(out, '}');
    }
    g_string_append(out, "]}\n");
}

static int
cal_main(CalOptions *o, int n, char **args)
{
    g_autoptr(GError) error = NULL;
    if (!ppsim_cli_with_overrides(o->with, &o->sets, &error))
        return ppsim_cli_fail(error);
    g_autofree PpsimCalibrateRun *runs = g_new0(PpsimCalibrateRun, n);
    for (int i = 0; i < n; i++) {
        runs[i].path = args[2 * i];
        if (!parse_seconds(args[2 * i + 1], &runs[i].measured_s)) {
            g_autofree char *what = g_strdup_printf(
                "the measured time of '%s' must be a positive number of seconds, got",
                runs[i].path);
            return ppsim_cli_usage_quoted(what, args[2 * i + 1]);
        }
    }
    PpsimCalibrateOptions co = {
        .key = o->key, .schedule = o->schedule, .overrides = (const char *const *)o->sets};
    g_autoptr(PpsimCalibration) cal = ppsim_calibrate(runs, n, &co, &error);
    if (cal == NULL)
        return ppsim_cli_fail(error);
    const char *key = cal->key;
    g_autoptr(GString) out = g_string_new(NULL);
    if (o->format && strcmp(o->format, "json") == 0)
        cal_json(out, cal, runs, key);
    else
        cal_text(out, cal, runs, key);
    fputs(out->str, stdout);
    return PPSIM_EXIT_OK;
}

int
ppsim_cmd_calibrate(int argc, char **argv)
{
    CalOptions o = {0};
    GOptionEntry entries[] = {
        {"key", 'k', 0, G_OPTION_ARG_STRING, &o.key,
         "The hardware efficiency to fit (default: hardware.gpu.gemm_efficiency, or "
         "hardware.gpu.gemm_efficiency_fp8 for runs with training.dtype: fp8)",
         "KEY.PATH"},
        {"schedule", 's', 0, G_OPTION_ARG_STRING, &o.schedule,
         "The schedule each run ran, by the scenario's label or name (default: each "
         "scenario's first)",
         "NAME"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
         "Override a value of every scenario, e.g. training.microbatch_size=2 (repeatable)",
         "KEY.PATH=VALUE"},
        {"with", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.with,
         "Apply a scenario fragment to every scenario before --set (repeatable)", "FILE.yaml"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o.format, "Output on stdout: text or json",
         "FORMAT"},
        G_OPTION_ENTRY_NULL};
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "SCENARIO SECONDS [SCENARIO SECONDS]... - fit a hardware efficiency to measured runs");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, calibrate_description);
    int rc;
    if (!ppsim_cli_parse(ctx, &argc, &argv))
        rc = PPSIM_EXIT_USAGE;
    else if (o.format && strcmp(o.format, "text") && strcmp(o.format, "json"))
        rc = ppsim_cli_usage_quoted("--format must be text or json, got", o.format);
    else if (argc < 2)
        rc = ppsim_cli_usage("missing SCENARIO SECONDS (see 'ppsim calibrate --help')");
    else if ((argc - 1) % 2 != 0)
        rc = ppsim_cli_usage_quoted("expected SCENARIO SECONDS pairs: no measured time after",
                                    argv[argc - 1]);
    else
        rc = cal_main(&o, (argc - 1) / 2, argv + 1);
    opts_clear(&o);
    return rc;
}
