/* plan-model.c: the planner's linear model of one assignment (the ILP's objective and
 * constraints evaluated directly), and the searches that need no solver: the greedy mode
 * choice, the local search that stands in for the ILP without CBC, and brute force for
 * tests. */
#include "plan/plan.h"
#include "cost/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

PpsimPlanAssignment *
ppsim_plan_assignment_new(int n_stages)
{
    PpsimPlanAssignment *a = g_new0(PpsimPlanAssignment, 1);
    a->n_stages = n_stages;
    a->layers = g_new0(int, n_stages);
    a->mode = g_new0(int, n_stages);
    a->mixed = g_new(int, n_stages);
    for (int i = 0; i < n_stages; i++)
        a->mixed[i] = -1;
    return a;
}

PpsimPlanAssignment *
ppsim_plan_assignment_copy(const PpsimPlanAssignment *a)
{
    PpsimPlanAssignment *c = g_new(PpsimPlanAssignment, 1);
    *c = *a;
    c->layers = g_memdup2(a->layers, sizeof(int) * a->n_stages);
    c->mode = g_memdup2(a->mode, sizeof(int) * a->n_stages);
    c->mixed = g_memdup2(a->mixed, sizeof(int) * a->n_stages);
    return c;
}

void
ppsim_plan_assignment_free(PpsimPlanAssignment *a)
{
    if (a == NULL)
        return;
    g_free(a->layers);
    g_free(a->mode);
    g_free(a->mixed);
    g_free(a);
}

/* Stage @s with @n layers, @km of them in mode @k and the rest in mode 0 (none): the
 * layers plus H on the first stage and T on the last. */
static PpsimPlanUnit
model_stage(const PpsimPlanProblem *pb, int s, int n, int k, int km)
{
    const PpsimPlanUnit *a = &pb->layer[k], *z = &pb->layer[0];
    int kz = n - km;
    PpsimPlanUnit u = {
        .f_ms = km * a->f_ms + kz * z->f_ms,
        .b_ms = km * a->b_ms + kz * z->b_ms,
        .w_ms = km * a->w_ms + kz * z->w_ms,
        .r_ms = km * a->r_ms + kz * z->r_ms,
        .act = km * a->act + kz * z->act,
        .act_w = km * a->act_w + kz * z->act_w,
        .static_mem = km * a->static_mem + kz * z->static_mem,
        .opt_ms = km * a->opt_ms + kz * z->opt_ms,
    };
    /* a mixture of experts' dense layers in H take the first stage's mode (plan.h) */
    const PpsimPlanUnit *head =
        km > 0 && pb->head_layers > 0 ? &pb->head_mode[k] : &pb->head_mode[0];
    const PpsimPlanUnit *extra[2] = {s == 0 ? head : NULL,
                                     s == pb->n_stages - 1 ? &pb->tail : NULL};
    for (int i = 0; i < 2; i++) {
        if (extra[i] == NULL)
            continue;
        u.f_ms += extra[i]->f_ms;
        u.b_ms += extra[i]->b_ms;
        u.w_ms += extra[i]->w_ms;
        u.act += extra[i]->act;
        u.act_w += extra[i]->act_w;
        u.static_mem += extra[i]->static_mem;
        u.opt_ms += extra[i]->opt_ms;
    }
    return u;
}

int
ppsim_plan_first_stage(const PpsimPlanProblem *pb, int s)
{
    int first = 0;
    while (pb->stage_device[first] != pb->stage_device[s])
        first++;
    return first;
}

int
ppsim_plan_in_mode(const PpsimPlanAssignment *a, int s)
{
    return a->mixed[s] < 0 ? a->layers[s] : MIN(a->mixed[s], a->layers[s]);
}

static PpsimPlanUnit
model_stage_of(const PpsimPlanProblem *pb, const PpsimPlanAssignment *a, int s)
{
    return model_stage(pb, s, a->layers[s], a->mode[s], ppsim_plan_in_mode(a, s));
}

static double
model_prep(const PpsimPlanProblem *pb, const PpsimPlanUnit *u)
{
    return pb->prep_f * u->f_ms + pb->prep_b * u->b_ms + pb->prep_w * u->w_ms;
}

/* Peak memory of device @d: its stages' static memory plus, at the worst check point, the
 * activations in flight. */
