/* v-sched.h: V-shape schedules with B/W split under a per-device memory cap: ZB-V ([ZB] §6)
 * and the controllable-memory building blocks V-Half / V-Min ([CM] §3, Table 1). Internal;
 * see v-sched.c. */
#pragma once

#include "sched/generator.h"

typedef enum {
    PPSIM_VSHAPE_ZB,   /* ZB-V: 2p-1 warm-up forwards, then 1F-1B-1W ([ZB] §6) */
    PPSIM_VSHAPE_HALF, /* V-Half building block, offsets (2, 1) ([CM] Table 1) */
    PPSIM_VSHAPE_MIN,  /* V-Min building block, offsets (1, 1) ([CM] Table 1) */
} PpsimVShapeKind;

/* How the search went (ppsim_vshape_schedule). */
typedef struct {
    gboolean cut;       /* the budget stopped it before the end */
    int n_run, n_total; /* candidates of the first pass simulated, and how many there are */
    gint64 spent;       /* ops simulated */
    PpsimTime makespan; /* the winner's, on the estimates */
} PpsimVShapeInfo;

/* Fills @sched (empty op lists, V-shape stage map: S = 2p) with F, B and W ops for @m
 * microbatches, never letting device d's activations (F allocates act, B frees act - act_w,
 * W the rest) exceed @limit[d] memory units. Several candidate orders are built on the cost
 * estimates and the one with the smallest estimated makespan (then the lowest peak) wins.
 * The candidates run most promising first; once they have simulated @budget ops (0: no
 * limit) no further one starts. With a budget that is not reached the result is the full
 * search's. @info: (nullable) how the search went. Errors: PPSIM_SCHED_ERROR_UNSUPPORTED when
 * no candidate fits under the cap. */
gboolean ppsim_vshape_schedule(PpsimSchedule *sched, int m, PpsimVShapeKind kind,
                               const PpsimCostEstimates *costs, const gint64 *limit, gint64 budget,
                               PpsimVShapeInfo *info, GError **error);

/* The building block's slot offsets of one microbatch on device @d (0-indexed) in units of one
 * pass, period 6: [0] F of stage d, [1] F of stage 2p-1-d, [2] B of stage 2p-1-d, [3] B of
 * stage d; microbatch j adds 6j. Only for PPSIM_VSHAPE_HALF and PPSIM_VSHAPE_MIN. */
void ppsim_vshape_block_offsets(PpsimVShapeKind kind, int p, int d, int out[4]);

/* Appends to @out (of PpsimSchedule *) unit-time plans of @kind's building block for @m
 * microbatches (v-block.c), group @group (0..3) of the ten: two W placements under the real
 * memory model (groups 0 and 1: the block itself and its two compactions under @limit, 3
 * plans each), then under one where W holds everything until it ends (groups 2 and 3: the
 * two compactions, 2 plans each). Not for PPSIM_VSHAPE_ZB. */
void ppsim_vshape_block_templates(PpsimVShapeKind kind, int p, int m,
                                  const PpsimCostEstimates *costs, const gint64 *limit, int group,
                                  GPtrArray *out);

/* The generators' shared body: cap @cap_mb in M_B (one microbatch of the device's two
 * stages), or the default of @kind when @cap_mb <= 0; @what prefixes errors. Without the
 * option, the scenario's memory.limit (each device's budget) is the cap when it is set. */
gboolean ppsim_vshape_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                               PpsimVShapeKind kind, double default_cap_mb, const char *what,
                               PpsimSchedule **out, GError **error);
