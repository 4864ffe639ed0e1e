/* cost-estimates.h: what generators may know of costs: estimates, never the hardware.
 * Filled by the cost model (cost-model.c), read by the generators that need costs (ZB
 * automatic, V-Min, offload placement). Plain data.
 */
#pragma once

#include <glib.h>
#include "util/units.h"

G_BEGIN_DECLS

/* Per-stage cost estimates handed to generators that need them (ZB automatic, V-Min,
 * offload placement). Times in picoseconds, memory in the run's memory units (bytes, or
 * explicit units scaled by 1000). Read-only. */
typedef struct {
    PpsimTime f_ps, b_ps, w_ps, r_ps;
    PpsimTime off_ps;  /* one-way offload estimate */
    PpsimTime fo_ps;   /* the F half of an F&B pair (schedule.h PPSIM_OP_FLAG_OVERLAP) */
    PpsimTime bwo_ps;  /* its BW half: fo_ps + bwo_ps is the stage's F&B time (overlap.c) */
    gint64 act;        /* allocated by F */
    gint64 act_w;      /* held from B's end until W's end */
    gint64 static_mem; /* weights, gradients, optimizer states (0 in explicit mode) */
} PpsimStageEstimate;

typedef struct {
    int n_stages;
    const PpsimStageEstimate *stage; /* [n_stages] */
    PpsimTime comm_ps;               /* cross-device dependency latency estimate */
    gint64 memory_limit;             /* per device, memory units; 0 = none. Hardware mode:
                                      * what the allocator may hold, memory.limit less what
                                      * the model knows is taken (cost/memory.h) */
    gint64 memory_limit_gpu;         /* memory.limit as written (0 = none), for messages */
    gint64 memory_fixed;             /* hardware mode: memory.reserved + NCCL's buffers */
    double memory_fragmentation;     /* hardware mode: memory.fragmentation */
    double mem_scale;                /* memory units per reported unit: 1000 per explicit
                                      * unit, 1 per byte */
    gboolean memory_limit_set;       /* the scenario wrote memory.limit: generators with a
                                      * memory cap default to it (hardware mode otherwise
                                      * has the GPU's memory, which caps nothing by default) */
    int n_devices;                   /* length of host_link */
    const int *host_link;            /* [n_devices] id of the host link (PCIe switch) each
                                      * device's copies cross: equal ids share it. NULL in
                                      * explicit mode (no links) */
    gboolean host_link_contended;    /* the GPUs behind one switch can together ask more of
                                      * its uplink than it delivers */
} PpsimCostEstimates;

/* The GPU memory a device needs when the allocator holds @allocated (cost/memory.h's
 * ppsim_mem_total; in explicit mode @allocated itself). */
static inline gint64
ppsim_estimates_gpu_memory(const PpsimCostEstimates *est, gint64 allocated)
{
    double frag = est->memory_fragmentation * (double)allocated;
    return allocated + (gint64)(frag < 0 ? frag - 0.5 : frag + 0.5) + est->memory_fixed;
}

G_END_DECLS
