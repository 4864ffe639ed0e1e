/* dualpipe.h: the per-device step program shared by DualPipe and DualPipeV ([DUALPIPE]
 * dualpipe.py and dualpipev.py, [DSV3] §3.2.1), read to understand, not copied. */
#pragma once

#include "sched/generator.h"

G_BEGIN_DECLS

/* One device's view of the program: its two "phases" (chunks it runs), each a stage and the
 * first microbatch id of the microbatches that pass through it. */
typedef struct {
    int device;
    int half_rank;  /* h: the device's distance from the nearer end of its pipeline */
    int half_ranks; /* P: devices per pipeline half (p/2 for DualPipe, p for DualPipeV) */
    int chunks;     /* n: microbatches through each phase */
    int stage[2];   /* stage run by phase 0 and phase 1 */
    int mb_base[2]; /* microbatch id of the first microbatch of each phase */
} PpsimDualPipeDevice;

/* Appends device @dev's compute ops to @sched, in the 8 steps of [DUALPIPE]'s program:
 * (1) 2(P-h-1) F of phase 0; (2) h+1 pairs F0 F1; (3) P-h-1 of B1 W F1 (B split, its W
 * right after); (4) n-2P+h+1 rounds of F0&B1, F1&B0 as F&B pairs (a full backward each),
 * the first F0, B1 of the middle device not overlapped; (5) P-h-1 of B1, F1&B0; (6) h+1 of
 * B1 B0, the later half with B split from W; (7) P-h-1 of W B0 (split); (8) h+1 W. W ops
 * run in the order their B ran. Needs n >= 2P - h. */
void ppsim_dualpipe_device_program(PpsimSchedule *sched, const PpsimDualPipeDevice *dev);

G_END_DECLS
