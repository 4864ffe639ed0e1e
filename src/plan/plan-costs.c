/* plan-costs.c: phase 1 of [HP] Algorithm 1: the cost of each distinct layer type and
 * (type, recompute) pair, and the schedule family's structure.
 *
 * Costs come from the cost model itself, on a probe scenario of three one-layer stages
 * (H + l, l, l + T) per recompute mode: the middle stage is one layer, the differences to
 * it are the embedding and the head. So the hardware, the efficiency, TP/SP/ZeRO and the
 * model's shape all flow through, and the planner can never disagree with the replay on a
 * unit's price. The structure (which stage sits on which device, how many microbatches
 * each device holds when it allocates) is read from the family's generator output: the op
 * order of 1F1B, interleaved, ZB-H1 and ZB-V does not depend on the layer split.
 */
#include "plan/plan.h"
#include "cost/memory.h"
#include "cost/cost-model.h"
#include "sched/registry.h"
#include "util/ppsim-error.h"
#include "sim/sim.h"

#include <string.h>

static double
cost_ms(PpsimTime ps)
{
    return (double)ps / (double)PPSIM_PS_PER_MS;
}

static void
unit_from_stage(PpsimPlanUnit *u, const PpsimStageCost *st)
{
    u->f_ms = cost_ms(st->est.f_ps);
    u->b_ms = cost_ms(st->est.b_ps);
    u->w_ms = cost_ms(st->est.w_ps);
    u->r_ms = cost_ms(st->b_recompute_ps);
    u->act = (double)st->est.act;
    u->act_w = (double)st->est.act_w;
    u->static_mem = (double)(st->static_mem + st->logits_grad_mem); /* + the loss's transient */
    u->opt_ms = cost_ms(st->opt_ps);
}

static void
unit_sub(PpsimPlanUnit *out, const PpsimPlanUnit *a, const PpsimPlanUnit *b)
{
    out->f_ms = a->f_ms - b->f_ms;
    out->b_ms = a->b_ms - b->b_ms;
    out->w_ms = a->w_ms - b->w_ms;
    out->r_ms = a->r_ms - b->r_ms;
    out->act = a->act - b->act;
    out->act_w = a->act_w - b->act_w;
    out->static_mem = a->static_mem - b->static_mem;
    out->opt_ms = a->opt_ms - b->opt_ms;
}

static gboolean
unit_equal(const PpsimPlanUnit *a, const PpsimPlanUnit *b)
{
    return a->f_ms == b->f_ms && a->b_ms == b->b_ms && a->w_ms == b->w_ms && a->act == b->act &&
           a->act_w == b->act_w && a->static_mem == b->static_mem;
}

/* out = a - k b */
static void
unit_sub_times(PpsimPlanUnit *out, const PpsimPlanUnit *a, const PpsimPlanUnit *b, int k)
{
    *out = *a;
    for (int i = 0; i < k; i++)
        unit_sub(out, out, b);
}

/* Prices mode @r on the probe (H + d + l, l, l + T): l is the model's typical layer (an MoE
 * layer in a mixture of experts) and d the pb->head_layers dense layers a mixture of experts
 * starts with, which the first stage holds (their difference to l goes into H). */
static gboolean
costs_probe(const PpsimScenario *sc, PpsimRecompute r, int dense, PpsimPlanUnit *layer,
            PpsimPlanUnit *head, PpsimPlanUnit *tail, double *copy, double *comm_ms, GError **error)
{
    PpsimScenario probe = *sc;
    int counts[3] = {1 + dense, 1, 1}, modes[3] = {r, r, r};
    g_autoptr(GArray) split = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) rc = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_vals(split, counts, 3);
    g_array_append_vals(rc, modes, 3);
    probe.model.layers = 3 + dense;
    probe.model.moe.dense_layers = dense;
    probe.model.stage_layers = split;
    probe.model.stage_recompute = rc;
    probe.model.stage_recompute_layers = NULL;
    g_autoptr(PpsimCosts) c = ppsim_costs_new(&probe, 3, error);
    if (c == NULL)
        return FALSE;
    PpsimPlanUnit first, last;
    unit_from_stage(layer, &c->stage[1]);
    unit_from_stage(&first, &c->stage[0]);
    unit_from_stage(&last, &c->stage[2]);
    unit_sub_times(head, &first, layer, 1 + dense);
    unit_sub(tail, &last, layer);
    const PpsimStageCost *end = &c->stage[2];
    *copy = end->copy_weights_mem + end->copy_grads_mem + end->copy_opt_mem;
    *comm_ms = cost_ms(c->estimates.comm_ps);
    return TRUE;
}

