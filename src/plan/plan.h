/* plan.h: the holistic planner ([HP]): which transformer layers each pipeline stage holds
 * and how each stage recomputes, chosen together to minimise the recompute, imbalance and
 * warm-up/cool-down bubbles (B_R + B_I + B_P) under the device memory limit.
 *
 * Phase 1 (plan-costs.c) prices one layer per recompute mode, the embedding (H) and the
 * head (T) with the cost model, and reads the schedule family's structure (stage -> device
 * map, the microbatches in flight at each allocation) from its generator. Phase 2-3
 * (plan-ilp.c) solves an integer program on CBC; without CBC a local search (plan-model.c)
 * stands in, labelled as such. Phase 4 (plan.c) writes the assignment as scenario keys
 * (`model.stage_layers`, `model.stage_recompute`). The planner calls generators and the
 * replay; they never call it.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

#define PPSIM_PLAN_MAX_MODES 5

/* Costs of one unit (a transformer layer in one recompute mode, or the embedding / head
 * extras) for one microbatch, as the cost model prices it on this scenario's hardware and
 * 3D layout. Memory in bytes. */
typedef struct {
    double f_ms, b_ms, w_ms; /* forward, backward-input (with any re-run forward), weight */
    double r_ms;             /* of b_ms, the forward re-run (recompute) */
    double act, act_w;       /* activation allocated by F; of it, what W still needs */
    double static_mem;       /* weights + gradients + optimizer states */
    double opt_ms;           /* the optimizer step after the iteration (kernel model) */
} PpsimPlanUnit;

/* One memory check point: the microbatches a device holds, per stage, when an F starts
 * (full activations: F done, B not yet; W-only: B done, W not yet). */
typedef struct {
    int device;
    int *n_full; /* [n_stages] */
    int *n_w;    /* [n_stages] */
} PpsimPlanPoint;

/* The problem: phase 1's output. */
typedef struct {
    char *schedule; /* family (generator name) */
    int p, v, n_stages, m, layers;
    int *stage_device; /* [n_stages] */
    int n_modes;
    PpsimRecompute mode[PPSIM_PLAN_MAX_MODES];
    PpsimPlanUnit layer[PPSIM_PLAN_MAX_MODES];
    /* H on the first stage: head_mode[0]. A mixture of experts' leading dense layers (as
     * many as an even split gives the first stage) are priced in H, in the first stage's
     * mode: head_mode[k] for a first stage with at least head_layers layers in mode k
     * (those first, as {mode: k} takes them). The first stage holds at least head_layers
     * layers. */
    int head_layers;
    PpsimPlanUnit head_mode[PPSIM_PLAN_MAX_MODES];
    PpsimPlanUnit tail; /* T on the last stage (no recompute mode) */
    double comm_ms;     /* one cross-device hop */
    /* warm-up/cool-down weights of the family: device d's preparation bubble is
     * sum over stages not on d of (prep_f F + prep_b B + prep_w W) */
    double prep_f, prep_b, prep_w;
    /* interleaved with untied chunks (not ZB-V, whose V runs no rounds, nor tied chunks,
     * whose device loads pace the rounds; plan-costs.c costs_family): chunk c's stages
     * (s in [c p, (c+1) p)) run in rounds paced by the slowest, so also
     * makespan >= (m + pace_prep) sum_c max_{s in c} (F+B+W)_s + hops */
    gboolean paced;
    double pace_prep;
    /* v > 1: the stages of one device hold equal layer counts in one mode (its chunks are
     * tied): interleaved schedules run well only with chunks of equal cost per device, and
     * the linear model does not capture what unequal chunks cost them. Untied (L not a
     * multiple of v), each stage holds within a layer of its device's first stage. */
    gboolean tie_chunks;
    double limit;             /* bytes per device the allocator may hold (memory.limit less what
                               * the model knows is taken, cost/memory.h); 0 = none */
    double gpu_limit;         /* memory.limit itself, bytes; 0 = none */
    double mem_fixed;         /* memory.reserved + NCCL's buffers, bytes */
    double mem_fragmentation; /* memory.fragmentation */
    GPtrArray *points;        /* PpsimPlanPoint*, deduplicated and undominated */
} PpsimPlanProblem;

