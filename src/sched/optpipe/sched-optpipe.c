/* sched-optpipe.c: OptPipe ([OP] §3-4): the schedule of App. C's MILP (op-milp.c) for the
 * estimated costs and the memory limit, solved by CBC (milp/milp.h) from AdaOffload's
 * schedule as MIP start ([OP] §4.1.3), with its makespan as the horizon, so the result is
 * never worse than the warm start: the incumbent is kept only if, timed and measured on the
 * estimates as the replay does (op-eval.c), it fits the limit and is not slower.
 *
 * Paths, reported per result (text and JSON `solver`): "milp" (the solver's incumbent),
 * "warm-start" (the solver found nothing better, or its incumbent failed the check),
 * "heuristic" (no solver: built without CBC, or more binaries than `max_binaries`).
 * One stage per device (v = 1), any p, m >= 1. Deterministic with threads = 1 as long as
 * the node limit, not the time limit, ends the search.
 */
#include "sched/optpipe/adaoffload.h"
#include "sched/optpipe/op-cache.h"
#include "sched/optpipe/op-milp.h"
#include "sched/optpipe/op-rolling.h"
#include "sched/zb-auto.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <math.h>
#include <string.h>

static const PpsimOptionSpec optpipe_options[] = {
    {"memory_limit", PPSIM_OPTION_STRING, NULL,
     "activation cap per device in M_B; default the scenario's memory.limit when set, else "
     "none"},
    {"time_limit", PPSIM_OPTION_DOUBLE, "1",
     "solver wall-clock limit in seconds (hard: the solver is stopped there)"},
    {"node_limit", PPSIM_OPTION_INT, "2000",
     "solver branch-and-bound nodes (deterministic budget; 0 = none)"},
    {"gap", PPSIM_OPTION_DOUBLE, "0", "stop at this relative gap (e.g. 0.01)"},
    {"threads", PPSIM_OPTION_INT, "1", "solver threads (above 1 CBC is not deterministic)"},
    {"offload", PPSIM_OPTION_STRING, "auto",
     "auto (offload/reload choices in the MILP when a limit is set) or none"},
    {"objective", PPSIM_OPTION_STRING, "makespan",
     "makespan (Eq. 4: the iteration's end) or stage-span (Eq. 3: the longest device span, "
     "first op to last; what [OP] App. B's post-validation runs, so its tables' iteration "
     "times)"},
    {"max_binaries", PPSIM_OPTION_INT, "2000",
     "larger models are not solved whole: see 'decompose'"},
    {"decompose", PPSIM_OPTION_STRING, "none",
     "above max_binaries: none (path heuristic: the warm start as it is) or rolling (path "
     "rolling: a rolling horizon of MILP windows over the warm start, node_limit per window, "
     "the time limit shared between them)"},
    {"window", PPSIM_OPTION_INT, "8",
     "rolling: compute ops per device in a window (on average; each overlaps the one before "
     "by half)"},
    {"co_schedule", PPSIM_OPTION_STRING, "auto", "for the AdaOffload warm start"},
    {"budget", PPSIM_OPTION_STRING, "auto",
     "the warm starts' searches (AdaOffload's and zb's), as their option 'budget': auto "
     "(each one's own default), unlimited (or 0) or a number of ops"},
    {"shared_switch", PPSIM_OPTION_STRING, "auto",
     "auto (Eq. 18: GPUs behind one contended PCIe switch never transfer in one direction at "
     "once) or ignore (leave Eq. 18 out, to see what it changes)"},
    {"cache_dir", PPSIM_OPTION_STRING, "auto",
     "cached schedules ([OP] §4.2): a directory; auto: $XDG_CACHE_HOME/ppsim; none: off"},
    {NULL}};

/* A lower bound on the objective without the solver (the model's machine cut): device i
 * starts no earlier than microbatch 0's forward reaches it and then runs all its m (F + B +
 * W) one op at a time, so the makespan is at least max_i [sum_{k<i} (F_k + comm) + m (F_i +
 * B_i + W_i)], and a device's span at least its work. In ms. */
static double
optpipe_bound_ms(const PpsimPipelineShape *shape, const PpsimCostEstimates *c, gboolean span)
{
    double best = 0, arrive = 0;
    for (int i = 0; i < shape->p; i++) {
        const PpsimStageEstimate *st = &c->stage[i];
        double work = (double)shape->m * (double)(st->f_ps + st->b_ps + st->w_ps);
        best = MAX(best, (span ? 0 : arrive) + work);
        arrive += (double)(st->f_ps + c->comm_ps);
    }
    return best / 1e9;
}