/* [HP]'s recompute set R: none, for multi-head latent attention mla_up_proj (its
 * up-projections re-run), selective, for a mixture of experts moe (its MLP blocks re-run), and
 * full, in that order of time; less any mode that prices the same as an earlier one
 * (selective is a no-op with FlashAttention, [KOR] §5). A mixture of experts is priced by its
 * MoE layer, its leading dense layers in the head of each mode (plan.h). */
static gboolean
costs_modes(PpsimPlanProblem *pb, const PpsimScenario *sc, GError **error)
{
    const PpsimMoe *moe = &sc->model.moe;
    PpsimRecompute all[] = {PPSIM_RECOMPUTE_NONE, PPSIM_RECOMPUTE_MLA_UP, PPSIM_RECOMPUTE_SELECTIVE,
                            PPSIM_RECOMPUTE_MOE, PPSIM_RECOMPUTE_FULL};
    pb->head_layers = moe->experts > 0 ? MIN(moe->dense_layers, pb->layers / pb->n_stages) : 0;
    for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
        if (all[i] == PPSIM_RECOMPUTE_MOE && moe->experts <= 0)
            continue;
        if (all[i] == PPSIM_RECOMPUTE_MLA_UP && sc->model.mla.kv_lora_rank <= 0)
            continue;
        PpsimPlanUnit layer, head, tail;
        double copy = 0;
        if (!costs_probe(sc, all[i], pb->head_layers, &layer, &head, &tail, &copy, &pb->comm_ms,
                         error))
            return FALSE;
        /* a V-shape's device holds the last stage's copy of the embedding (the tied head, the
         * MTP depths' copy) with the first stage's, once (PpsimStageCost.copy_*_mem) */
        if (pb->stage_device[0] == pb->stage_device[pb->n_stages - 1])
            tail.static_mem -= copy;
        gboolean dup = FALSE;
        for (int k = 0; k < pb->n_modes; k++)
            dup |= unit_equal(&pb->layer[k], &layer);
        if (dup)
            continue;
        if (pb->n_modes == 0)
            pb->tail = tail;
        pb->head_mode[pb->n_modes] = head;
        pb->mode[pb->n_modes] = all[i];
        pb->layer[pb->n_modes++] = layer;
    }
    return TRUE;
}

/* Preparation (warm-up/cool-down) weights per family, from the published bubbles with
 * uniform stages: 1F1B and GPipe (p-1)(F+B+W) ([NAR21] §2.2.1), interleaved (p-1)(F+B+W)/v
 * per chunk ([NAR21] §2.2.2), ZB-H1 (p-1)(F+B-W) ([ZB] Table 2), ZB-V (p-1)(F+B-2W) over
 * 2(p-1) chunks ([ZB] §6). Other families: the 1F1B form per chunk, an approximation. */
static void
costs_family(PpsimPlanProblem *pb)
{
    double inv_v = 1.0 / pb->v;
    pb->prep_f = pb->prep_b = pb->prep_w = inv_v;
    pb->pace_prep = (pb->p - 1) * inv_v; /* interleaved: (p-1) chunk times, [NAR21] §2.2.2 */
    /* rounds paced by each chunk's slowest stage where a device's chunks may differ: with
     * tied chunks (equal on each device) the device loads pace the rounds already, and
     * the chunk term only overstated them (every interleaved plan on results/plan.md is
     * the same or faster without it, its predictions within -2.7% to +3.6% instead of
     * down to -17%); untied, it keeps the ILP from plans whose unequal chunks replay worse
     * (Llama 3 8B, v = 3, 46 GiB: 9% slower without it, its chunks balanced) */
    pb->paced = pb->v > 1 && !pb->tie_chunks;
    if (strcmp(pb->schedule, "zb-h1") == 0) {
        pb->prep_w = -1.0;
    } else if (strcmp(pb->schedule, "zb-v") == 0) {
        pb->prep_f = pb->prep_b = 0.5;
        pb->prep_w = -1.0;
        /* no rounds: a device's stage of chunk 0 and its mirror in chunk 1 are paced by the
         * device's load (C3), not by the slowest stage of each chunk; the chunk bound
         * predicted a plan that moves layers off the device holding both the embedding and
         * a heavy head 27% slower than its replay */
        pb->paced = FALSE;
    }
}

static void
point_free(gpointer data)
{
    PpsimPlanPoint *pt = data;
    g_free(pt->n_full);
    g_free(pt->n_w);
    g_free(pt);
}

/* TRUE when @a needs no more memory than @b whatever the stage costs. */
static gboolean
point_dominated(const PpsimPlanPoint *a, const PpsimPlanPoint *b, int S)
{
    if (a->device != b->device)
        return FALSE;
    for (int s = 0; s < S; s++)
        if (a->n_full[s] > b->n_full[s] || a->n_full[s] + a->n_w[s] > b->n_full[s] + b->n_w[s])
            return FALSE;
    return TRUE;
}

