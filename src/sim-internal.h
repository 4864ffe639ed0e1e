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
    /* sim-parallel.c, NULL without DP: per stage the send then the receive task of its
     * gradient reduction [2 n_stages], and the send and receive streams per device [2p] */
    PpsimTaskId *dp_task;
    int *dp_stream;
    /* sim-parallel.c, ZeRO-3 over dp > 1 in hardware mode: the weight all-gathers before
     * each F and B are flows of their own (so F/B durations leave them out); zero_task
     * holds (device, send task, receive task) per gather; else FALSE and NULL */
    gboolean zero_flows;
    GArray *zero_task; /* guint32 triples */
} Replay;

/* sim-build.c: ppsim_sim_build_schedule, also collecting what was chosen for the user into
 * @choices and what a solver-backed generator says into @solver (both nullable). */
PpsimSchedule *ppsim_sim_build(const PpsimScenario *sc, const PpsimScheduleSpec *spec,
                               PpsimCosts **costs_out, GArray *choices, PpsimSolverReport *solver,
                               GError **error);

/* Writes "<prefix><n><suffix>" into @buf (at least 48 bytes): an executor stream's name,
 * without printf (a sweep makes millions of them). Returns @buf. */
char *ppsim_sim_stream_name(char *buf, const char *prefix, int n, const char *suffix);

/* sim-parallel.c: adds each stage's DP gradient reduction after its last backward (when
 * parallel.dp > 1) and fills the per-device TP/DP times and the MFU into @res. */
void ppsim_sim_add_dp_tasks(Replay *r);
/* Whether ZeRO-3's gathers run as flows in this replay (set r->zero_flows before building). */
gboolean ppsim_sim_zero_flows(const Replay *r);
/* sim-parallel.c: adds ZeRO-3's all-gather of the stage's weights before each F, B and BW
 * as flows on the device's "zero" streams, prefetched at most one op ahead. */
void ppsim_sim_add_zero_gathers(Replay *r);
void ppsim_sim_collect_parallel(const Replay *r, PpsimRunResult *res);
/* Notes in @choices (nullable) the microbatch count derived from training.global_batch. */
void ppsim_sim_note_parallel(const PpsimScenario *sc, GArray *choices);

/* Fills @res from a finished replay: timings, memory, ratios, bubble attribution and, with
 * PPSIM_SIM_RECORD, transfers, memory samples and flows. */
void ppsim_sim_collect(const Replay *r, PpsimRunResult *res, PpsimSimFlags flags);