/* What the objective scores: Eq. 3's stage span or the makespan. */
static PpsimTime
op_score(const PpsimOpMilpOptions *mo, const PpsimOpEval *ev)
{
    return mo->stage_span ? ev->span_ps : ev->makespan_ps;
}

static void
report_path(PpsimSolverReport *r, const char *path, const char *status, const char *note)
{
    if (r == NULL)
        return;
    r->present = TRUE;
    g_strlcpy(r->path, path, sizeof r->path);
    g_strlcpy(r->status, status, sizeof r->status);
    g_strlcpy(r->note, note ? note : "", sizeof r->note);
}

static void
report_solve(PpsimSolverReport *r, const PpsimMilpResult *res)
{
    if (r == NULL)
        return;
    r->objective_ms = r->milp_objective_ms = res->objective;
    r->bound_ms = res->bound;
    r->gap = res->gap;
    r->seconds = res->seconds;
    g_strlcpy(r->milp_status, ppsim_milp_status_name(res), sizeof r->milp_status);
}

/* The warm start (estimated makespan @warm_ps) is returned, not the solver's schedule: the
 * report's status and objective become the warm start's; the solver's bound still bounds
 * the model's optimum, so the status is "optimal" when the bound reaches the warm start. */
static void
report_warm(PpsimSolverReport *r, PpsimTime warm_ps, double bound, const char *note)
{
    double obj = (double)warm_ps / 1e9;
    gboolean proved = !isnan(bound) && bound >= obj * (1 - 1e-9);
    report_path(r, "warm-start", proved ? "optimal" : "warm-start", note);
    if (r == NULL)
        return;
    r->objective_ms = obj;
    r->bound_ms = proved ? obj : bound;
    r->gap = proved ? 0 : isnan(bound) ? NAN : MAX(0, obj - bound) / obj;
}

static gboolean
optpipe_read(const PpsimOptions *o, PpsimOpMilpOptions *mo, gint64 *max_bin, int *window,
             GError **error)
{
    const char *dec = ppsim_options_get_string(o, "decompose");
    gint64 win = ppsim_options_get_int(o, "window");
    if (strcmp(dec, "rolling") != 0 && strcmp(dec, "none") != 0) {
        g_autofree char *q_dec = ppsim_quote(dec);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "optpipe: option 'decompose' must be rolling or none, got '%s'", q_dec);
        return FALSE;
    }
    if (win < 1 || win > 100000) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "optpipe: option 'window' must be 1 to 100000 ops, got %" G_GINT64_FORMAT, win);
        return FALSE;
    }
    *window = strcmp(dec, "rolling") == 0 ? (int)win : 0;

    const char *off = ppsim_options_get_string(o, "offload");
    const char *sw = ppsim_options_get_string(o, "shared_switch");
    const char *obj = ppsim_options_get_string(o, "objective");
    if (strcmp(obj, "makespan") != 0 && strcmp(obj, "stage-span") != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "optpipe: option 'objective' must be makespan or stage-span, got '%s'", obj);
        return FALSE;
    }
    mo->stage_span = strcmp(obj, "stage-span") == 0;
    mo->solver.time_limit_s = ppsim_options_get_double(o, "time_limit");
    mo->solver.node_limit = ppsim_options_get_int(o, "node_limit");
    mo->solver.gap = ppsim_options_get_double(o, "gap");
    mo->solver.threads = (int)ppsim_options_get_int(o, "threads");
    *max_bin = ppsim_options_get_int(o, "max_binaries");
    if (strcmp(off, "auto") != 0 && strcmp(off, "none") != 0) {
        g_autofree char *q_off = ppsim_quote(off);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "optpipe: option 'offload' must be auto or none, got '%s'", q_off);
        return FALSE;
    }
    if (mo->solver.threads < 1 || !(mo->solver.gap >= 0) || mo->solver.node_limit < 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "optpipe: options 'threads' (>= 1), 'gap' (>= 0) and 'node_limit' (>= 0) "
                    "out of range");
        return FALSE;
    }
    if (strcmp(sw, "auto") != 0 && strcmp(sw, "ignore") != 0) {
        g_autofree char *q_sw = ppsim_quote(sw);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "optpipe: option 'shared_switch' must be auto or ignore, got '%s'", q_sw);
        return FALSE;
    }
    mo->offload = strcmp(off, "auto") == 0;
    mo->no_switch = strcmp(sw, "ignore") == 0;
    return TRUE;
}

