/* cmd-validate.c: `ppsim validate`: replay schedules in explicit-cost mode over a grid and
 * print the published prediction next to the simulation (results/README.md "Checking the published
 * formulas"). Rows whose formula is exact under its assumptions must match exactly; any mismatch
 * there exits 1.
 */
#include "cli/cli.h"
#include "formulas/formulas.h"
#include "sched/registry.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"
#include "util/units.h"
#include "util/quote.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    GArray *p, *m_mult, *m_abs, *v; /* int */
    GArray *costs;                  /* double[4]: F, B, W, F&B (0: F+B+W) */
} Grid;

/* Largest p, m or v (or multiple of p) a grid takes: the scenario's bound on integers. */
#define GRID_MAX_INT 16777216

/* An empty list ("p=") is an error, not the default grid. */
static gboolean
grid_ints(const char *list, GArray *out, GArray *mult)
{
    g_auto(GStrv) parts = g_strsplit(list, ",", -1);
    if (parts[0] == NULL)
        return FALSE;
    for (char **s = parts; *s; s++) {
        char *end = NULL;
        gint64 v = g_ascii_strtoll(*s, &end, 10);
        gboolean times_p = mult != NULL && *end == 'p' && end[1] == '\0';
        if (end == *s && mult != NULL && strcmp(*s, "p") == 0)
            v = 1, times_p = TRUE, end = *s + 1;
        if ((!times_p && *end != '\0') || v <= 0 || v > GRID_MAX_INT)
            return FALSE;
        int iv = (int)v;
        g_array_append_val(times_p ? mult : out, iv);
    }
    return TRUE;
}

/* F:B:W[:F&B],... in ms; each a time as the scenario's explicit costs take it (finite, >= 0,
 * at most the largest time ppsim takes); F&B (an overlapped pair, DualPipe) defaults to
 * F+B+W. A bad number sets @error (naming the flag); a bad shape returns FALSE with @error
 * unset. */
static gboolean
grid_costs(const char *list, GArray *out, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(list, ",", -1);
    if (parts[0] == NULL)
        return FALSE;
    for (char **s = parts; *s; s++) {
        g_auto(GStrv) fbw = g_strsplit(*s, ":", -1);
        guint n = g_strv_length(fbw);
        if (n != 3 && n != 4)
            return FALSE;
        static const char *const what[] = {"F", "B", "W", "F&B"};
        double c[4] = {0, 0, 0, 0};
        for (guint i = 0; i < n; i++) {
            if (!ppsim_units_parse(fbw[i], PPSIM_DIM_TIME, "ms", &c[i], error)) {
                g_autofree char *q = ppsim_quote(*s);
                g_prefix_error(error, "--grid costs, %s of '%s': ", what[i], q);
                return FALSE;
            }
            c[i] *= 1e3; /* seconds -> ms */
        }
        g_array_append_vals(out, c, 1);
    }
    return TRUE;
}

static gboolean
grid_parse(Grid *g, char **specs, GError **error)
{
    g->p = g_array_new(FALSE, FALSE, sizeof(int));
    g->m_abs = g_array_new(FALSE, FALSE, sizeof(int));
    g->m_mult = g_array_new(FALSE, FALSE, sizeof(int));
    g->v = g_array_new(FALSE, FALSE, sizeof(int));
    g->costs = g_array_new(FALSE, FALSE, sizeof(double[4]));
    gboolean ok = TRUE;
    for (char **s = specs; ok && s && *s; s++) {
        if (g_str_has_prefix(*s, "p="))
            ok = grid_ints(*s + 2, g->p, NULL);
        else if (g_str_has_prefix(*s, "m="))
            ok = grid_ints(*s + 2, g->m_abs, g->m_mult);
        else if (g_str_has_prefix(*s, "v="))
            ok = grid_ints(*s + 2, g->v, NULL);
        else if (g_str_has_prefix(*s, "costs="))
            ok = grid_costs(*s + 6, g->costs, error);
        else
            ok = FALSE;
        if (!ok && (error == NULL || *error == NULL)) {
            const char *eq = strchr(*s, '=');
            g_autofree char *q = ppsim_quote(*s);
            gboolean costs = g_str_has_prefix(*s, "costs=");
            gboolean known = costs || g_str_has_prefix(*s, "p=") || g_str_has_prefix(*s, "m=") ||
                             g_str_has_prefix(*s, "v=");
            const char *why = !known          ? "unknown key"
                              : eq[1] == '\0' ? "an empty list"
                              : costs         ? "expected F:B:W triples such as 1:1:1,2:2:1"
                                      : "expected whole numbers from 1 to 2^24 (m also takes "
                                        "multiples of p: p, 2p)";
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "--grid '%s': %s (keys: p, m, v, costs)", q, why);
        }
    }
    /* defaults: a fast grid that still covers m < p, m = p and several multiples */
    if (ok && g->p->len == 0)
        grid_ints("2,4,8", g->p, NULL);
    if (ok && g->m_abs->len == 0 && g->m_mult->len == 0)
        grid_ints("1,p,2p,3p", g->m_abs, g->m_mult);
    if (ok && g->v->len == 0)
        grid_ints("2", g->v, NULL);
    if (ok && g->costs->len == 0)
        grid_costs("1:1:1,2:2:1,1:2:1", g->costs, NULL);
    return ok;
}