/* Adds the state after an F starts unless an existing point already covers it; TRUE when
 * added. */
static gboolean
points_add(PpsimPlanProblem *pb, int d, const int *full, const int *w)
{
    int S = pb->n_stages;
    PpsimPlanPoint probe = {d, (int *)full, (int *)w};
    for (guint i = 0; i < pb->points->len; i++)
        if (point_dominated(&probe, g_ptr_array_index(pb->points, i), S))
            return FALSE;
    for (guint i = pb->points->len; i-- > 0;)
        if (point_dominated(g_ptr_array_index(pb->points, i), &probe, S))
            g_ptr_array_remove_index(pb->points, i);
    PpsimPlanPoint *pt = g_new(PpsimPlanPoint, 1);
    pt->device = d;
    pt->n_full = g_memdup2(full, sizeof(int) * S);
    pt->n_w = g_memdup2(w, sizeof(int) * S);
    g_ptr_array_add(pb->points, pt);
    return TRUE;
}

/* Walks each device's compute list counting, per stage, microbatches whose activation is
 * resident (F started, B not ended) or held for W (B ended, W not ended), and records the
 * counts at every F start: where the replay's memory can peak (src/README.md "Semantics": F
 * allocates at its start, B and W free at their end). Assumes W-holding bytes do not exceed
 * full ones, as the cost model guarantees (act_w <= act). */
static gboolean
costs_points(PpsimPlanProblem *pb, const PpsimSchedule *sched)
{
    gboolean added = FALSE;
    int S = pb->n_stages;
    g_autofree int *full = g_new0(int, S);
    g_autofree int *w = g_new0(int, S);
    for (int d = 0; d < sched->n_devices; d++) {
        memset(full, 0, sizeof(int) * S);
        memset(w, 0, sizeof(int) * S);
        const GArray *ops = sched->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            switch ((PpsimOpKind)op->kind) {
            case PPSIM_OP_F:
                full[op->stage]++;
                added |= points_add(pb, d, full, w);
                break;
            case PPSIM_OP_B:
                full[op->stage]--;
                w[op->stage]++;
                break;
            case PPSIM_OP_W:
                w[op->stage]--;
                break;
            case PPSIM_OP_BW:
                full[op->stage]--;
                break;
            default:
                break;
            }
        }
    }
    return added;
}

static const PpsimScheduleSpec *
costs_spec_of(const PpsimScenario *sc, const char *schedule)
{
    for (guint i = 0; sc->schedules && i < sc->schedules->len; i++) {
        const PpsimScheduleSpec *cand = g_ptr_array_index(sc->schedules, i);
        if (strcmp(cand->name, schedule) == 0)
            return cand;
    }
    return NULL;
}

gboolean
ppsim_plan_has_free_cap(const PpsimScenario *sc, const char *schedule)
{
    if (strcmp(schedule, "zb-v") != 0)
        return FALSE;
    const PpsimScheduleSpec *spec = costs_spec_of(sc, schedule);
    for (guint i = 0; spec && i < spec->options->len; i++)
        if (strcmp(g_array_index(spec->options, PpsimOptionValue, i).key, "memory_limit") == 0)
            return FALSE;
    return TRUE;
}

char *
ppsim_plan_schedule_text(const PpsimScenario *sc, const char *schedule, gboolean pin_cap)
{
    const PpsimScheduleSpec *spec = costs_spec_of(sc, schedule);
    g_autoptr(GString) text = g_string_new(NULL);
    gboolean has_cap = FALSE;
    for (guint i = 0; spec && i < spec->options->len; i++) {
        const PpsimOptionValue *o = &g_array_index(spec->options, PpsimOptionValue, i);
        g_string_append_printf(text, ", %s: %s", o->key, o->value);
        has_cap |= strcmp(o->key, "memory_limit") == 0;
    }
    /* ZB-V sizes its cap from memory.limit and the stage costs unless told: pin [ZB] §6's
     * default p, so the op order the plan assumes is the one the replay runs */
    if (pin_cap && strcmp(schedule, "zb-v") == 0 && !has_cap)
        g_string_append_printf(text, ", memory_limit: %d", sc->training.pp);
    if (text->len == 0)
        return g_strdup(schedule);
    return g_strdup_printf("{name: %s%s}", schedule, text->str);
}

PpsimScheduleSpec *
ppsim_plan_schedule_spec(const PpsimScenario *sc, const char *schedule, gboolean pin_cap,
                         GError **error)
{
    g_autofree char *text = ppsim_plan_schedule_text(sc, schedule, pin_cap);
    g_autoptr(GPtrArray) specs = ppsim_schedule_specs_parse(text, "plan", sc->basedir, error);
    if (specs == NULL)
        return NULL;
    return g_ptr_array_steal_index(specs, 0);
}