/* [OP] §5 warm-starts from AdaOffload; any ppsim schedule that fits is as good a start: the
 * automatic Zero Bubble under the same cap (it never offloads) replaces AdaOffload's
 * schedule when, timed and measured the same way, it fits and is faster. Its search runs
 * under @budget (zb's option `budget`). */
static gboolean
optpipe_zb_warm(const PpsimPipelineShape *shape, const PpsimCostEstimates *c, const gint64 *limit,
                gint64 budget, PpsimSchedule **warm, PpsimOpEval *warm_eval, const char **from,
                GError **error)
{
    g_autofree gint64 *none = g_new0(gint64, shape->p);
    g_autoptr(GError) local = NULL;
    g_autoptr(PpsimSchedule) zb = ppsim_zb_auto(shape->p, shape->m, c, limit ? limit : none,
                                                PPSIM_ZB_AUTO_DEFAULT, budget, NULL, &local);
    PpsimOpEval ev;
    if (zb == NULL) /* e.g. a cap below what ZB can use: AdaOffload's stays */
        return TRUE;
    if (!ppsim_op_eval(zb, c, limit, NULL, &ev, error))
        return FALSE;
    if (ev.fits && ev.makespan_ps < warm_eval->makespan_ps) {
        ppsim_schedule_free(*warm);
        *warm = g_steal_pointer(&zb);
        *warm_eval = ev;
        *from = "zb";
    }
    return TRUE;
}

/* The option's directory: "auto" = $XDG_CACHE_HOME/ppsim, "none" = no cache (NULL). */
static char *
optpipe_cache_dir(const char *opt)
{
    if (strcmp(opt, "none") == 0)
        return NULL;
    if (opt[0] != '\0' && strcmp(opt, "auto") != 0)
        return g_strdup(opt);
    return g_build_filename(g_get_user_cache_dir(), "ppsim", NULL);
}

/* A cached schedule for @key, if any, becomes the warm start when, timed and measured on
 * the current costs, it fits and beats AdaOffload's (*@warm); entries that are corrupt,
 * stale, over the limit or fail the checker are ignored with a warning. */
static gboolean
optpipe_cache_warm(const char *dir, const char *key, const PpsimPipelineShape *shape,
                   const PpsimCostEstimates *c, const gint64 *limit, PpsimSchedule **warm,
                   PpsimOpEval *warm_eval, PpsimTime *cached_ps, PpsimSolverReport *rep,
                   gboolean *used, GError **error)
{
    g_autofree char *warning = NULL;
    g_autoptr(PpsimSchedule) cached = ppsim_op_cache_load(dir, key, shape->p, shape->m, &warning);
    PpsimOpEval ev;
    g_autoptr(GError) local = NULL;
    if (cached != NULL && !ppsim_op_eval(cached, c, limit, NULL, &ev, &local))
        warning = g_strdup_printf("cached schedule ignored: %s", local->message);
    else if (cached != NULL && !ev.fits)
        warning = g_strdup("cached schedule ignored: stale (it exceeds the memory limit)");
    else if (cached != NULL) {
        *cached_ps = ev.makespan_ps;
        if (ev.makespan_ps < warm_eval->makespan_ps) {
            ppsim_schedule_free(*warm);
            *warm = g_steal_pointer(&cached);
            *warm_eval = ev;
            *used = TRUE;
        }
    }
    if (warning != NULL && rep != NULL)
        g_strlcpy(rep->warning, warning, sizeof rep->warning);
    (void)error;
    return TRUE;
}

/* The rolling path (op-rolling.c): the model of @n_bin binaries is too large to solve whole,
 * so windows of @window ops per device are solved in turn from the warm start @warm. The
 * report: path and status "rolling" (status "optimal" when the machine bound reaches the
 * objective, "time_limit" when the wall clock stopped a window: then the result can depend
 * on the machine), the objective the returned schedule's (timed as the replay does), the
 * bound the machine bound. */