static void
grid_clear(Grid *g)
{
    GArray *all[] = {g->p, g->m_abs, g->m_mult, g->v, g->costs};
    for (guint i = 0; i < G_N_ELEMENTS(all); i++)
        if (all[i])
            g_array_free(all[i], TRUE);
}

typedef struct {
    guint rows, exact_ok, exact_bad, approx, refused;
    gboolean verbose;
} Tally;

#define ACT_W 0.5 /* weight_activation: W's share differs from B's so M_W is visible */

/* One grid point: simulate, predict, print, count. */
static void
validate_point(const char *name, int p, int v, int m, const double *c, Tally *t)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(p, v, m, name);
    sc->costs.forward_ps = (PpsimTime)llround(c[0] * PPSIM_PS_PER_MS);
    sc->costs.backward_input_ps = (PpsimTime)llround(c[1] * PPSIM_PS_PER_MS);
    sc->costs.backward_weight_ps = (PpsimTime)llround(c[2] * PPSIM_PS_PER_MS);
    sc->costs.forward_backward_ps = (PpsimTime)llround(c[3] * PPSIM_PS_PER_MS);
    sc->costs.weight_activation = ACT_W;
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
    t->rows++;
    if (c[3] > 0)
        printf("%-12s %3d %2d %4d %5g:%g:%g:%g ", name, p, v, m, c[0], c[1], c[2], c[3]);
    else
        printf("%-12s %3d %2d %4d %5g:%g:%g ", name, p, v, m, c[0], c[1], c[2]);
    if (res == NULL) {
        gboolean refused = g_error_matches(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
        t->refused += refused;
        t->exact_bad += !refused;
        printf("%s: %s\n", refused ? "refused" : "ERROR", error->message);
        return;
    }
    PpsimFormulaInput in = {p, res->v, m, c[0], c[1], c[2], 1.0, ACT_W, c[3]};
    PpsimFormula f;
    ppsim_formula_predict(name, &in, &f);
    double span = 0, peak_err = 0;
    for (int d = 0; d < p; d++) {
        const PpsimDeviceResult *dev = &res->devices[d];
        span = MAX(span, (double)(dev->end_ps - dev->first_start_ps) / PPSIM_PS_PER_MS);
        if (d < f.n_devices)
            peak_err = MAX(peak_err, fabs(dev->peak_activation / res->mem_scale - f.peak[d]));
    }
    double sim_rate = 1.0 - f.work / span;
    gboolean match = fabs(span - f.span) < 1e-9 && peak_err < 1e-9;
    const char *status = f.exact ? (match ? "exact ok" : "EXACT MISMATCH") : "approx";
    t->exact_ok += f.exact && match;
    t->exact_bad += f.exact && !match;
    t->approx += !f.exact;
    /* an approximate row says why: the source's assumptions this point leaves */
    printf("%10.3f %10.3f %7.4f %7.4f %7.2f %7.2f %8.3f  %s%s%s\n", f.span, span, f.bubble_rate,
           sim_rate, f.peak[0], res->devices[0].peak_activation / res->mem_scale, peak_err, status,
           f.exact ? "" : ": exact only when ", f.exact ? "" : f.exact_when);
    if (t->verbose || (f.exact && !match))
        printf("%-12s   source %s; exact when %s\n", "", f.source, f.exact_when);
    g_free(f.peak);
}