/* An assignment and what the model predicts for it. */
typedef struct {
    int n_stages;
    int *layers; /* [n_stages] transformer layers */
    int *mode;   /* [n_stages] index into problem->mode */
    int *mixed;  /* [n_stages] layers of the stage in mode[s], the rest in mode 0 (none);
                  * -1: all of them (a whole-stage mode) */
    double makespan_ms;
    double peak_memory;    /* max over devices, bytes of GPU memory (cost/memory.h) */
    double b_recompute_ms; /* device-time sums: B_R, B_I, B_P */
    double b_imbalance_ms;
    double b_preparation_ms;
    gboolean fits;
} PpsimPlanAssignment;

typedef struct {
    const char *schedule; /* nullable: the scenario's first schedule */
    gboolean heuristic;   /* skip the ILP even with CBC */
    double time_limit_s;  /* <= 0: 60 */
} PpsimPlanOptions;

typedef struct {
    PpsimPlanProblem *problem;
    PpsimPlanAssignment *best;
    char method[16]; /* "ilp" or "heuristic" */
    char status[32]; /* solver status, or "local-search" */
    int rounds;      /* solves: 1, more when the plan's own op order added check points */
    double seconds;  /* solver wall time (never in text output) */
    double gap;
    /* which candidate `best` is once replayed (ppsim_plan_choose): "ilp" or "heuristic"
     * (the optimiser's), or a baseline that replayed faster: "even-full", "greedy",
     * "unplanned" (the scenario's own split and recompute) */
    char source[16];
    gboolean free_cap; /* zb-v: the generator's cap from memory.limit, not p (pinned) */
} PpsimPlan;

/* One replayed candidate (ppsim_plan_choose): the optimiser's plan or a baseline. */
typedef struct {
    char name[32];          /* "ilp", "even-full", "greedy", "unplanned"; "+cap": zb-v with
                             * the generator's cap from memory.limit */
    PpsimPlanAssignment *a; /* owned */
    gboolean free_cap;
    PpsimRunResult *res; /* owned; NULL when its generator refused it */
} PpsimPlanCandidate;

/* Replays the optimiser's plan and the baselines (Megatron's even split with full
 * recompute, the greedy modes on it, the scenario's own split and recompute, and for zb-v
 * each of them with the generator's cap sized from memory.limit as well as pinned at p)
 * and makes @plan's best the fastest that fits the limit in the replay (the optimiser's on
 * ties): the planner never returns a plan slower than a candidate it evaluated. Returns the
 * candidates in that order (the optimiser's first), or NULL with @error when the
 * optimiser's own plan cannot be replayed. */
GPtrArray *ppsim_plan_choose(PpsimPlan *plan, const PpsimScenario *sc, GError **error);
/* Of @cands (ppsim_plan_choose's), the one @plan's best is: its replay is the plan's.
 * Returns: (transfer none) (nullable). */
const PpsimPlanCandidate *ppsim_plan_chosen(const PpsimPlan *plan, const GPtrArray *cands);

/* ---- phase 1 (plan-costs.c) ---- */

/* Prices the units and reads the structure of @schedule on @sc (hardware mode only).
 * Returns: (transfer full) (nullable). */
PpsimPlanProblem *ppsim_plan_problem_new(const PpsimScenario *sc, const char *schedule,
                                         GError **error);
void ppsim_plan_problem_free(PpsimPlanProblem *pb);
/* Some generators (zb-v, the memory-capped ones) order ops by the stage costs, so the
 * plan's own split can hold more microbatches where the even split held fewer: adds the
 * check points of @a's schedule to @pb; *@changed tells whether any was new (then solve
 * again: the constraints only grow, so this converges). */
gboolean ppsim_plan_problem_refresh(PpsimPlanProblem *pb, const PpsimScenario *sc,
                                    const PpsimPlanAssignment *a, gboolean *changed,
                                    GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimPlanProblem, ppsim_plan_problem_free)

/* The schedule as the plan runs it, in the scenario's `schedule` syntax: the family with
 * the scenario's options for it, and for zb-v, when @pin_cap, its default cap pinned
 * (memory_limit: p) so that the replay keeps the op order the ILP assumed; without it the
 * generator sizes its cap from memory.limit (a candidate the planner also replays).
 * Returns: (transfer full). */