static double
model_device_memory(const PpsimPlanProblem *pb, const PpsimPlanAssignment *a, int d)
{
    double stat = 0, peak = 0;
    for (int s = 0; s < pb->n_stages; s++)
        if (pb->stage_device[s] == d)
            stat += model_stage_of(pb, a, s).static_mem;
    for (guint i = 0; i < pb->points->len; i++) {
        const PpsimPlanPoint *pt = g_ptr_array_index(pb->points, i);
        if (pt->device != d)
            continue;
        double act = 0;
        for (int s = 0; s < pb->n_stages; s++) {
            if (pt->n_full[s] == 0 && pt->n_w[s] == 0)
                continue;
            PpsimPlanUnit u = model_stage_of(pb, a, s);
            act += pt->n_full[s] * u.act + pt->n_w[s] * u.act_w;
        }
        peak = MAX(peak, act);
    }
    return stat + peak;
}

/* Whether two stage prices agree to rounding. */
static gboolean
model_same(const PpsimPlanUnit *a, const PpsimPlanUnit *b)
{
    double t = 1e-9 * (fabs(a->f_ms) + fabs(a->b_ms) + fabs(a->w_ms)) + 1e-12;
    double m = 1e-9 * (fabs(a->static_mem) + fabs(a->act)) + 1.0;
    return fabs(a->f_ms - b->f_ms) <= t && fabs(a->b_ms - b->b_ms) <= t &&
           fabs(a->w_ms - b->w_ms) <= t && fabs(a->static_mem - b->static_mem) <= m &&
           fabs(a->act - b->act) <= m && fabs(a->act_w - b->act_w) <= m;
}

void
ppsim_plan_evaluate(const PpsimPlanProblem *pb, PpsimPlanAssignment *a)
{
    int p = pb->p;
    /* a mode that changes nothing is none: a mixture of experts' first stage holding only
     * its dense layers in mode moe (not with tied chunks, whose stages share their mode) */
    for (int s = 0; s < pb->n_stages && !pb->tie_chunks; s++) {
        if (a->mode[s] == 0)
            continue;
        PpsimPlanUnit u = model_stage_of(pb, a, s), z = model_stage(pb, s, a->layers[s], 0, 0);
        if (model_same(&u, &z)) {
            a->mode[s] = 0;
            a->mixed[s] = -1;
        }
    }
    g_autofree double *dev = g_new0(double, p);
    g_autofree double *prep = g_new0(double, p);
    g_autofree double *rec = g_new0(double, p);
    g_autofree double *opt = g_new0(double, p);
    double prep_all = 0, opt_tail = 0;
    for (int s = 0; s < pb->n_stages; s++) {
        PpsimPlanUnit u = model_stage_of(pb, a, s);
        int d = pb->stage_device[s];
        dev[d] += u.f_ms + u.b_ms + u.w_ms;
        rec[d] += u.r_ms;
        opt[d] += u.opt_ms;
        opt_tail = MAX(opt_tail, opt[d]);
        prep[d] += model_prep(pb, &u);
        prep_all += model_prep(pb, &u);
    }
    double hops = 2.0 * (p - 1) * pb->comm_ms, makespan = 0, dmax = 0, sum_d = 0, sum_r = 0;
    if (pb->paced) { /* chunk pacing: each round through chunk c waits for its slowest stage */
        double paced = 0;
        for (int c = 0; c < pb->v; c++) {
            double x = 0;
            for (int s = c * p; s < (c + 1) * p; s++) {
                PpsimPlanUnit u = model_stage_of(pb, a, s);
                x = MAX(x, u.f_ms + u.b_ms + u.w_ms);
            }
            paced += x;
        }
        makespan = (pb->m + pb->pace_prep) * paced + hops;
    }
    a->peak_memory = 0;
    a->fits = TRUE;
    for (int d = 0; d < p; d++) {
        double t = pb->m * dev[d] + MAX(0.0, prep_all - prep[d]) + hops;
        makespan = MAX(makespan, t);
        dmax = MAX(dmax, dev[d]);
        sum_d += dev[d];
        sum_r += rec[d];
        double mem = model_device_memory(pb, a, d);
        /* reported as GPU memory (cost/memory.h); the limit is the allocator's share */
        a->peak_memory =
            MAX(a->peak_memory, (double)ppsim_mem_total((gint64)llround(mem), (gint64)pb->mem_fixed,
                                                        pb->mem_fragmentation));
        if (pb->limit > 0 && mem > pb->limit)
            a->fits = FALSE;
    }
    /* every device steps after the pipeline's end, the longest step last (sim-parallel.c);
     * the bubbles are the pipeline's */
    a->makespan_ms = makespan + opt_tail;
    a->b_recompute_ms = pb->m * sum_r;
    a->b_imbalance_ms = pb->m * (p * dmax - sum_d);
    a->b_preparation_ms = p * makespan - pb->m * p * dmax;
}