static gboolean
optpipe_rolling(const PpsimPipelineShape *shape, const PpsimCostEstimates *c, const gint64 *limit,
                const PpsimOpMilpOptions *mo, int window, gint64 n_bin, PpsimSchedule **warm,
                PpsimOpEval *warm_eval, PpsimSolverReport *rep, PpsimSchedule **out, GError **error)
{
    PpsimOpRollingInfo ri = {0};
    PpsimTime start = op_score(mo, warm_eval);
    double bound = optpipe_bound_ms(shape, c, mo->stage_span);
    /* a warm start at the machine bound is optimal: no window can beat it */
    if ((double)start / 1e9 > bound * (1 + 1e-9) &&
        !ppsim_op_rolling(shape, c, limit, mo, window, warm, warm_eval, &ri, error)) {
        g_prefix_error(error, "optpipe: ");
        return FALSE;
    }
    double obj = (double)op_score(mo, warm_eval) / 1e9;
    gboolean proved = bound >= obj * (1 - 1e-9);
    const char *status = ri.n_cut > 0 ? "time_limit" : proved ? "optimal" : "rolling";
    g_autofree char *note =
        g_strdup_printf("%d windows, <= %d binaries each (whole: %" G_GINT64_FORMAT
                        "); %d improved, %d moved; warm start %.3f ms%s",
                        ri.n_windows, ri.max_binaries, n_bin, ri.n_improved, ri.n_moved,
                        (double)start / 1e9, ri.n_cut > 0 ? "; time limit hit" : "");
    report_path(rep, "rolling", status, note);
    if (rep != NULL) {
        rep->objective_ms = rep->milp_objective_ms = obj;
        rep->bound_ms = bound;
        rep->gap = proved ? 0 : MAX(0, obj - bound) / obj;
        rep->seconds = ri.seconds;
        g_strlcpy(rep->milp_status, ri.n_died > 0 ? "crashed" : status, sizeof rep->milp_status);
    }
    *out = g_steal_pointer(warm);
    return TRUE;
}

