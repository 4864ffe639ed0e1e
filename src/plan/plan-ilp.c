/* plan-ilp.c: phases 2-3 of [HP] Algorithm 1: the integer program, solved on CBC through
 * src/milp.
 *
 * Variables: l[s,r] >= 0 integer, the transformer layers of stage s (a (chunk, device) pair
 * of the family's map) in recompute mode r, with binaries y[s,r] (r >= 1) allowing one mode
 * besides none per stage (what `model.stage_recompute` can say: a mode, or {mode: k} with
 * the rest none); M, the makespan. With one transformer layer type, [HP]'s order and
 * contiguity constraints (C1) hold by construction: layers are dealt to stages in stage
 * order, H to the first, T to the last.
 *   C1  sum_{s,r} l[s,r] = L;  l[s,r] <= L y[s,r], sum_{r>=1} y[s,r] <= 1;  middle stages >= 1,
 *       the first >= the dense layers priced in H
 *   C2  per device d and check point k (plan-costs.c): static + in-flight activations
 *       <= memory limit
 *   C3  M >= m D_d + hops  and  M >= m D_d + sum_{s not on d} P_s + hops  for every d
 * minimise M: with p devices, p M = useful work (fixed) + B_R + B_I + B_P, so this is [HP]'s
 * B_G. A 1e-6 weight on recompute time breaks ties towards less recompute. Times in ms,
 * memory in units of one layer's largest footprint, so the coefficients stay within a few
 * orders of magnitude whatever the model's size.
 */
#include "plan/plan.h"
#include "milp/milp.h"
#include "util/ppsim-error.h"

#include <math.h>

typedef struct {
    PpsimMilp *milp;
    int *l, *y;      /* [S * n_modes] column ids */
    int M;           /* makespan, or the peak memory with min_memory */
    double mem_unit; /* bytes per memory unit of the rows: one layer's largest footprint */
} Ilp;

static int
ilp_col(const PpsimPlanProblem *pb, int s, int k)
{
    return s * pb->n_modes + k;
}

/* Constant part of stage @s (H or T) and per-layer part in mode @k. */
static PpsimPlanUnit
ilp_extra(const PpsimPlanProblem *pb, int s)
{
    PpsimPlanUnit u = {0};
    if (s == 0)
        u = pb->head_mode[0];
    if (s == pb->n_stages - 1) {
        u.f_ms += pb->tail.f_ms;
        u.b_ms += pb->tail.b_ms;
        u.w_ms += pb->tail.w_ms;
        u.act += pb->tail.act;
        u.act_w += pb->tail.act_w;
        u.static_mem += pb->tail.static_mem;
        u.opt_ms += pb->tail.opt_ms;
    }
    return u;
}

/* What H in mode @k adds to a row over H in mode none (plan.h head_mode), its parts
 * weighted @wt (f, b, w, static memory, activation, W-held activation). */
static double
ilp_head_delta(const PpsimPlanProblem *pb, int k, const double wt[6])
{
    const PpsimPlanUnit *a = &pb->head_mode[k], *b = &pb->head_mode[0];
    return wt[0] * (a->f_ms - b->f_ms) + wt[1] * (a->b_ms - b->b_ms) + wt[2] * (a->w_ms - b->w_ms) +
           wt[3] * (a->static_mem - b->static_mem) + wt[4] * (a->act - b->act) +
           wt[5] * (a->act_w - b->act_w);
}

/* plan.h head_mode: a first stage with layers in mode k >= 1 takes head_mode[k] for H, so
 * the difference to H times y[0,k] joins stage 0's terms of a row, weighted as its layers
 * are. Appends to @cols and @coef; returns how many. */
static int
ilp_head_terms(const Ilp *ilp, const PpsimPlanProblem *pb, int s, const double wt[6], int *cols,
               double *coef)
{
    int nz = 0;
    for (int k = 1; s == 0 && pb->head_layers > 0 && k < pb->n_modes; k++) {
        cols[nz] = ilp->y[ilp_col(pb, 0, k)];
        coef[nz++] = ilp_head_delta(pb, k, wt);
    }
    return nz;
}

/* The most layers stage @s can hold in mode @k: all L, or under the memory limit
 * (@min_memory: there is none, it is the objective) as many as fit its device at its
 * fullest check point, every other term of the row at its least (each is at least 0; the
 * first stage's head in its least costly mode). Tightens l <= U y. */
