/* sim-calibrate.c: `ppsim calibrate` (sim.h ppsim_calibrate).
 *
 * One hardware efficiency (a share of a peak, in (0, 1]) is chosen so that measured runs'
 * simulated iterations take their measured seconds: the replay is a function t(x) of the
 * key's value x, non-increasing (a higher efficiency never slows a kernel; a generator that
 * plans on the costs may change its schedule along the way, and the bisection then returns
 * one crossing), so for one run a bisection on [CAL_LO, 1] finds t(x) = measured to CAL_TOL
 * in x; for several runs the value minimises the mean |relative error| over them (a scan of
 * the range in steps of CAL_SCAN, then a golden-section search around the best point). The
 * value is rounded to CAL_DIGITS significant digits and every run is replayed once more at
 * the rounded value, so that what is reported is what `--set KEY=VALUE` reproduces.
 * Deterministic: no randomness, no wall time in the result.
 */
#include "sim/sim.h"
#include "util/ppsim-error.h"
#include "util/units.h"

#include <math.h>
#include <string.h>

#define CAL_LO 0.01   /* the smallest value tried: a share of a peak */
#define CAL_HI 1.0    /* the largest */
#define CAL_TOL 1e-5  /* bisection stops when the bracket is this narrow */
#define CAL_SCAN 0.02 /* the several-run scan's step */
#define CAL_DIGITS 4  /* significant digits of the reported value */

typedef struct {
    const PpsimCalibrateRun *runs;
    int n;
    const PpsimCalibrateOptions *o;
    int replays;
} Cal;

static gboolean
key_is_efficiency(const char *key)
{
    const char *dot = strrchr(key, '.');
    const char *leaf = dot ? dot + 1 : key;
    return g_str_has_prefix(key, "hardware.") && strstr(leaf, "efficiency") != NULL;
}

/* The spec @name names in @sc (ppsim_sim_take_schedule), or without @name the scenario's
 * first; taken out of @sc. Returns: (transfer full) (nullable). */
static PpsimScheduleSpec *
take_spec(PpsimScenario *sc, const char *name, GError **error)
{
    if (name != NULL)
        return ppsim_sim_take_schedule(sc, name, error);
    if (sc->schedules->len == 0) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: no schedule to calibrate", sc->path ? sc->path : "scenario");
        return NULL;
    }
    return g_ptr_array_steal_index(sc->schedules, 0);
}

/* Run @r with the key at @x (@x < 0: as the scenario gives it): its makespan in seconds,
 * and (nullable) the schedule's label and the scenario's own value of the key. */
static gboolean
replay_at(Cal *c, const PpsimCalibrateRun *r, double x, double *seconds, char **label, double *own,
          GError **error)
{
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *s = c->o->overrides; s && *s; s++)
        g_ptr_array_add(ov, g_strdup(*s));
    if (x >= 0)
        g_ptr_array_add(ov, g_strdup_printf("%s=%.*f", c->o->key, CAL_DIGITS + 4, x));
    g_ptr_array_add(ov, NULL);
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_load_file(r->path, (const char *const *)ov->pdata, error);
    if (sc == NULL)
        return FALSE;
    if (own != NULL && !ppsim_scenario_lookup_number(sc, c->o->key, own)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--key '%s' names no number of %s", c->o->key, r->path);
        return FALSE;
    }
    g_autoptr(PpsimScheduleSpec) spec = take_spec(sc, c->o->schedule, error);
    if (spec == NULL)
        return FALSE;
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, spec, 0, error);
    if (res == NULL) {
        g_prefix_error(error, "%s: ", r->path);
        return FALSE;
    }
    c->replays++;
    *seconds = (double)res->makespan_ps / PPSIM_PS_PER_S;
    if (label != NULL)
        *label = g_strdup(res->label);
    return TRUE;
}

/* |@t - @measured| / @measured, in %. */
static double
abs_error_pct(double t, double measured)
{
    return fabs(t - measured) / measured * 100.0;
}

/* The mean |relative error| (%) of every run at @x; @secs (nullable) receives each time. */
static gboolean
mean_error_at(Cal *c, double x, double *mean, double *secs, GError **error)
{
    double sum = 0;
    for (int i = 0; i < c->n; i++) {
        double t;
        if (!replay_at(c, &c->runs[i], x, &t, NULL, NULL, error))
            return FALSE;
        if (secs != NULL)
            secs[i] = t;
        sum += abs_error_pct(t, c->runs[i].measured_s);
    }
    *mean = sum / c->n;
    return TRUE;
}