static void
validate_schedule(const char *name, const Grid *g, Tally *t)
{
    const PpsimScheduleClass *k = ppsim_sched_registry_lookup(name);
    for (guint i = 0; i < g->p->len; i++) {
        int p = g_array_index(g->p, int, i);
        g_autoptr(GArray) ms = g_array_new(FALSE, FALSE, sizeof(int));
        g_array_append_vals(ms, g->m_abs->data, g->m_abs->len);
        for (guint j = 0; j < g->m_mult->len; j++) {
            int m = g_array_index(g->m_mult, int, j) * p;
            g_array_append_val(ms, m);
        }
        for (guint j = 0; j < ms->len; j++)
            for (guint vi = 0; vi < (k->chunks == 0 ? g->v->len : 1); vi++)
                for (guint ci = 0; ci < g->costs->len; ci++)
                    validate_point(
                        name, p, k->chunks == 0 ? g_array_index(g->v, int, vi) : k->chunks,
                        g_array_index(ms, int, j), &g_array_index(g->costs, double, 4 * ci), t);
    }
}

/* Most ops of one grid point: the bound a scenario's run has (scenarios/README.md "Limits"), so
 * that a huge grid fails at once instead of running for minutes or exhausting memory. */
#define GRID_MAX_OPS 8388608.0

/* The first point of @g for schedule @name past GRID_MAX_OPS; FALSE with @error set. */
static gboolean
grid_check(const char *name, const Grid *g, GError **error)
{
    const PpsimScheduleClass *k = ppsim_sched_registry_lookup(name);
    for (guint i = 0; i < g->p->len; i++) {
        int p = g_array_index(g->p, int, i);
        double m_max = 0;
        for (guint j = 0; j < g->m_abs->len; j++)
            m_max = MAX(m_max, g_array_index(g->m_abs, int, j));
        for (guint j = 0; j < g->m_mult->len; j++)
            m_max = MAX(m_max, (double)g_array_index(g->m_mult, int, j) * p);
        int v = k->chunks;
        for (guint j = 0; k->chunks == 0 && j < g->v->len; j++)
            v = MAX(v, g_array_index(g->v, int, j));
        double ops = 4.0 * p * v * m_max;
        if (ops > GRID_MAX_OPS) {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "--grid: %s at p = %d, v = %d, m = %.0f makes about %.3g ops, more than "
                        "the %.3g one run replays",
                        name, p, v, m_max, ops, GRID_MAX_OPS);
            return FALSE;
        }
    }
    return TRUE;
}

static const char validate_description[] =
    "Replays each schedule in explicit-cost mode (p2p = 0, uniform stages, activation 1,\n"
    "weight_activation 0.5) over a grid and prints the published prediction next to the\n"
    "simulation: the longest device span (end - first start), the bubble rate\n"
    "(bubble / span, [ZB] §5.3), device 0's peak activation, and the largest peak error\n"
    "over devices. Where a formula is exact under its assumptions, the simulation must\n"
    "match it exactly; otherwise the row is 'approx' and names the assumptions it leaves.\n"
    "\n"
    "Grid keys (repeatable --grid): p=2,4,8  m=1,p,2p,3p (numbers or multiples of p)\n"
    "v=2 (chunks, for schedules that take them)  costs=1:1:1,2:2:1 (F:B:W in ms, or\n"
    "F:B:W:F&B with an overlapped pair's time for DualPipe; default F&B = F+B+W).\n"
    "\n"
    "An empty list (p=) is an error; values go up to 2^24, and a point may have at most\n"
    "2^23 ops (4 p v m), as a scenario's run.\n"
    "\n"
    "Exit status: 0 all exact rows match, 1 an exact row disagrees or a run fails (said on\n"
    "stderr), 2 usage error.";

