/* zb-auto.h: the automatic Zero Bubble search of [ZB] §3 for one stage per device (internal;
 * see zb-auto.c). */
#pragma once

#include "sched/generator.h"

/* What the search picked, on the cost estimates (explicit mode: what the replay gives). */
typedef struct {
    PpsimTime makespan; /* end of the last op */
    PpsimTime span;     /* longest device span: last end - first start ([ZB] §5.3's cost) */
    char label[64];     /* which candidate won, e.g. "greedy cap=16 flags=5" or "zb-h1" */
    int n_tried;        /* candidates built and evaluated */
    int n_run, n_total; /* candidates of the first pass made, and how many there are */
    gint64 spent;       /* ops built and timed (refinement included) */
    gboolean cut;       /* the budget stopped the search before its end */
} PpsimZbAutoInfo;

typedef enum {
    PPSIM_ZB_AUTO_DEFAULT = 0,
    PPSIM_ZB_AUTO_GREEDY_ONLY = 1 << 0, /* leave the handcrafted orders out (for measuring) */
    PPSIM_ZB_AUTO_NO_REFINE = 1 << 1,   /* skip the local search on the winner */
} PpsimZbAutoFlags;

/* A schedule of p stages on p devices and @m microbatches with B/W split whose activation
 * memory on device d never exceeds @limit[d] memory units (a limit <= 0: none), by the
 * estimates in @costs (act allocated at F's start, act - act_w freed at B's end, act_w at W's
 * end, as src/README.md "Semantics" says). The smallest span over the candidates wins, then the
 * smallest makespan, among those that end no later than the best handcrafted order (1F1B with
 * split, ZB-H1, ZB-H2) that fits; then a budgeted local search moves single ops. The candidates run
 * most promising first; once they have built and timed @budget ops (0: no limit) no further one
 * starts; with a budget that is not reached the result is the full search's. Deterministic.
 * Errors:
 * PPSIM_SCHED_ERROR_UNSUPPORTED when some limit[d] is below that stage's act.
 * @info: (nullable) receives what won. Returns: (transfer full) (nullable). */
PpsimSchedule *ppsim_zb_auto(int p, int m, const PpsimCostEstimates *costs, const gint64 *limit,
                             PpsimZbAutoFlags flags, gint64 budget, PpsimZbAutoInfo *info,
                             GError **error);

/* The default budget of zb (option `budget: auto`) for @p stages and @m microbatches. */
gint64 ppsim_zb_auto_budget(int p, int m);

/* Bounds that stop an evaluation early, and what it cost. */
typedef struct {
    PpsimTime span;     /* stop once the span must exceed it (0: never) */
    PpsimTime makespan; /* stop once the makespan must exceed it (0: never) */
    gint64 n_ops;       /* out: ops timed */
    gboolean stopped;   /* out: stopped by a bound */
} PpsimZbEvalBound;

/* ASAP timing of a one-stage-per-device schedule on @costs, as the explicit-mode replay runs
 * it (a cross-device dependency costs comm_ps); checks the activation of device d against
 * @limit[d] (nullable: none). Returns FALSE on a deadlock or when the limit is exceeded; and
 * stops (FALSE, @bound->stopped) as soon as a device's end plus the compute it has left
 * passes @bound's makespan, or that minus its first start passes @bound's span (0: never):
 * the result could then only be worse. @bound->n_ops counts the ops timed. */
gboolean ppsim_zb_auto_evaluate_bounded(const PpsimSchedule *sched, const PpsimCostEstimates *costs,
                                        const gint64 *limit, PpsimZbEvalBound *bound,
                                        PpsimTime *makespan, PpsimTime *span, gint64 *peak);
