/* op-rolling.c: a rolling horizon over OptPipe's MILP; see op-rolling.h.
 *
 * Each window opens, on every device, the compute ops that start within a span of the
 * incumbent's estimated timeline (one contiguous run of its list); the MILP (op-milp.c with
 * a window) decides their orders and the offload choices of the microbatches whose F and B
 * are both open; every other order and choice is the incumbent's, the ops that start
 * before the window keep their times, and the later ones' times are free, so a window's
 * solution retimes everything after it. The MIP start is the incumbent, so each window's
 * model is feasible and the result never worse; at the same score, a schedule whose compute
 * ops start earlier in sum (the window's second objective) is taken too. Deterministic as
 * long as the node limit, not the wall clock, ends each window (n_cut says when it did not).
 */
#include "sched/optpipe/op-rolling.h"
#include "sched/co-schedule.h"
#include "schedule/schedule-index.h"

#include <math.h>

static PpsimTime
score(const PpsimOpMilpOptions *o, const PpsimOpEval *ev)
{
    return o->stage_span ? ev->span_ps : ev->makespan_ps;
}

gboolean
ppsim_op_rolling(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                 const gint64 *limit, const PpsimOpMilpOptions *opts, int window_ops,
                 PpsimSchedule **sched, PpsimOpEval *eval, PpsimOpRollingInfo *info, GError **error)
{
    *info = (PpsimOpRollingInfo){0};
    g_return_val_if_fail(window_ops >= 1, FALSE);
    double mk = (double)eval->makespan_ps;
    double len = MIN(1.0, (double)window_ops / (3.0 * shape->m)) * mk, step = len / 2;
    int n = len >= mk ? 1 : (int)ceil((mk - len) / step) + 1;
    PpsimOpMilpOptions wo = *opts;
    wo.window = TRUE;
    wo.solver.light = TRUE;
    if (opts->solver.time_limit_s > 0)
        wo.solver.time_limit_s = opts->solver.time_limit_s / n;
    for (int k = 0; k < n; k++) {
        wo.win_t0 = (PpsimTime)llround(k * step);
        /* the last window reaches past the end, whatever the incumbent's makespan now */
        wo.win_t1 = k + 1 == n ? G_MAXINT64 : (PpsimTime)llround(k * step + len);
        g_autoptr(PpsimSchedule) inc = NULL;
        PpsimOpMilpSolve si = {0};
        if (!ppsim_op_milp_solve(shape, costs, limit, *sched,
                                 opts->stage_span ? 0 : eval->makespan_ps, &wo, &inc, &si, error))
            return FALSE;
        info->n_windows++;
        info->max_binaries = MAX(info->max_binaries, si.n_binaries);
        info->seconds += si.milp.seconds;
        info->n_cut += si.milp.time_limit_hit || si.milp.cut_off;
        info->n_died += si.milp.died;
        ppsim_milp_result_clear(&si.milp);
        PpsimOpEval ev;
        g_autoptr(GError) local = NULL;
        if (inc == NULL || !ppsim_op_eval(inc, costs, limit, NULL, &ev, &local) || !ev.fits ||
            score(opts, &ev) > score(opts, eval))
            continue;
        gboolean better = score(opts, &ev) < score(opts, eval);
        if (!better && ev.start_sum_ps >= eval->start_sum_ps)
            continue;
        ppsim_schedule_free(*sched);
        *sched = g_steal_pointer(&inc);
        *eval = ev;
        info->n_improved += better;
        info->n_moved += !better;
    }
    return TRUE;
}