int
ppsim_cmd_validate(int argc, char **argv)
{
    char **schedules = NULL, **grid = NULL;
    gboolean verbose = FALSE;
    GOptionEntry entries[] = {
        {"schedule", 's', 0, G_OPTION_ARG_STRING_ARRAY, &schedules,
         "Validate only this schedule (repeatable; default: every one with a formula)", "NAME"},
        {"grid", 'g', 0, G_OPTION_ARG_STRING_ARRAY, &grid, "Grid axis, e.g. p=2,4 or m=p,2p",
         "KEY=LIST"},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Print each row's source", NULL},
        G_OPTION_ENTRY_NULL};
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("- check published formulas against simulated timelines");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autofree char *have = g_strjoinv(", ", (char **)ppsim_formula_schedules());
    g_autofree char *description =
        g_strdup_printf("Schedules with a formula: %s.\n%s", have, validate_description);
    g_option_context_set_description(ctx, description);
    Grid g = {0};
    Tally t = {0};
    g_autoptr(GError) error = NULL;
    int rc = PPSIM_EXIT_OK;
    if (!ppsim_cli_parse(ctx, &argc, &argv)) {
        rc = PPSIM_EXIT_USAGE;
    } else if (!grid_parse(&g, grid, &error)) {
        rc = error ? ppsim_cli_usage("%s", error->message)
                   : ppsim_cli_usage(
                         "bad --grid (expected p=LIST, m=LIST, v=LIST or costs=F:B:W,...)");
    } else {
        t.verbose = verbose;
        /* --schedule a --schedule b, or a,b as `run` takes them */
        g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func(g_free);
        for (char **s = schedules; s && *s; s++) {
            g_auto(GStrv) parts = g_strsplit(*s, ",", -1);
            for (char **part = parts; *part; part++)
                if (*g_strstrip(*part))
                    g_ptr_array_add(list, g_strdup(*part));
        }
        g_ptr_array_add(list, NULL);
        if (schedules != NULL && list->len == 1)
            rc = ppsim_cli_usage("--schedule: no schedule named (have: %s)", have);
        const char *const *names =
            schedules ? (const char *const *)list->pdata : ppsim_formula_schedules();
        for (int i = 0; names[i] && rc == PPSIM_EXIT_OK; i++) { /* all names first */
            PpsimFormula probe;
            PpsimFormulaInput in = {2, 1, 2, 1, 1, 1, 1, 1};
            if (ppsim_sched_registry_lookup(names[i]) &&
                ppsim_formula_predict(names[i], &in, &probe)) {
                g_free(probe.peak);
                if (!grid_check(names[i], &g, &error))
                    rc = ppsim_cli_usage("%s", error->message);
            } else {
                g_autofree char *q = ppsim_quote(names[i]);
                rc = ppsim_cli_usage("no formula for schedule '%s' (have: %s)", q, have);
            }
        }
        if (rc == PPSIM_EXIT_OK)
            printf("%-12s %3s %2s %4s %9s %10s %10s %7s %7s %7s %7s %8s  %s\n", "schedule", "p",
                   "v", "m", "F:B:W", "span_pred", "span_sim", "rate_p", "rate_s", "peak0_p",
                   "peak0_s", "peak_err", "status");
        for (int i = 0; names[i] && rc == PPSIM_EXIT_OK; i++) {
            validate_schedule(names[i], &g, &t);
        }
        if (rc == PPSIM_EXIT_OK) {
            printf("\n%u rows: %u exact and matching, %u exact MISMATCHES, %u approximate, "
                   "%u refused by the generator\n",
                   t.rows, t.exact_ok, t.exact_bad, t.approx, t.refused);
            rc = t.exact_bad > 0 ? PPSIM_EXIT_FAILURE : PPSIM_EXIT_OK;
            /* every failing exit says why on stderr, not only in the table */
            if (rc != PPSIM_EXIT_OK)
                fprintf(stderr,
                        "ppsim: error: %u of %u rows failed: exact rows that disagree with their "
                        "formula or runs that failed (marked EXACT MISMATCH or ERROR above)\n",
                        t.exact_bad, t.rows);
        }
    }
    grid_clear(&g);
    g_strfreev(schedules);
    g_strfreev(grid);
    return rc;
}
