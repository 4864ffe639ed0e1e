/* tpipe.h: TPipe's steady-state timetables ([TP] §4, App. A-C), shared by sched-tpipe.c.
 *
 * T-Pipe is periodic: in T_unit = T_fwd/(2p) (one chunk's forward on one device; a fused
 * backward lasts 2), every device repeats the same ops of one microbatch every period (6,
 * or 7 with T-Recomp's recompute of chunk 1). A timetable gives, per device, the start of
 * each op of microbatch 0 in that frame; microbatch j runs at + j * period. Sorting a
 * device's ops by these times gives its order. Pure: no costs, no hardware.
 */
#pragma once

#include <glib.h>
#include "schedule/schedule.h"

G_BEGIN_DECLS

#define PPSIM_TPIPE_MAX_SLOTS 5 /* F1, F2, B2, R1, B1 */

/* One op of microbatch 0 on one device: start time in T_unit, kind, global stage. */
typedef struct {
    int t;
    guint8 kind;
    int stage;
} PpsimTpipeSlot;

typedef struct {
    int p;
    int period;           /* T_unit between two microbatches on a device: 6, or 7 with T-Recomp */
    int n_slots;          /* per device: 4, or 5 with R */
    PpsimTpipeSlot *slot; /* [p * n_slots], device-major */
} PpsimTpipeTable;

/* T-Pipe ([TP] App. A): F1 at d, F2 at 6 kf + 3 + d, B2 at 6 kf + 3p + 1 - 2d, B1 at
 * 6 (kf + kb) + 3p + 4 - 2d with kf = ceil((p-3)/6), kb = ceil((2p-3)/6). */
PpsimTpipeTable *ppsim_tpipe_table_plain(int p);
/* T-Pipe + block-wise T-Recomp ([TP] §4.2, App. B-C): period 7, chunk 1 recomputed by an R
 * block placed in a free slot after the previous microbatch's B1 and before its own (one
 * recompute buffer). NULL with an error when no timetable exists for @p. */
PpsimTpipeTable *ppsim_tpipe_table_recomp(int p, GError **error);
/* T-Pipe + T-Recomp laid out as [TP] App. C's rounds (Fig. 6(d), `layout: paper`): every
 * device repeats the 7-slot round B2 B2 F R B1 B1 F, device d's round starting 2d T_unit
 * before device 0's, so both backwards run without a gap; see tpipe-table.c. Any p >= 1. */
PpsimTpipeTable *ppsim_tpipe_table_recomp_paper(int p);
void ppsim_tpipe_table_free(PpsimTpipeTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimTpipeTable, ppsim_tpipe_table_free)

/* Appends device @d's ops of microbatches 0..@m-1 to @sched in time order. */
void ppsim_tpipe_table_emit(const PpsimTpipeTable *table, int d, int m, PpsimSchedule *sched);

G_END_DECLS
