/* v-run.h: one candidate schedule of v-sched.c (internal; see v-run.c). */
#pragma once

#include "sched/generator.h"

enum { VS_FREE, VS_TEMPLATE, VS_STRICT, VS_SLOT };

/* How a candidate picks: mode, reserve (free mode), and which ready B goes first (free
 * mode): the earliest arrival, the second chunk's, the first chunk's, or (B-F alternation
 * only) "balance", see vs_alt_choose. */
enum { VS_B_EARLIEST, VS_B_LATER, VS_B_EARLIER, VS_B_BALANCE };
typedef struct {
    int mode;
    gboolean reserve;
    int bpref;
    int cycle;          /* free mode: 0 by priority, 1 F-B-W turns, 2 to 5 B-F alternation */
    int warm_a, warm_b; /* free mode, until the device's first second-chunk F: a first-chunk
                         * F on device d leaves room for warm_a d + warm_b second-chunk Fs */
} VsPolicy;

/* Reusable state of the candidate simulations of one instance (p devices, m microbatches):
 * arrays and an output schedule, so a search allocates once. */
typedef struct PpsimVWork PpsimVWork;

PpsimVWork *ppsim_vwork_new(int p, int m);
void ppsim_vwork_free(PpsimVWork *w);
/* The work of every ppsim_vrun on @w so far (finished or cut candidates alike), in
 * simulated ops: each op placed counts 1, each time a device finds nothing to run and waits
 * 1/2 (about what it costs; in hardware mode a device waits many times per op). */
gint64 ppsim_vwork_spent(const PpsimVWork *w);
/* Times a device had nothing to run (and waited), over every ppsim_vrun on @w so far. */
gint64 ppsim_vwork_waits(const PpsimVWork *w);
/* Gives a schedule made by ppsim_vrun on @w back for reuse (frees it if @w has one). */
void ppsim_vwork_recycle(PpsimVWork *w, PpsimSchedule *sched);

/* Simulates policy @pol (with template @tpl for the template, strict and slot modes) on the
 * estimates @c under the per-device caps @limit: a fresh schedule in *@out, each device's
 * peak in @peak[p], the makespan and the idle time inside the devices' spans; FALSE when it
 * cannot finish (the cap admits no progress), its makespan would exceed @bound (> 0; the
 * best so far, so the search stays fast) or, in strict mode, its peak exceeds the cap. */
gboolean ppsim_vrun(PpsimVWork *w, VsPolicy pol, const PpsimCostEstimates *c, const gint64 *limit,
                    const PpsimSchedule *tpl, PpsimTime bound, PpsimSchedule **out, gint64 *peak,
                    PpsimTime *makespan, PpsimTime *idle);