static gboolean
optpipe_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                 PpsimSchedule **out, GError **error)
{
    const PpsimOptions *o = params->options;
    const PpsimCostEstimates *c = params->costs;
    PpsimOpMilpOptions mo = {0};
    gint64 max_bin;
    int window;
    if (!optpipe_read(o, &mo, &max_bin, &window, error))
        return FALSE;
    const char *cap = ppsim_options_is_set(o, "memory_limit")
                          ? ppsim_options_get_string(o, "memory_limit")
                          : NULL;
    g_autofree gint64 *limit = NULL;
    if (!ppsim_optpipe_limits(shape, c, cap, "optpipe", &limit, error))
        return FALSE;
    if (cap == NULL)
        ppsim_memory_cap_note(params->choices, c, limit, shape->p);
    mo.offload = mo.offload && limit != NULL; /* without a limit offloading cannot help */
    gint64 budget;
    gboolean is_auto;
    if (!ppsim_search_budget_get(o, "optpipe", 0, &budget, &is_auto, error))
        return FALSE;
    g_autoptr(PpsimSchedule) warm = NULL;
    PpsimOpEval warm_eval;
    PpsimAdaInfo ada_info;
    gint64 ada_budget = is_auto ? ppsim_adaoffload_auto_budget(shape->p, shape->m) : budget;
    if (!ppsim_adaoffload_build(shape, c, limit, mo.offload,
                                ppsim_options_get_string(o, "co_schedule"), ada_budget, &ada_info,
                                &warm, &warm_eval, error)) {
        g_prefix_error(error, "optpipe: ");
        return FALSE;
    }
    ppsim_adaoffload_note_budget(params->choices, shape, c, ada_budget, is_auto, &ada_info,
                                 &warm_eval);
    const char *warm_from = NULL;
    if (!optpipe_zb_warm(shape, c, limit,
                         is_auto ? ppsim_zb_auto_budget(shape->p, shape->m) : budget, &warm,
                         &warm_eval, &warm_from, error))
        return FALSE;
    PpsimSolverReport *rep = params->solver;
    /* the cache holds makespan schedules; an ablation caches nothing either way */
    g_autofree char *dir = mo.no_switch || mo.stage_span
                               ? NULL
                               : optpipe_cache_dir(ppsim_options_get_string(o, "cache_dir"));
    g_autofree char *key = ppsim_op_cache_key(shape, c, limit, mo.offload);
    gboolean from_cache = FALSE;
    PpsimTime cached_ps = G_MAXINT64;
    if (dir != NULL && !optpipe_cache_warm(dir, key, shape, c, limit, &warm, &warm_eval, &cached_ps,
                                           rep, &from_cache, error))
        return FALSE;
    gint64 m = shape->m,
           n_bin = shape->p * (m * (m - 1) / 2 * (mo.offload ? 7 : 3) + (mo.offload ? m : 0));
    if (ppsim_milp_available() && n_bin > max_bin && window > 0 &&
        ppsim_op_milp_shape_ok(warm, mo.offload))
        return optpipe_rolling(shape, c, limit, &mo, window, n_bin, &warm, &warm_eval, rep, out,
                               error);
    if (!ppsim_milp_available() || n_bin > max_bin) {
        g_autofree char *why =
            !ppsim_milp_available() ? g_strdup("built without CBC")
            : window > 0
                ? g_strdup_printf("%" G_GINT64_FORMAT " binaries > max_binaries %" G_GINT64_FORMAT
                                  "; the warm start is not in the model's shape for windows",
                                  n_bin, max_bin)
                : g_strdup_printf("%" G_GINT64_FORMAT " binaries > max_binaries %" G_GINT64_FORMAT,
                                  n_bin, max_bin);
        report_path(rep, "heuristic", "not-run", why);
        if (rep) { /* the objective the model would give the schedule: its estimated makespan */
            rep->objective_ms = (double)op_score(&mo, &warm_eval) / 1e9;
            rep->milp_objective_ms = NAN;
            rep->bound_ms = optpipe_bound_ms(shape, c, mo.stage_span);
            rep->gap = MAX(0, rep->objective_ms - rep->bound_ms) / rep->objective_ms;
        }
        *out = g_steal_pointer(&warm);
        return TRUE;
    }
    g_autoptr(PpsimSchedule) inc = NULL;
    PpsimOpMilpSolve info = {0};
    /* the warm start's makespan bounds every time; a stage span can take longer overall */
    if (!ppsim_op_milp_solve(shape, c, limit, warm, mo.stage_span ? 0 : warm_eval.makespan_ps, &mo,
                             &inc, &info, error)) {
        g_prefix_error(error, "optpipe: ");
        return FALSE;
    }
    report_solve(rep, &info.milp);
    const char *status = ppsim_milp_status_name(&info.milp);
    PpsimOpEval ev = {0};
    g_autoptr(GError) local = NULL;
    if (inc != NULL && !ppsim_op_eval(inc, c, limit, NULL, &ev, &local)) {
        ppsim_milp_result_clear(&info.milp);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "optpipe: the solver's schedule is not valid: %s", local->message);
        return FALSE;
    }
    ppsim_milp_result_clear(&info.milp);
    if (inc != NULL && ev.fits && op_score(&mo, &ev) <= op_score(&mo, &warm_eval)) {
        report_path(rep, "milp", status,
                    from_cache  ? "warm start from the cache"
                    : warm_from ? "warm start from zb"
                                : NULL);
        if (dir != NULL && ev.makespan_ps < cached_ps) {
            g_autoptr(GError) io = NULL;
            if (!ppsim_op_cache_store(dir, key, inc, ev.makespan_ps, &io) && rep != NULL)
                g_snprintf(rep->warning, sizeof rep->warning, "schedule not cached: %s",
                           io->message);
        }
        *out = g_steal_pointer(&inc);
    } else if (info.milp.died) {
        /* the solver's process died (a crash, or killed): the warm start stands, said in the
         * report (status crashed) and as a warning */
        report_warm(rep, op_score(&mo, &warm_eval), info.milp.bound,
                    "the MILP solver died before it answered; the warm start is kept");
        if (rep != NULL) {
            g_strlcpy(rep->status, "crashed", sizeof rep->status);
            g_snprintf(rep->warning, sizeof rep->warning,
                       "the MILP solver (CBC) died (%s); the warm start (%s) is used",
                       info.milp.died_why,
                       from_cache  ? "the cached schedule"
                       : warm_from ? warm_from
                                   : "adaoffload");
        }
        *out = g_steal_pointer(&warm);
    } else {
        /* the bound is the model's: with no solution (infeasible) it bounds nothing */
        double bound = inc == NULL && !info.milp.cut_off ? NAN : info.milp.bound;
        gboolean proved = !isnan(bound) && bound * 1e9 >= op_score(&mo, &warm_eval) * (1 - 1e-9);
        report_warm(rep, op_score(&mo, &warm_eval), bound,
                    info.milp.cut_off && proved
                        ? "the time limit stopped the solver; the LP bound proves the warm start "
                          "optimal"
                    : info.milp.cut_off ? "the time limit stopped the solver before it answered"
                    : inc == NULL       ? "no incumbent from the solver"
                    : !ev.fits          ? "the solver's schedule exceeds the limit when replayed"
                                        : "the solver's schedule is slower when replayed");
        *out = g_steal_pointer(&warm);
    }
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_optpipe = {
    .name = "optpipe",
    .summary = "OptPipe: App. C's MILP (CBC) with offload choices, AdaOffload warm start",
    .reference = "[OP] §3-4, App. C",
    .chunks = 1,
    .options = optpipe_options,
    .generate = optpipe_generate,
};
