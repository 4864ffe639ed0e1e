/* stream-plan.h: a copy stream's nominal busy intervals, for PipeOffload's slot planner.
 *
 * A multiset of [start, end) intervals kept sorted by start (a new interval goes before the
 * ones with an equal start); intervals may overlap where a congested transfer queues. The
 * queries scan it exactly as a scan from either end of the whole list would, but start next
 * to the answer: O(log n) to find the start, then only the intervals near it.
 */
#pragma once
#include <glib.h>

#include "util/units.h"

G_BEGIN_DECLS

typedef struct PpsimStreamPlan PpsimStreamPlan;

PpsimStreamPlan *ppsim_stream_plan_new(void);
void ppsim_stream_plan_free(PpsimStreamPlan *pl);
/* Marks [@start, @end) busy. */
void ppsim_stream_plan_take(PpsimStreamPlan *pl, PpsimTime start, PpsimTime end);
/* Earliest start >= @t of a free slot of length @len; once the search passes @by it stops and
 * returns a start > @by that may not be free (the caller has no use for one that late;
 * G_MAXINT64: no such bound). */
PpsimTime ppsim_stream_plan_earliest(const PpsimStreamPlan *pl, PpsimTime t, PpsimTime len,
                                     PpsimTime by);
/* Latest start of a free slot of length @len ending by @end and starting at @lo or later;
 * -1 when there is none. Scanning from the latest start down, it stops at the first interval
 * that ends @len before the candidate end, as the planner always has (an earlier interval
 * that overlaps it is not looked at), or as soon as the candidate end falls below @lo + @len. */
PpsimTime ppsim_stream_plan_latest(const PpsimStreamPlan *pl, PpsimTime lo, PpsimTime end,
                                   PpsimTime len);

G_END_DECLS
