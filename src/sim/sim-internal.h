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
    gint64 *host_static;        /* [nodes] what it keeps in host memory instead */
    int *cpu_first, *cpu_count; /* [S] workers of a stage's CPU optimizer step */
    /* sim-parallel.c, NULL without DP: per stage the send then the receive task of its
     * gradient reduction [2 n_stages], and the send and receive streams per device [2p] */
    PpsimTaskId *dp_task;
    int *dp_stream;
    /* sim-parallel.c, ZeRO-3 over dp > 1 in hardware mode: the weight all-gathers before
     * each F and B are flows of their own (so F/B durations leave them out); zero_task
     * holds (device, first layer's send and receive, the rest's send and receive) per
     * gather; else FALSE and NULL */
    gboolean zero_flows;
    GArray *zero_task;    /* guint32 quintuples */
    gboolean has_cpu_opt; /* some optimizer step runs on a host CPU worker */
    /* sim-parallel.c, MoE with parallel.ep > 1 in hardware mode: the all-to-alls run as flows
     * of their own (so F/B/R durations leave them out); ep_task holds (device, index of the
     * op in its compute list, send task, receive task) per op or F&B pair; else FALSE/NULL */
    gboolean ep_flows;
    GArray *ep_task; /* guint32 quadruples */
    /* sim-parallel.c, model.tied_embeddings: the devices of the first and the last stage and
     * the two flows of their all-reduce of the embedding's gradient (each sends to the
     * other); tied_dev[0] == tied_dev[1] without one */
    int tied_dev[2];
    PpsimTaskId tied_task[2];
} Replay;

/* The memory changes of one op (src/README.md "Semantics"), in the order the executor applies
 * them; changes of zero are left out. */
typedef struct {
    PpsimMemWhen when;
    int pool; /* device d's pool is d; node n's host pool is p + n */
    int tag;  /* the stage, or -1 (host memory) */
    PpsimMemCategory category;
    gint64 delta;
} SimMemEffect;

typedef struct {
    int n;
    SimMemEffect e[4];
} SimMemEffects;

/* The memory rules (src/README.md "Semantics") for one (stage, microbatch): F allocates A (keeping
 * only the checkpoint when R recomputes the rest); OFF frees what is resident when its D2H ends and
 * RL brings it back as a buffer when it starts; R allocates the recomputed part as a buffer; B
 * frees A - A_W (buffers first), W the rest, BW everything; on the stage with the loss, B or BW
 * also holds the logits' gradient while it runs (hardware mode). The host pool holds offloaded
 * bytes from the start of OFF to the end of RL. */
typedef struct {
    int d, host;             /* device pool, host pool */
    gint64 rc, off, rl;      /* op ids, -1 when absent */
    gint64 A, keep;          /* allocated by F; kept by F when R recomputes */
    gint64 act, buf;         /* resident activation and buffers before the backward */
    gint64 free_b, from_buf; /* what B frees, and how much of it are buffers */
    gboolean offloaded;      /* both OFF and RL exist */
    gint64 logits;           /* the logits' gradient B or BW holds while it runs (hardware
                              * mode, the stage with the loss) */
} MemPlan;

/* sim-memory.c: the memory plan of stage @s's microbatch @j. */
void ppsim_sim_mem_plan(const Replay *r, int s, int j, MemPlan *m);
/* sim-memory.c: the static memory each device moves to the host for T-Offload (fills
 * r->static_saved, r->host_static and the CPU workers' split, r->cpu_first/cpu_count). */
void ppsim_sim_static_saved(Replay *r);
/* sim-memory.c: the static memory of each device (its stages' weights, gradients and
 * optimizer states, less what T-Offload keeps on the host and the embedding's second copy,
 * ppsim_sim_shared_copy). Returns: (transfer full) [p]. */
gint64 *ppsim_sim_static_memory(const Replay *r);
/* sim-memory.c: that static memory for device @d alone. */
gint64 ppsim_sim_device_static(const Replay *r, int d);
/* What device @d holds once of the word embedding that two of its stages hold (the first
 * stage's and the last stage's copy, PpsimStageCost.copy_*_mem: V-shapes), by part, into
 * @w, @g, @o (bytes; zero elsewhere). */
void ppsim_sim_shared_copy(const Replay *r, int d, double *w, double *g, double *o);
/* sim-memory.c: @op's memory changes into @out. */
void ppsim_sim_mem_effects(const Replay *r, const PpsimOp *op, SimMemEffects *out);
/* sim.c: the duration of @op in this replay. */
PpsimTime ppsim_sim_duration(const Replay *r, const PpsimOp *op);
/* sim.c: the node of pipeline device @device (0 without a topology); the bits per weight a
 * WRL brings back ([TP] §5, 16 by default); the GPUs of one TP group on one node. */
int ppsim_sim_node_of(const Replay *r, int device);
int ppsim_sim_weight_bits(const PpsimOp *op);
int ppsim_sim_tp_on_node(const Replay *r);

/* sim-fast.c: the replay as one pass in dependency order, for a replay where nothing is
 * shared: explicit costs (every transfer a fixed latency), every list of the schedule one
 * stream of its own, and no traces to record. It fills @res entirely (timings and every
 * metric), or declines when two streams change one memory pool at the same instant (the
 * order of such changes, which the peaks may depend on, is the event loop's). Sets the
 * phase times of @res. */
typedef enum {
    SIM_FAST_DONE,     /* @res is complete */
    SIM_FAST_FAILED,   /* a cyclic wait: @error is set */
    SIM_FAST_DECLINED, /* replay with the event engine instead (and drop @res) */
} SimFastOutcome;
SimFastOutcome ppsim_sim_fast(Replay *r, PpsimRunResult *res, GError **error);

