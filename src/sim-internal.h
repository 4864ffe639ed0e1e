/* sim-internal.h: state shared by sim.c (building the replay) and sim-metrics.c (reading
 * it back into a PpsimRunResult). Not part of the library's interface. */
#pragma once

#include "sim.h"
#include "schedule/schedule-index.h"
#include "hw/exec.h"

typedef struct {
    const PpsimScenario *sc;
    const PpsimCosts *costs;
    const PpsimSchedule *sched;
    PpsimScheduleIndex *idx;
    PpsimTopology *topo; /* NULL in explicit mode */
    PpsimExec *exec;
    int *compute_stream, *d2h_stream, *h2d_stream, *cpu_stream_base;
    int n_cpu_workers;
    gint64 *static_saved;       /* [p] static memory a CPU optimizer step (T-Offload) frees */
    int *cpu_first, *cpu_count; /* [S] workers of a stage's CPU optimizer step */
} Replay;

/* Fills @res from a finished replay: timings, memory, ratios, bubble attribution and, with
 * PPSIM_SIM_RECORD, transfers, memory samples and flows. */
void ppsim_sim_collect(const Replay *r, PpsimRunResult *res, PpsimSimFlags flags);
