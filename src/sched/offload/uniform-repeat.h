/* uniform-repeat.h: schedules made by repeating one microbatch's building block at a fixed
 * interval ([PO] §2 "uniform repeating strategy", after [CM] §2.2) (internal). */
#pragma once

#include "sched/generator.h"

G_BEGIN_DECLS

/* Fills the compute lists of @sched, whose stage map is already set (any map where
 * consecutive stages sit on different devices), with @m microbatches of B/W-split passes:
 * microbatch j follows the same building block as microbatch 0, shifted by j T.
 *
 * The block is built greedily in dependency order (the F chain 0..S-1, then B from S-1 down
 * to 0, each W right after its B when its device is free then): every pass starts at the
 * earliest time its input allows (+ comm_ps across devices) at which it collides, modulo T,
 * with no pass of the same device already placed; that is what lets every microbatch repeat
 * the block without two passes of one device overlapping ([PO] §3.2 "with minor
 * modifications to prevent collisions"). T starts at the busiest device's F+B+W work per
 * microbatch and grows by 1/64 steps only when heterogeneous costs leave no gap wide enough.
 * Each device's list is its passes sorted by nominal time; the replay then starts each one
 * as soon as its inputs allow, which only squeezes the nominal timeline ([PO] §4.2). */
gboolean ppsim_uniform_repeat_fill(PpsimSchedule *sched, const PpsimCostEstimates *costs,
                                   GError **error);

G_END_DECLS