/* Every run's time at both ends of the range; an error for a run the key does not move
 * (explicit costs, or no kernel the key scales). */
static gboolean
check_ends(Cal *c, double *t_lo, double *t_hi, GError **error)
{
    for (int i = 0; i < c->n; i++) {
        const PpsimCalibrateRun *r = &c->runs[i];
        if (!replay_at(c, r, CAL_LO, &t_lo[i], NULL, NULL, error) ||
            !replay_at(c, r, CAL_HI, &t_hi[i], NULL, NULL, error))
            return FALSE;
        if (t_lo[i] - t_hi[i] <= 1e-9 * t_hi[i]) {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s: %s does not change its iteration time (%.6g s from %g to %g: "
                        "explicit costs, or no kernel the key scales): nothing to calibrate",
                        r->path, c->o->key, t_hi[i], CAL_LO, CAL_HI);
            return FALSE;
        }
    }
    return TRUE;
}

/* One run: the x of t(x) = measured by bisection, or an error naming the bound that the
 * measured time lies beyond (@t_lo, @t_hi: its times at the ends). */
static gboolean
solve_one(Cal *c, double t_lo, double t_hi, double *x_out, GError **error)
{
    const PpsimCalibrateRun *r = &c->runs[0];
    if (r->measured_s < t_hi) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: even at %s = %g its iteration takes %.6g s in ppsim, longer than the "
                    "measured %.6g s: what this key does not scale (communication, the "
                    "bubble, other kernels) already takes longer; calibrate another key "
                    "(--key) or check the scenario's layout",
                    r->path, c->o->key, CAL_HI, t_hi, r->measured_s);
        return FALSE;
    }
    if (r->measured_s > t_lo) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: even at %s = %g its iteration takes only %.6g s in ppsim, shorter "
                    "than the measured %.6g s: no value of this key in [%g, %g] slows it that "
                    "much; check the measured time (seconds per iteration) and the layout",
                    r->path, c->o->key, CAL_LO, t_lo, r->measured_s, CAL_LO, CAL_HI);
        return FALSE;
    }
    double lo = CAL_LO, hi = CAL_HI; /* t(lo) >= measured >= t(hi) */
    while (hi - lo > CAL_TOL) {
        double mid = 0.5 * (lo + hi), t;
        if (!replay_at(c, r, mid, &t, NULL, NULL, error))
            return FALSE;
        if (t > r->measured_s)
            lo = mid;
        else
            hi = mid;
    }
    *x_out = 0.5 * (lo + hi);
    return TRUE;
}

/* Several runs: the x of least mean |relative error|, a scan then a golden-section search
 * on the scan's best bracket. */
static gboolean
solve_many(Cal *c, double *x_out, GError **error)
{
    int steps = (int)lround((CAL_HI - CAL_LO) / CAL_SCAN);
    double best_x = CAL_LO, best_e = INFINITY;
    for (int i = 0; i <= steps; i++) {
        double x = CAL_LO + (CAL_HI - CAL_LO) * i / steps, e;
        if (!mean_error_at(c, x, &e, NULL, error))
            return FALSE;
        if (e < best_e) {
            best_e = e;
            best_x = x;
        }
    }
    double a = MAX(CAL_LO, best_x - CAL_SCAN), b = MIN(CAL_HI, best_x + CAL_SCAN);
    const double g = (sqrt(5.0) - 1.0) / 2.0;
    double x1 = b - g * (b - a), x2 = a + g * (b - a), e1, e2;
    if (!mean_error_at(c, x1, &e1, NULL, error) || !mean_error_at(c, x2, &e2, NULL, error))
        return FALSE;
    while (b - a > CAL_TOL) {
        if (e1 <= e2) {
            b = x2;
            x2 = x1;
            e2 = e1;
            x1 = b - g * (b - a);
            if (!mean_error_at(c, x1, &e1, NULL, error))
                return FALSE;
        } else {
            a = x1;
            x1 = x2;
            e1 = e2;
            x2 = a + g * (b - a);
            if (!mean_error_at(c, x2, &e2, NULL, error))
                return FALSE;
        }
    }
    double x = 0.5 * (a + b), e;
    if (!mean_error_at(c, x, &e, NULL, error))
        return FALSE;
    *x_out = e <= best_e ? x : best_x; /* the scan's point if the bracket held no better */
    return TRUE;
}