static int
ilp_most_layers(const PpsimPlanProblem *pb, int s, int k, gboolean min_memory)
{
    int L = pb->layers;
    if (pb->limit <= 0 || min_memory)
        return L;
    double most = L;
    for (guint i = 0; i < pb->points->len; i++) {
        const PpsimPlanPoint *pt = g_ptr_array_index(pb->points, i);
        if (pt->device != pb->stage_device[s])
            continue;
        double fixed = 0;
        for (int t = 0; t < pb->n_stages; t++) {
            if (pb->stage_device[t] != pt->device)
                continue;
            PpsimPlanUnit e = ilp_extra(pb, t);
            double base = e.static_mem + pt->n_full[t] * e.act + pt->n_w[t] * e.act_w;
            double least = base, wt[6] = {0, 0, 0, 1.0, pt->n_full[t], pt->n_w[t]};
            for (int j = 1; t == 0 && pb->head_layers > 0 && j < pb->n_modes; j++)
                least = MIN(least, base + ilp_head_delta(pb, j, wt));
            fixed += least;
        }
        const PpsimPlanUnit *u = &pb->layer[k];
        double per = u->static_mem + pt->n_full[s] * u->act + pt->n_w[s] * u->act_w;
        if (per > 0)
            most = MIN(most, floor((pb->limit - fixed) / per));
    }
    return (int)CLAMP(most, 0, L);
}

static void
ilp_structure(Ilp *ilp, const PpsimPlanProblem *pb, gboolean min_memory)
{
    int S = pb->n_stages, K = pb->n_modes, L = pb->layers;
    g_autofree int *cols = g_new(int, S *K + 1);
    g_autofree double *coef = g_new(double, S *K + 1);
    for (int s = 0; s < S; s++) {
        /* mode 0 (none) plus at most one other mode per stage: l[s,k] <= L y[s,k] for
         * k >= 1 and sum_{k >= 1} y[s,k] <= 1 */
        for (int k = 1; k < K; k++) {
            int c[2] = {ilp->l[ilp_col(pb, s, k)], ilp->y[ilp_col(pb, s, k)]};
            double a[2] = {1.0, -(double)ilp_most_layers(pb, s, k, min_memory)};
            ppsim_milp_add_row(ilp->milp, 2, c, a, 'L', 0.0);
            cols[k - 1] = ilp->y[ilp_col(pb, s, k)];
            coef[k - 1] = 1.0;
        }
        if (K > 1)
            ppsim_milp_add_row(ilp->milp, K - 1, cols, coef, 'L', 1.0);
        int least = (s > 0 && s < S - 1) || pb->tie_chunks ? 1 : 0;
        if (s == 0) /* the dense layers priced in H, in the mode of the stage's first layers:
                     * l[0,k] >= head_layers y[0,k] */
            least = MAX(least, pb->head_layers);
        for (int k = 1; s == 0 && pb->head_layers > 0 && k < K; k++) {
            int c[2] = {ilp->l[ilp_col(pb, 0, k)], ilp->y[ilp_col(pb, 0, k)]};
            double a[2] = {1.0, -(double)pb->head_layers};
            ppsim_milp_add_row(ilp->milp, 2, c, a, 'G', 0.0);
        }
        if (least > 0) {
            for (int k = 0; k < K; k++) {
                cols[k] = ilp->l[ilp_col(pb, s, k)];
                coef[k] = 1.0;
            }
            ppsim_milp_add_row(ilp->milp, K, cols, coef, 'G', (double)least);
        }
    }
    for (int i = 0; i < S * K; i++) {
        cols[i] = ilp->l[i];
        coef[i] = 1.0;
    }
    ppsim_milp_add_row(ilp->milp, S * K, cols, coef, 'E', (double)L);
    /* tied chunks (plan.h): each stage as its device's first stage, layers and mode */
    for (int s = 0; pb->tie_chunks && s < S; s++) {
        int first = ppsim_plan_first_stage(pb, s);
        if (first == s)
            continue;
        for (int k = 0; k < K; k++) {
            double a[2] = {1.0, -1.0};
            int cl[2] = {ilp->l[ilp_col(pb, s, k)], ilp->l[ilp_col(pb, first, k)]};
            int cy[2] = {ilp->y[ilp_col(pb, s, k)], ilp->y[ilp_col(pb, first, k)]};
            ppsim_milp_add_row(ilp->milp, 2, cl, a, 'E', 0.0);
            ppsim_milp_add_row(ilp->milp, 2, cy, a, 'E', 0.0);
        }
    }
    /* untied chunks (plan.h): each stage within a layer of its device's first stage */
    for (int s = 0; pb->v > 1 && !pb->tie_chunks && s < S; s++) {
        int first = ppsim_plan_first_stage(pb, s);
        if (first == s)
            continue;
        g_autofree int *cc = g_new(int, 2 * K);
        g_autofree double *aa = g_new(double, 2 * K);
        for (int k = 0; k < K; k++) {
            cc[k] = ilp->l[ilp_col(pb, s, k)];
            aa[k] = 1.0;
            cc[K + k] = ilp->l[ilp_col(pb, first, k)];
            aa[K + k] = -1.0;
        }
        ppsim_milp_add_row(ilp->milp, 2 * K, cc, aa, 'L', 1.0);
        ppsim_milp_add_row(ilp->milp, 2 * K, cc, aa, 'G', -1.0);
    }
}