PpsimPlanAssignment *
ppsim_plan_even(const PpsimPlanProblem *pb, int mode)
{
    int S = pb->n_stages, L = pb->layers;
    PpsimPlanAssignment *a = ppsim_plan_assignment_new(S);
    for (int s = 0; s < S; s++) {
        a->layers[s] = (int)(((gint64)(s + 1) * L) / S - ((gint64)s * L) / S);
        a->mode[s] = mode;
    }
    ppsim_plan_evaluate(pb, a);
    return a;
}

/* Fewest layers stage @s may hold: the first and last may hold only H or T (alone on
 * their device: with tied chunks, its other stages need a layer); the first, at least the
 * dense layers priced in H. */
static int
model_min_layers(const PpsimPlanProblem *pb, int s)
{
    int least = pb->tie_chunks ? 1 : s == 0 || s == pb->n_stages - 1 ? 0 : 1;
    return s == 0 ? MAX(least, pb->head_layers) : least;
}

/* Untied chunks (v > 1, L not a multiple of v): every stage within a layer of its device's
 * first stage (plan.h); TRUE otherwise. */
static gboolean
model_balanced(const PpsimPlanProblem *pb, const PpsimPlanAssignment *a)
{
    if (pb->v <= 1 || pb->tie_chunks)
        return TRUE;
    for (int s = 0; s < pb->n_stages; s++)
        if (abs(a->layers[s] - a->layers[ppsim_plan_first_stage(pb, s)]) > 1)
            return FALSE;
    return TRUE;
}

/* With tied chunks, every stage of a device takes the layers of its first stage: the even
 * split rounded to per-device counts, the remainder dealt to the first devices. */
static void
model_tie(const PpsimPlanProblem *pb, PpsimPlanAssignment *a)
{
    if (!pb->tie_chunks)
        return;
    int per_dev = pb->layers / pb->v, extra = pb->layers % pb->v;
    for (int s = 0; s < pb->n_stages; s++) {
        int d = pb->stage_device[s];
        int n = (int)(((gint64)(d + 1) * per_dev) / pb->p - ((gint64)d * per_dev) / pb->p);
        a->layers[s] = n;
    }
    /* L not a multiple of v: the leftover layers go to the first chunk's stages in order
     * (ties then hold only approximately, as the scenario still sums to L) */
    for (int s = 0; extra > 0; s++, extra--)
        a->layers[s]++;
    ppsim_plan_evaluate(pb, a);
}

void
ppsim_plan_greedy_modes(const PpsimPlanProblem *pb, PpsimPlanAssignment *a)
{
    int S = pb->n_stages;
    g_autofree int *mine = g_new(int, S);
    for (int s = 0; s < S; s++)
        a->mixed[s] = -1; /* whole stages */
    g_autoptr(PpsimPlanAssignment) scratch = ppsim_plan_assignment_copy(a);
    int *mode = scratch->mode;
    for (int d = 0; d < pb->p; d++) {
        int n = 0;
        for (int s = 0; s < S; s++)
            if (pb->stage_device[s] == d)
                mine[n++] = s;
        int combos = 1;
        for (int i = 0; i < (pb->tie_chunks ? 1 : n); i++)
            combos *= pb->n_modes;
        double best_t = INFINITY, best_mem = INFINITY;
        gboolean best_fits = FALSE;
        int best = 0;
        for (int c = 0; c < combos; c++) {
            for (int i = 0, rest = c; i < n; i++, rest /= pb->tie_chunks ? 1 : pb->n_modes)
                mode[mine[i]] = rest % pb->n_modes;
            double t = 0;
            for (int i = 0; i < n; i++) {
                PpsimPlanUnit u = model_stage_of(pb, scratch, mine[i]);
                t += u.f_ms + u.b_ms + u.w_ms;
            }
            double mem = model_device_memory(pb, scratch, d);
            gboolean fits = pb->limit <= 0 || mem <= pb->limit;
            gboolean better = fits ? !best_fits || t < best_t || (t == best_t && mem < best_mem)
                                   : !best_fits && mem < best_mem;
            if (better) {
                best = c;
                best_t = t;
                best_mem = mem;
                best_fits = fits;
            }
        }
        for (int i = 0, rest = best; i < n; i++, rest /= pb->tie_chunks ? 1 : pb->n_modes)
            a->mode[mine[i]] = mode[mine[i]] = rest % pb->n_modes;
    }
    ppsim_plan_evaluate(pb, a);
}