/* The family's schedule on an even split (its op order is what matters). */
static PpsimSchedule *
costs_structure(const PpsimScenario *sc, const char *schedule, GError **error)
{
    const PpsimScheduleClass *klass = ppsim_sched_registry_find(schedule, error);
    if (klass == NULL)
        return NULL;
    int S = sc->training.pp * (klass->chunks > 0 ? klass->chunks : sc->training.chunks);
    int L = sc->model.layers;
    if (L < S) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%d layers cannot fill the %d stages of schedule '%s'", L, S, schedule);
        return NULL;
    }
    g_autoptr(GArray) split = g_array_new(FALSE, FALSE, sizeof(int));
    for (int s = 0; s < S; s++) {
        int n = (int)(((gint64)(s + 1) * L) / S - ((gint64)s * L) / S);
        g_array_append_val(split, n);
    }
    PpsimScenario even = *sc;
    even.model.stage_layers = split;
    even.model.stage_recompute = NULL;
    even.model.stage_recompute_layers = NULL;
    /* the family's own op order: generators with a memory cap would otherwise size it
     * from memory.limit for this even split, which the plan is about to change */
    even.memory_limit_set = FALSE;
    g_autoptr(PpsimScheduleSpec) spec = ppsim_plan_schedule_spec(sc, schedule, TRUE, error);
    if (spec == NULL)
        return NULL;
    return ppsim_sim_build_schedule(&even, spec, NULL, error);
}

PpsimPlanProblem *
ppsim_plan_problem_new(const PpsimScenario *sc, const char *schedule, GError **error)
{
    if (sc->costs.present || !sc->has_model) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: the planner needs a model (hardware mode), not explicit costs",
                    sc->path ? sc->path : "");
        return NULL;
    }
    if (g_strcmp0(schedule, "custom") == 0) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "the planner needs a schedule generator, not a custom schedule file");
        return NULL;
    }
    g_autoptr(PpsimPlanProblem) pb = g_new0(PpsimPlanProblem, 1);
    pb->schedule = g_strdup(schedule);
    pb->points = g_ptr_array_new_with_free_func(point_free);
    g_autoptr(PpsimSchedule) sched = costs_structure(sc, schedule, error);
    if (sched == NULL)
        return NULL;
    pb->p = sched->n_devices;
    pb->n_stages = sched->n_stages;
    pb->v = pb->n_stages / pb->p;
    pb->m = sched->n_microbatches;
    pb->layers = sc->model.layers;
    pb->stage_device = g_memdup2(sched->stage_device, sizeof(int) * pb->n_stages);
    pb->gpu_limit = (double)sc->memory_limit_bytes;
    pb->mem_fixed = (double)ppsim_mem_fixed_bytes(sc);
    pb->mem_fragmentation = sc->costs.present ? 0.0 : sc->memory_fragmentation;
    pb->limit = (double)ppsim_mem_allocatable((gint64)sc->memory_limit_bytes, (gint64)pb->mem_fixed,
                                              pb->mem_fragmentation);
    if (pb->limit == 0 && sc->memory_limit_bytes == 0 && !sc->memory_limit_set)
        pb->limit = pb->gpu_limit = 1; /* a GPU of 0 bytes holds nothing (as in the cost model) */
    if (!costs_modes(pb, sc, error))
        return NULL;
    pb->tie_chunks = pb->v > 1 && pb->layers % pb->v == 0;
    costs_family(pb);
    costs_points(pb, sched);
    return g_steal_pointer(&pb);
}

gboolean
ppsim_plan_problem_refresh(PpsimPlanProblem *pb, const PpsimScenario *sc,
                           const PpsimPlanAssignment *a, gboolean *changed, GError **error)
{
    g_autoptr(PpsimScheduleSpec) spec = ppsim_plan_schedule_spec(sc, pb->schedule, TRUE, error);
    if (spec == NULL)
        return FALSE;
    PpsimScenario *planned = ppsim_plan_scenario(sc, pb, a);
    planned->memory_limit_set = FALSE;
    g_autoptr(PpsimSchedule) sched = ppsim_sim_build_schedule(planned, spec, NULL, error);
    ppsim_plan_scenario_free(planned);
    if (sched == NULL)
        return FALSE;
    *changed = costs_points(pb, sched);
    return TRUE;
}

void
ppsim_plan_problem_free(PpsimPlanProblem *pb)
{
    if (pb == NULL)
        return;
    g_free(pb->schedule);
    g_free(pb->stage_device);
    if (pb->points)
        g_ptr_array_unref(pb->points);
    g_free(pb);
}
