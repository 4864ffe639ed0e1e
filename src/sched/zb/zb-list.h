/* zb-list.h: list scheduling with B/W split under a memory cap (internal; see zb-list.c). */
#pragma once

#include "sched/generator.h"

/* Fills @sched (empty op lists, stage map set, at most two stages per device) with F, B and
 * W ops for @m microbatches, never letting a device's activations exceed @limit[d] memory
 * units. Errors: PPSIM_SCHED_ERROR_UNSUPPORTED when the cap admits no progress. */
gboolean ppsim_zb_list_schedule(PpsimSchedule *sched, int m, const PpsimCostEstimates *costs,
                                const gint64 *limit, GError **error);
