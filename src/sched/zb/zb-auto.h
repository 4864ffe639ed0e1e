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
} PpsimZbAutoInfo;

typedef enum {
    PPSIM_ZB_AUTO_DEFAULT = 0,
    PPSIM_ZB_AUTO_GREEDY_ONLY = 1 << 0, /* leave the handcrafted orders out (for measuring) */
    PPSIM_ZB_AUTO_NO_REFINE = 1 << 1,   /* skip the local search on the winner */
} PpsimZbAutoFlags;

/* A schedule of p stages on p devices and @m microbatches with B/W split whose activation
 * memory on device d never exceeds @limit[d] memory units (a limit <= 0: none), by the
 * estimates in @costs (act allocated at F's start, act - act_w freed at B's end, act_w at W's
 * end, as README "Semantics" says). The smallest span over the candidates wins, then the smallest
 * makespan, among those that end no later than the best handcrafted order (1F1B with split, ZB-H1,
 * ZB-H2) that fits; then a budgeted local search moves single ops. Deterministic. Errors:
 * PPSIM_SCHED_ERROR_UNSUPPORTED when some limit[d] is below that stage's act.
 * @info: (nullable) receives what won. Returns: (transfer full) (nullable). */
PpsimSchedule *ppsim_zb_auto(int p, int m, const PpsimCostEstimates *costs, const gint64 *limit,
                             PpsimZbAutoFlags flags, PpsimZbAutoInfo *info, GError **error);

/* ASAP timing of a one-stage-per-device schedule on @costs, as the explicit-mode replay runs
 * it (a cross-device dependency costs comm_ps); checks the activation of device d against
 * @limit[d] (nullable: none). Returns FALSE on a deadlock or when the limit is exceeded. */
gboolean ppsim_zb_auto_evaluate(const PpsimSchedule *sched, const PpsimCostEstimates *costs,
                                const gint64 *limit, PpsimTime *makespan, PpsimTime *span,
                                gint64 *peak);