/* C2: one row per check point; with @min_memory the limit is the column M. */
static void
ilp_memory(Ilp *ilp, const PpsimPlanProblem *pb, gboolean min_memory)
{
    int S = pb->n_stages, K = pb->n_modes;
    g_autofree int *cols = g_new(int, (S + 1) * K + 1);
    g_autofree double *coef = g_new(double, (S + 1) * K + 1);
    for (guint i = 0; i < pb->points->len; i++) {
        const PpsimPlanPoint *pt = g_ptr_array_index(pb->points, i);
        int nz = 0;
        double fixed = 0;
        for (int s = 0; s < S; s++) {
            if (pb->stage_device[s] != pt->device)
                continue;
            PpsimPlanUnit e = ilp_extra(pb, s);
            fixed += e.static_mem + pt->n_full[s] * e.act + pt->n_w[s] * e.act_w;
            for (int k = 0; k < K; k++) {
                const PpsimPlanUnit *u = &pb->layer[k];
                cols[nz] = ilp->l[ilp_col(pb, s, k)];
                coef[nz++] = (u->static_mem + pt->n_full[s] * u->act + pt->n_w[s] * u->act_w) /
                             ilp->mem_unit;
            }
            double wt[6] = {0,
                            0,
                            0,
                            1.0 / ilp->mem_unit,
                            pt->n_full[s] / ilp->mem_unit,
                            pt->n_w[s] / ilp->mem_unit};
            nz += ilp_head_terms(ilp, pb, s, wt, cols + nz, coef + nz);
        }
        if (min_memory) {
            cols[nz] = ilp->M;
            coef[nz++] = -1.0;
            ppsim_milp_add_row(ilp->milp, nz, cols, coef, 'L', -fixed / ilp->mem_unit);
        } else if (pb->limit > 0) {
            ppsim_milp_add_row(ilp->milp, nz, cols, coef, 'L', (pb->limit - fixed) / ilp->mem_unit);
        }
    }
}

/* C3: two rows per device. */
static void
ilp_makespan(Ilp *ilp, const PpsimPlanProblem *pb)
{
    int S = pb->n_stages, K = pb->n_modes;
    double hops = 2.0 * (pb->p - 1) * pb->comm_ms;
    g_autofree int *cols = g_new(int, (S + 1) * K + 1);
    g_autofree double *coef = g_new(double, (S + 1) * K + 1);
    for (int d = 0; d < pb->p; d++) {
        for (int with_prep = 0; with_prep < 2; with_prep++) {
            int nz = 0;
            double fixed = hops;
            for (int s = 0; s < S; s++) {
                gboolean mine = pb->stage_device[s] == d;
                if (!mine && !with_prep)
                    continue;
                PpsimPlanUnit e = ilp_extra(pb, s);
                double prep_e = pb->prep_f * e.f_ms + pb->prep_b * e.b_ms + pb->prep_w * e.w_ms;
                fixed += mine ? pb->m * (e.f_ms + e.b_ms + e.w_ms) : prep_e;
                for (int k = 0; k < K; k++) {
                    const PpsimPlanUnit *u = &pb->layer[k];
                    cols[nz] = ilp->l[ilp_col(pb, s, k)];
                    coef[nz++] =
                        mine
                            ? -pb->m * (u->f_ms + u->b_ms + u->w_ms)
                            : -(pb->prep_f * u->f_ms + pb->prep_b * u->b_ms + pb->prep_w * u->w_ms);
                }
                double mm = -(double)pb->m;
                double wt[6] = {mine ? mm : -pb->prep_f,
                                mine ? mm : -pb->prep_b,
                                mine ? mm : -pb->prep_w,
                                0,
                                0,
                                0};
                nz += ilp_head_terms(ilp, pb, s, wt, cols + nz, coef + nz);
            }
            cols[nz] = ilp->M;
            coef[nz++] = 1.0;
            ppsim_milp_add_row(ilp->milp, nz, cols, coef, 'G', fixed);
        }
    }
}