/* Without a key: the GEMM efficiency of the runs' linear layers, bf16's or FP8's
 * (training.dtype); an error when the runs mix the two. Returns: (transfer none). */
static const char *
default_key(const PpsimCalibrateRun *runs, int n, const char *const *overrides, GError **error)
{
    int fp8 = 0;
    for (int i = 0; i < n; i++) {
        g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(runs[i].path, overrides, error);
        if (sc == NULL)
            return NULL;
        fp8 += sc->training.dtype == PPSIM_DTYPE_FP8;
    }
    if (fp8 > 0 && fp8 < n) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%d of the %d runs train in FP8 and the others in bf16, whose GEMMs have "
                    "efficiencies of their own: choose one with --key "
                    "(hardware.gpu.gemm_efficiency or hardware.gpu.gemm_efficiency_fp8), or "
                    "calibrate each kind apart",
                    fp8, n);
        return NULL;
    }
    return fp8 ? "hardware.gpu.gemm_efficiency_fp8" : "hardware.gpu.gemm_efficiency";
}

PpsimCalibration *
ppsim_calibrate(const PpsimCalibrateRun *runs, int n, const PpsimCalibrateOptions *o_in,
                GError **error)
{
    g_return_val_if_fail(runs != NULL && n > 0 && o_in != NULL, NULL);
    PpsimCalibrateOptions opts = *o_in;
    const PpsimCalibrateOptions *o = &opts;
    if (opts.key == NULL && (opts.key = default_key(runs, n, opts.overrides, error)) == NULL)
        return NULL;
    if (!key_is_efficiency(o->key)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--key '%s' is not a hardware efficiency: calibrate a share of a peak, "
                    "a hardware.* key whose name holds 'efficiency', e.g. "
                    "hardware.gpu.gemm_efficiency, hardware.gpu.gemm_efficiency_fp8, "
                    "hardware.gpu.memory_efficiency, hardware.gpu.attention_efficiency_cudnn "
                    "or hardware.network.bus_efficiency",
                    o->key);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (!isfinite(runs[i].measured_s) || runs[i].measured_s <= 0) {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s: the measured time must be a positive number of seconds per "
                        "iteration, got %g",
                        runs[i].path, runs[i].measured_s);
            return NULL;
        }
    Cal c = {.runs = runs, .n = n, .o = o};
    g_autoptr(PpsimCalibration) cal = g_new0(PpsimCalibration, 1);
    cal->key = g_strdup(o->key);
    cal->runs = g_new0(PpsimCalibratedRun, n);
    cal->n_runs = n;
    /* as given first: a scenario that does not load or run fails here, named */
    for (int i = 0; i < n; i++) {
        PpsimCalibratedRun *out = &cal->runs[i];
        if (!replay_at(&c, &runs[i], -1, &out->before_s, &out->schedule, &out->value_before, error))
            return NULL;
        cal->mean_before += abs_error_pct(out->before_s, runs[i].measured_s) / n;
    }
    g_autofree double *t_lo = g_new(double, n);
    g_autofree double *t_hi = g_new(double, n);
    double x;
    if (!check_ends(&c, t_lo, t_hi, error) ||
        !(n == 1 ? solve_one(&c, t_lo[0], t_hi[0], &x, error) : solve_many(&c, &x, error)))
        return NULL;
    double scale = pow(10.0, CAL_DIGITS - 1 - floor(log10(x))); /* CAL_DIGITS significant */
    cal->value = MIN(CAL_HI, MAX(CAL_LO, round(x * scale) / scale));
    g_autofree double *after = g_new(double, n);
    if (!mean_error_at(&c, cal->value, &cal->mean_after, after, error))
        return NULL;
    for (int i = 0; i < n; i++)
        cal->runs[i].after_s = after[i];
    cal->replays = c.replays;
    return g_steal_pointer(&cal);
}

void
ppsim_calibration_free(PpsimCalibration *cal)
{
    if (cal == NULL)
        return;
    for (int i = 0; cal->runs != NULL && i < cal->n_runs; i++)
        g_free(cal->runs[i].schedule);
    g_free(cal->runs);
    g_free(cal->key);
    g_free(cal);
}