/* ppsim_sim_replay without taking @sched: the result's schedule is left NULL. */
PpsimRunResult *ppsim_sim_replay_borrowed(const PpsimScenario *sc, const PpsimCosts *costs,
                                          const PpsimSchedule *sched, const char *label,
                                          const char *generator, PpsimSimFlags flags,
                                          GError **error);

/* sim-build.c: ppsim_sim_build_schedule, also collecting what was chosen for the user into
 * @choices and what a solver-backed generator says into @solver (both nullable). When
 * @replayed is non-NULL, the generator's candidates are replayed with @flags, the replay of
 * the best so far (fits the memory limit, then fastest; ties: the first) is kept, and if the
 * schedule returned equals that candidate, *@replayed receives its replay (else NULL): the
 * run's own replay of it, already done (labelled as the run labels it, replay_reused set). */
PpsimSchedule *ppsim_sim_build(const PpsimScenario *sc, const PpsimScheduleSpec *spec,
                               PpsimCosts **costs_out, GArray *choices, PpsimSolverReport *solver,
                               PpsimSimFlags flags, PpsimRunResult **replayed, GError **error);

/* Writes "<prefix><n><suffix>" into @buf (at least 48 bytes): an executor stream's name,
 * without printf (a sweep makes millions of them). Returns @buf. */
char *ppsim_sim_stream_name(char *buf, const char *prefix, int n, const char *suffix);

/* sim-parallel.c: adds each stage's DP gradient reduction after its last backward (when
 * parallel.dp > 1) and fills the per-device TP/DP times and the MFU into @res. */
void ppsim_sim_add_dp_tasks(Replay *r);
/* parallel.overlap_param_gather (ZeRO 1-2): the all-gather of each stage's updated weights
 * as flows on the device's "pg" streams from the iteration's start, layer by layer, before
 * the stage's first forward. */
void ppsim_sim_add_param_gathers(Replay *r);
/* model.tied_embeddings (costs->tied_grad_bytes > 0) with the first and the last stage on
 * two devices: their all-reduce of the word embedding's gradient, one flow each way on the
 * devices' ".emb" streams, once each device's forward-backward and DP reductions are done
 * ([MEG] finalize_model_grads); the optimizer step that follows the pipeline comes after it
 * (an OPT op a schedule places itself does not wait). */
void ppsim_sim_add_tied_grads(Replay *r);
/* Per stage, the index in @ops (one device's compute list) of the op after which the stage's
 * gradient reduction starts: its last W/BW, else its last B; -1 for a stage not on the list.
 * @last has @n_stages entries. Shared by the replay and the Monte-Carlo sampler. */
void ppsim_sim_last_grad_ops(const GArray *ops, int n_stages, gint64 *last);
/* The index in the device's list of the op whose end lets stage @s's reduction start: its
 * own last gradient op (@last[s]) when buckets reduce during the backward
 * (parallel.overlap_grad_reduce), else the device's last gradient op over all its stages, as
 * Megatron reduces every chunk's gradients after the whole forward-backward
 * (finalize_model_grads at the end of the schedule, [MEG]). */
gint64 ppsim_sim_grad_ready_op(const gint64 *last, int n_stages, int s, gboolean overlap);
/* Whether ZeRO-3's gathers run as flows in this replay (set r->zero_flows before building). */
gboolean ppsim_sim_zero_flows(const Replay *r);
/* sim-parallel.c: adds ZeRO-3's all-gather of the stage's weights before each F, B and BW
 * as flows on the device's "zero" streams, layer by layer, prefetched at most one op ahead. */
void ppsim_sim_add_zero_gathers(Replay *r);
void ppsim_sim_collect_parallel(const Replay *r, PpsimRunResult *res);
/* Whether the MoE all-to-alls run as flows in this replay (set r->ep_flows before building). */
gboolean ppsim_sim_ep_flows(const Replay *r);
/* sim-parallel.c: adds the all-to-alls of each MoE op (an F&B pair's together) as a send and
 * a receive flow on the device's "ep" streams; see there. */
void ppsim_sim_add_ep_flows(Replay *r);
/* The duration of the compute of @op when the all-to-alls are flows (r->ep_flows): without
 * them; the halves of an F&B pair as overlap.h splits them with the TP collectives only. */
PpsimTime ppsim_sim_ep_compute(const Replay *r, const PpsimOp *op);
/* Notes in @choices (nullable) the microbatch count derived from training.global_batch. */
void ppsim_sim_note_parallel(const PpsimScenario *sc, GArray *choices);

/* Fills @res from a finished replay: timings, memory, ratios, bubble attribution and, with
 * PPSIM_SIM_RECORD, transfers, memory samples and flows. */
void ppsim_sim_collect(const Replay *r, PpsimRunResult *res, PpsimSimFlags flags);

/* sim-metrics.c, the parts of ppsim_sim_collect() the one-pass replay shares: the shape of
 * @res with zeroed devices and stages, and its timing arrays, sized to the schedule's lists
 * (left uninitialised); then, once the timings, busy times and idle attribution are in, the
 * memory figures from the pools' stats ([p] devices then [n_hosts] hosts) and the stages'
 * peaks, the T-Offload figures, the ratios and the bubble breakdown. */
void ppsim_sim_collect_init(const Replay *r, PpsimRunResult *res);
void ppsim_sim_collect_timing_arrays(const Replay *r, PpsimRunResult *res);
void ppsim_sim_collect_finish(const Replay *r, PpsimRunResult *res, const PpsimPoolStats *pools,
                              const gint64 *tag_peak);