/* Better plan: one that fits, then the shorter predicted makespan, then less memory. */
static gboolean
model_better(const PpsimPlanAssignment *x, const PpsimPlanAssignment *y)
{
    if (x->fits != y->fits)
        return x->fits;
    if (!x->fits)
        return x->peak_memory < y->peak_memory - 1e-9;
    if (x->makespan_ms < y->makespan_ms - 1e-9)
        return TRUE;
    return x->makespan_ms <= y->makespan_ms + 1e-9 && x->peak_memory < y->peak_memory - 1e-9;
}

PpsimPlanAssignment *
ppsim_plan_local_search(const PpsimPlanProblem *pb)
{
    /* units of a move: one stage; with tied chunks, one device (a layer per chunk) */
    int S = pb->n_stages, units = pb->tie_chunks ? pb->p : S, per = pb->tie_chunks ? pb->v : 1;
    g_autofree int *members = g_new(int, S);
    for (int u = 0, i = 0; u < units; u++)
        for (int s = 0; s < S; s++)
            if (pb->tie_chunks ? pb->stage_device[s] == u : s == u)
                members[i++] = s;
    g_autoptr(PpsimPlanAssignment) cur = ppsim_plan_even(pb, 0);
    model_tie(pb, cur);
    ppsim_plan_greedy_modes(pb, cur);
    for (;;) {
        g_autoptr(PpsimPlanAssignment) best = NULL;
        for (int from = 0; from < units; from++) {
            gboolean can = TRUE;
            for (int i = 0; i < per; i++) {
                int s = members[from * per + i];
                can &= cur->layers[s] > model_min_layers(pb, s);
            }
            if (!can)
                continue;
            for (int to = 0; to < units; to++) {
                if (to == from)
                    continue;
                g_autoptr(PpsimPlanAssignment) cand = ppsim_plan_assignment_copy(cur);
                for (int i = 0; i < per; i++) {
                    cand->layers[members[from * per + i]]--;
                    cand->layers[members[to * per + i]]++;
                }
                if (!model_balanced(pb, cand))
                    continue;
                ppsim_plan_greedy_modes(pb, cand);
                if (model_better(cand, best ? best : cur)) {
                    ppsim_plan_assignment_free(best);
                    best = g_steal_pointer(&cand);
                }
            }
        }
        if (best == NULL)
            return g_steal_pointer(&cur);
        ppsim_plan_assignment_free(cur);
        cur = g_steal_pointer(&best);
    }
}

static void
brute_modes(const PpsimPlanProblem *pb, PpsimPlanAssignment *a, int s, PpsimPlanAssignment **best)
{
    if (s == pb->n_stages) {
        ppsim_plan_evaluate(pb, a);
        if (*best == NULL || model_better(a, *best)) {
            ppsim_plan_assignment_free(*best);
            *best = ppsim_plan_assignment_copy(a);
        }
        return;
    }
    /* mode 0 for the whole stage, or c >= 1 of its layers in mode k (on the first stage at
     * least its dense layers: plan.h head_mode), the rest in mode 0 */
    a->mode[s] = 0;
    a->mixed[s] = -1;
    brute_modes(pb, a, s + 1, best);
    for (int k = 1; k < pb->n_modes; k++)
        for (int c = s == 0 ? MAX(1, pb->head_layers) : 1; c <= a->layers[s]; c++) {
            a->mode[s] = k;
            a->mixed[s] = c == a->layers[s] ? -1 : c;
            brute_modes(pb, a, s + 1, best);
        }
    a->mode[s] = 0;
    a->mixed[s] = -1;
}

static void
brute_split(const PpsimPlanProblem *pb, PpsimPlanAssignment *a, int s, int left,
            PpsimPlanAssignment **best)
{
    int S = pb->n_stages;
    if (s == S - 1) {
        if (left < model_min_layers(pb, s))
            return;
        a->layers[s] = left;
        if (model_balanced(pb, a))
            brute_modes(pb, a, 0, best);
        return;
    }
    for (int n = model_min_layers(pb, s); n <= left; n++) {
        a->layers[s] = n;
        brute_split(pb, a, s + 1, left - n, best);
    }
}

PpsimPlanAssignment *
ppsim_plan_brute_force(const PpsimPlanProblem *pb)
{
    g_autoptr(PpsimPlanAssignment) a = ppsim_plan_assignment_new(pb->n_stages);
    PpsimPlanAssignment *best = NULL;
    brute_split(pb, a, 0, pb->layers, &best);
    return best;
}