/* The optimizer step after the pipeline (plan.h opt_ms): a column O >= each device's step,
 * in the objective beside M (none when no stage has one, as without the kernel model). */
static void
ilp_optimizer(Ilp *ilp, const PpsimPlanProblem *pb)
{
    int S = pb->n_stages, K = pb->n_modes;
    gboolean any = pb->head_mode[0].opt_ms > 0 || pb->tail.opt_ms > 0;
    for (int k = 0; k < K; k++)
        any |= pb->layer[k].opt_ms > 0;
    if (!any)
        return;
    int O = ppsim_milp_add_col(ilp->milp, 0, INFINITY, 1.0, FALSE);
    g_autofree int *cols = g_new(int, S *K + 1);
    g_autofree double *coef = g_new(double, S *K + 1);
    for (int d = 0; d < pb->p; d++) {
        int nz = 0;
        double fixed = 0;
        for (int s = 0; s < S; s++) {
            if (pb->stage_device[s] != d)
                continue;
            fixed += ilp_extra(pb, s).opt_ms;
            for (int k = 0; k < K; k++) {
                cols[nz] = ilp->l[ilp_col(pb, s, k)];
                coef[nz++] = -pb->layer[k].opt_ms;
            }
        }
        cols[nz] = O;
        coef[nz++] = 1.0;
        ppsim_milp_add_row(ilp->milp, nz, cols, coef, 'G', fixed);
    }
}

/* Chunk pacing (plan.h paced): X_c >= (F+B+W)_s for the stages of chunk c and
 * M >= (m + pace_prep) sum_c X_c + hops. */
static void
ilp_pacing(Ilp *ilp, const PpsimPlanProblem *pb)
{
    int p = pb->p, K = pb->n_modes;
    g_autofree int *x = g_new(int, pb->v);
    g_autofree int *cols = g_new(int, 2 * K + pb->v + 1);
    g_autofree double *coef = g_new(double, 2 * K + pb->v + 1);
    for (int c = 0; c < pb->v; c++) {
        x[c] = ppsim_milp_add_col(ilp->milp, 0, INFINITY, 0, FALSE);
        for (int s = c * p; s < (c + 1) * p; s++) {
            PpsimPlanUnit e = ilp_extra(pb, s);
            int nz = 0;
            for (int k = 0; k < K; k++) {
                const PpsimPlanUnit *u = &pb->layer[k];
                cols[nz] = ilp->l[ilp_col(pb, s, k)];
                coef[nz++] = -(u->f_ms + u->b_ms + u->w_ms);
            }
            static const double wt[6] = {-1, -1, -1, 0, 0, 0};
            nz += ilp_head_terms(ilp, pb, s, wt, cols + nz, coef + nz);
            cols[nz] = x[c];
            coef[nz++] = 1.0;
            ppsim_milp_add_row(ilp->milp, nz, cols, coef, 'G', e.f_ms + e.b_ms + e.w_ms);
        }
    }
    for (int c = 0; c < pb->v; c++) {
        cols[c] = x[c];
        coef[c] = -(pb->m + pb->pace_prep);
    }
    cols[pb->v] = ilp->M;
    coef[pb->v] = 1.0;
    ppsim_milp_add_row(ilp->milp, pb->v + 1, cols, coef, 'G', 2.0 * (p - 1) * pb->comm_ms);
}