char *ppsim_plan_schedule_text(const PpsimScenario *sc, const char *schedule, gboolean pin_cap);
/* The same, parsed. Returns: (transfer full) (nullable). */
PpsimScheduleSpec *ppsim_plan_schedule_spec(const PpsimScenario *sc, const char *schedule,
                                            gboolean pin_cap, GError **error);
/* Whether @schedule has a cap the plan pins (zb-v without the scenario's memory_limit). */
gboolean ppsim_plan_has_free_cap(const PpsimScenario *sc, const char *schedule);

/* ---- the linear model (plan-model.c) ---- */

PpsimPlanAssignment *ppsim_plan_assignment_new(int n_stages);
PpsimPlanAssignment *ppsim_plan_assignment_copy(const PpsimPlanAssignment *a);
void ppsim_plan_assignment_free(PpsimPlanAssignment *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimPlanAssignment, ppsim_plan_assignment_free)

/* Layers of stage @s in @a's mode[s] (the rest are in mode 0). */
int ppsim_plan_in_mode(const PpsimPlanAssignment *a, int s);
/* The first stage on stage @s's device (its chunk 0 stage). */
int ppsim_plan_first_stage(const PpsimPlanProblem *pb, int s);
/* Fills @a's prediction (makespan, peak memory, bubbles, fits) from its layers and modes:
 * makespan = max over devices d of m D_d + sum_{s not on d} P_s + 2(p-1) hop (and the chunk
 * pacing when paced), D_d the device's F+B+W per microbatch and P_s the family's
 * preparation weight of stage s, plus the longest device's optimizer step. */
void ppsim_plan_evaluate(const PpsimPlanProblem *pb, PpsimPlanAssignment *a);
/* Megatron's even split with every stage in mode @mode. */
PpsimPlanAssignment *ppsim_plan_even(const PpsimPlanProblem *pb, int mode);
/* For @a's split, the fastest whole-stage modes that fit, device by device (its stages'
 * mode combinations tried exhaustively); the least memory where none fits. */
void ppsim_plan_greedy_modes(const PpsimPlanProblem *pb, PpsimPlanAssignment *a);
/* Local search from the even split: move one layer between two stages, re-choose the modes
 * greedily, keep the best improving move, until none improves. */
PpsimPlanAssignment *ppsim_plan_local_search(const PpsimPlanProblem *pb);
/* Every split and mode choice, mixes within a stage included (tests; small instances
 * only). */
PpsimPlanAssignment *ppsim_plan_brute_force(const PpsimPlanProblem *pb);

/* ---- phases 2-3 (plan-ilp.c) ---- */

/* Solves the ILP. @min_memory: minimise the peak memory instead, with no limit (the
 * smallest limit that fits). Returns: (transfer full) (nullable) NULL with @error on no
 * solver; NULL without error when infeasible. */
PpsimPlanAssignment *ppsim_plan_ilp(const PpsimPlanProblem *pb, gboolean min_memory,
                                    double time_limit_s, PpsimPlan *report, GError **error);

/* ---- the planner (plan.c) ---- */

/* Plans @sc for the family in @opts. Errors: PPSIM_SCENARIO_ERROR_VALUE (explicit-cost
 * mode, unknown family shape), PPSIM_SIM_ERROR_LIMIT when no plan fits the memory limit,
 * naming the smallest limit that would. Returns: (transfer full) (nullable). */
PpsimPlan *ppsim_plan_new(const PpsimScenario *sc, const PpsimPlanOptions *opts, GError **error);
void ppsim_plan_free(PpsimPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimPlan, ppsim_plan_free)

/* A copy of @sc's model section that holds @a (stage_layers and stage_recompute set) for
 * replays: a shallow scenario whose two lists are owned by it; free with
 * ppsim_plan_scenario_free. Returns: (transfer full). */
PpsimScenario *ppsim_plan_scenario(const PpsimScenario *sc, const PpsimPlanProblem *pb,
                                   const PpsimPlanAssignment *a);
void ppsim_plan_scenario_free(PpsimScenario *planned);

/* Appends the YAML fragment `model: {stage_layers, stage_recompute}` + `schedule:` that
 * `ppsim run SCENARIO --with FILE` applies, with comment lines on the prediction. */
void ppsim_plan_write_fragment(GString *out, const PpsimScenario *sc, const PpsimPlan *plan);

G_END_DECLS