/* Reads the incumbent into an assignment. */
static PpsimPlanAssignment *
ilp_read(const Ilp *ilp, const PpsimPlanProblem *pb, const double *x)
{
    PpsimPlanAssignment *a = ppsim_plan_assignment_new(pb->n_stages);
    for (int s = 0; s < pb->n_stages; s++) {
        int other = 0, in_other = 0;
        for (int k = 0; k < pb->n_modes; k++) {
            int n = (int)llround(x[ilp->l[ilp_col(pb, s, k)]]);
            if (k > 0 && n > 0) {
                other = k;
                in_other = n;
            }
            a->layers[s] += n;
        }
        a->mode[s] = other;
        a->mixed[s] = other == 0 || in_other == a->layers[s] ? -1 : in_other;
    }
    ppsim_plan_evaluate(pb, a);
    return a;
}

PpsimPlanAssignment *
ppsim_plan_ilp(const PpsimPlanProblem *pb, gboolean min_memory, double time_limit_s,
               PpsimPlan *report, GError **error)
{
    int S = pb->n_stages, K = pb->n_modes;
    g_autoptr(PpsimMilp) milp = ppsim_milp_new();
    g_autofree int *l = g_new(int, S *K);
    g_autofree int *y = g_new(int, S *K);
    Ilp ilp = {milp, l, y, 0, 1.0};
    for (int k = 0; k < K; k++)
        ilp.mem_unit = MAX(ilp.mem_unit, pb->layer[k].static_mem + pb->layer[k].act);
    for (int s = 0; s < S; s++)
        for (int k = 0; k < K; k++) {
            double tie = min_memory ? 0.0 : 1e-6 * pb->m * pb->layer[k].r_ms;
            l[ilp_col(pb, s, k)] = ppsim_milp_add_col(milp, 0, pb->layers, tie, TRUE);
            y[ilp_col(pb, s, k)] = ppsim_milp_add_col(milp, 0, 1, 0, TRUE);
        }
    ilp.M = ppsim_milp_add_col(milp, 0, INFINITY, 1.0, FALSE);
    ilp_structure(&ilp, pb, min_memory);
    ilp_memory(&ilp, pb, min_memory);
    if (!min_memory)
        ilp_makespan(&ilp, pb);
    if (!min_memory && pb->paced)
        ilp_pacing(&ilp, pb);
    if (!min_memory)
        ilp_optimizer(&ilp, pb);
    /* MIP start: the local search's plan when it fits */
    g_autoptr(PpsimPlanAssignment) start = ppsim_plan_local_search(pb);
    if (start->fits || min_memory)
        for (int s = 0; s < S; s++)
            for (int k = 0; k < K; k++) { /* the local search keeps whole stages */
                gboolean on = start->mode[s] == k;
                ppsim_milp_set_start(milp, l[ilp_col(pb, s, k)], on ? start->layers[s] : 0);
                ppsim_milp_set_start(milp, y[ilp_col(pb, s, k)], on && k > 0 ? 1 : 0);
            }
    PpsimMilpOptions opts = {.time_limit_s = time_limit_s > 0 ? time_limit_s : 60,
                             .node_limit = 0,
                             .gap = 1e-7,
                             .threads = 1};
    PpsimMilpResult res = {0};
    if (!ppsim_milp_solve(milp, &opts, &res, error))
        return NULL;
    if (report != NULL) {
        g_strlcpy(report->status, ppsim_milp_status_name(&res), sizeof(report->status));
        report->seconds = res.seconds;
        report->gap = res.gap;
    }
    PpsimPlanAssignment *a = res.x != NULL ? ilp_read(&ilp, pb, res.x) : NULL;
    /* stopped at the time limit before the solver answered: the MIP start stands, if any */
    if ((res.cut_off || res.died) && (start->fits || min_memory))
        a = g_steal_pointer(&start);
    else if (res.died)
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "the ILP solver died (%s) before it found a plan and the local search has "
                    "none that fits",
                    res.died_why);
    else if (res.cut_off)
        g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                    "the ILP solver was stopped at its time limit (%g s) before it found a plan "
                    "and the local search has none that fits; raise --time-limit",
                    opts.time_limit_s);
    ppsim_milp_result_clear(&res);
    return a;
}
