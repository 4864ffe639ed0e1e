/* run-result.h: what one replay of one schedule produced (src/README.md "Semantics";
 * results/README.md "Command line").
 *
 * Plain data handed from sim.c to every report writer (text, JSON, CSV, trace, SVG). Times
 * are picoseconds; memory is in memory units (bytes, or explicit units x 1000): divide by
 * mem_scale to print. Ops are identified by (device, list, index) into the owned schedule.
 */
#pragma once

#include <glib.h>
#include "sched/generator.h"
#include "hw/exec.h"

G_BEGIN_DECLS

/* A device's memory verdict (src/README.md "How memory is modelled", "Verdicts"): fits when
 * its peak with every overhead at its default is within the limit; out of memory when even
 * its peak with the allocator's fragmentation at its low end, 0, exceeds it; tight between. */
typedef enum {
    PPSIM_MEM_FITS,
    PPSIM_MEM_TIGHT,
    PPSIM_MEM_OOM,
} PpsimMemVerdict;

typedef struct {
    int id;
    PpsimTime busy_ps; /* summed durations of compute ops */
    PpsimTime first_start_ps;
    PpsimTime end_ps;       /* end of the device's last op (compute or copy) */
    double bubble_ratio;    /* 1 - busy / makespan */
    gint64 static_memory;   /* resident all iteration: weights, gradients, optimizer states
                             * and, in hardware mode, memory.reserved and NCCL's buffers */
    gint64 peak_activation; /* max of ACTIVATION + BUFFER */
    gint64 peak_memory;     /* max of all categories, plus in hardware mode the allocator's
                             * fragmentation (memory.h) */
    PpsimTime peak_time_ps; /* when peak_memory was reached */
    gboolean has_peak_op;
    PpsimOp peak_op; /* the op whose start/end reached peak_memory */
    gboolean oom;    /* memory_verdict == PPSIM_MEM_OOM */
    /* The verdict, from peak_memory and peak_memory_low (the peak with memory.fragmentation
     * 0; = peak_memory in explicit mode); over_budget: peak_memory > limit, i.e. the verdict
     * is not fits, which is what plan, sweeps and search count as not fitting. */
    PpsimMemVerdict memory_verdict;
    gint64 peak_memory_low;
    gboolean over_budget;
    /* Hardware mode: peak_memory by kind (summing to it; src/README.md "How memory is modelled"),
     * and the limit less peak_memory (negative when out of memory; 0 without a limit). */
    gboolean has_breakdown;
    gint64 mem_weights, mem_gradients, mem_optimizer, mem_activations, mem_logits;
    gint64 mem_buffers, mem_overheads, mem_free;
    /* Bubble attribution: idle before the first op, idle waiting between ops (split into
     * waits on a transfer/offload and plain dependency waits), idle after the last op, and
     * busy time spent recomputing. */
    PpsimTime idle_warmup_ps, idle_wait_ps, idle_transfer_ps, idle_cooldown_ps;
    PpsimTime recompute_ps;
    /* The planner's bubble breakdown ([HP] B_R + B_I + B_P, plus the stalls the planner does
     * not model): the device's lost time, makespan - (busy - recomputing), split so that the
     * five parts sum to it exactly. recompute: R ops plus the forward re-run folded into B
     * by a recompute mode; transfer: waits for data that left its producer (idle_transfer
     * minus the offload part); offload: waits on an OFF/RL copy; imbalance: the device's
     * compute deficit against the busiest device, max busy - busy, capped by its remaining
     * idle time; preparation: the rest of warm-up, cool-down and dependency waits. */
    PpsimTime bubble_lost_ps;
    PpsimTime bubble_recompute_ps, bubble_imbalance_ps, bubble_preparation_ps;
    PpsimTime bubble_transfer_ps, bubble_offload_ps;
    /* T-Offload ([TP] §5): static memory its CPU optimizer steps free on the device, and the
     * share of its gradient D2H + CPU optimizer time that ran while the pipeline's GPU work
     * was still going (before the last GPU compute op of any device ended); -1 when the
     * device offloads no optimizer step. */
    gint64 static_memory_saved;
    double optimizer_overlap;
    /* 3D parallelism (zero without it): time of TP collectives inside this device's F/B/R
     * (on the critical path: never hidden), of ZeRO-3 parameter gathers (likewise), of its
     * stages' DP gradient reductions (on the devices of the first and the last stage with
     * model.tied_embeddings, their all-reduce of the embedding's gradient too), and the part
     * of those that ran past the last compute op of the whole pipeline (not hidden behind
     * the cool-down). */
    PpsimTime tp_comm_ps, zero_gather_ps, dp_comm_ps, dp_exposed_ps;
    /* MoE expert parallelism: the all-to-alls inside this device's F/B/R (src/cost/moe.h);
     * F&B pairs (schedule.h PPSIM_OP_FLAG_OVERLAP): the time the pairs saved against running
     * their halves apart (fb_hidden: in hardware mode the communication hidden behind the
     * other half's compute, src/cost/overlap.h), and of it what the all-to-alls account for */
    PpsimTime ep_comm_ps, fb_hidden_ps, ep_comm_hidden_ps;
    /* Kernel model only (has_compute_breakdown): the device's compute time by kernel class
     * (GEMMs, attention core, memory-bound kernels; TP/CP collectives excluded) and its
     * optimizer step, which ends the iteration after the last DP reduction. */
    PpsimTime compute_gemm_ps, compute_attention_ps, compute_memory_ps, compute_optimizer_ps;
} PpsimDeviceResult;

typedef struct {
    int id;
    int device;
    gint64 peak_activation;
} PpsimStageResult;

/* Host memory of one node: offloaded activations live here between OFF and RL. */
typedef struct {
    int node;
    gint64 peak_memory;
    gint64 limit; /* 0 = none (explicit mode) */
    gboolean oom;
} PpsimHostResult;

typedef struct {
    PpsimTime start_ps, end_ps;
} PpsimOpTiming;

/* A cross-device dependency as it happened: the producer op ended at @send_ps, the consumer
 * could start from @arrive_ps. Lists: 0 = compute, 1 = copy. */
typedef struct {
    gint32 from_device, from_list, from_index;
    gint32 to_device, to_list, to_index;
    PpsimTime send_ps, arrive_ps;
    guint64 bytes; /* 0 in explicit mode */
} PpsimTransfer;

/* What `ppsim run --samples N` adds to a result (sim-samples.c, scenarios/README.md "Variability"):
 * the makespans of N Monte-Carlo replays of the same schedule under the scenario's `variability:`,
 * and how often each device was on the critical path. */
typedef struct {
    int n;        /* samples */
    guint64 seed; /* --seed */
    int dp;       /* data-parallel replicas of each sample (parallel.dp) */
    int dp_exact; /* of them, sampled one by one (= dp, or variability.dp_exact below it) */
    /* dp > dp_exact (sim-samples.c extrapolate_dp): the shift of the mean from a block of
     * dp_exact replicas to dp, and the factor on each sample's distance from the mean */
    PpsimTime dp_shift_ps;
    double dp_scale;
    PpsimTime *makespan_ps;           /* [n] in sample order */
    PpsimTime *sorted_ps;             /* [n] ascending */
    double mean_ps, stddev_ps;        /* stddev: with n - 1 */
    PpsimTime p50_ps, p90_ps, p99_ps; /* nearest rank: the ceil(q n)-th smallest */
    int p;
    double *critical_share; /* [p] share of samples where the device was on the critical path */
    /* [p] over the device's GPU ops in the noiseless replay (slowdowns in, windows out):
     * the mean total float (how far an op's end may slip before the makespan does), and
     * the share of ops without any */
    double *slack_mean_ps, *critical_ops;
    gboolean frozen_transfers; /* hardware mode: transfers kept at their deterministic times */
} PpsimSampleSummary;

void ppsim_sample_summary_free(PpsimSampleSummary *s);

typedef struct {
    char *label;     /* display name of the schedule ("1f1b", "zb {memory_limit: 8}") */
    char *generator; /* generator name, or "custom" */
    char *scenario;  /* scenario name */
    int p, v, m, n_stages;
    gboolean explicit_mode;
    const char *memory_unit; /* "bytes" | "units" (static string) */
    double mem_scale;
    gint64 memory_limit;             /* per device; 0 = none */
    double offload_ratio_k;          /* [PO] Formula 1; 0 when not applicable */
    double offload_ratio_k_scenario; /* the same for this scenario's stored bytes per layer */

    PpsimTime makespan_ps;
    /* model.tied_embeddings: the all-reduce of the embedding's gradient between the devices
     * of the first and the last stage, first byte to last (0 without one): --samples replays
     * it with this length */
    PpsimTime tied_grad_ps;
    gboolean parallel; /* the scenario has a `parallel:` section: show the 3D lines */
    int tp, dp, zero, gpus;
    double model_flops; /* per iteration, all GPUs: 3 x forward ([KOR] Eq. (7)) */
    double mfu;         /* model_flops / (makespan x peak x gpus); 0 in explicit mode */
    /* Throughput: tokens of one iteration (m x microbatch_size x seq_len x dp, every
     * replica's) over the makespan, in both modes (explicit costs are milliseconds); and
     * model_flops / makespan / gpus in TFLOP/s, the MFU convention (3 x forward, no
     * recompute), 0 in explicit mode. */
    double tokens;
    double tokens_per_s;
    double tflops_per_gpu;
    gboolean has_compute_breakdown; /* the kernel model timed the run (devices' compute_*) */
    double bubble_ratio;
    double bubble_ratio_span;
    PpsimDeviceResult *devices; /* [p] */
    PpsimStageResult *stages;   /* [n_stages] */
    int n_hosts;
    PpsimHostResult *hosts; /* [n_hosts], one per node */

    GArray *choices;         /* PpsimChoice: what the generator and the run chose that the
                                scenario did not set (nullable) */
    PpsimSchedule *schedule; /* owned */
    GArray **compute_timing; /* [p] PpsimOpTiming, parallel to schedule->compute[d] */
    GArray **copy_timing;    /* [p] PpsimOpTiming, parallel to schedule->copy[d] */
    GArray *transfers;       /* PpsimTransfer, in producer-end order; recorded only with
                                PPSIM_SIM_RECORD (NULL otherwise) */
    /* Recorded only when asked (traces/SVG): memory changes per device pool (pool = device
     * id; host pools follow at p + node), and the flows over the links. */
    GArray *mem_samples; /* PpsimMemSample, nullable */
    GArray *flows;       /* PpsimFlowRecord, nullable */
    /* How a solver-backed generator made the schedule (optpipe); solver.present is FALSE for
     * every other schedule. */
    PpsimSolverReport solver;
    guint64 events_processed;
    gboolean one_pass;      /* replayed in one pass in dependency order, not by the event engine
                               (the same results; diagnostics only) */
    gboolean replay_reused; /* the replay the generator measured this schedule with, taken
                               as the run's (the same results; diagnostics only) */
    /* Wall-clock microseconds spent per phase (diagnostics only, never in reports): making
     * the schedule (cost estimates and the generator, or reading the CSV), checking it,
     * building the task graph, running the event loop, computing metrics. */
    gint64 time_schedule_us, time_validate_us, time_build_us, time_replay_us, time_metrics_us;
    PpsimSampleSummary *samples; /* (nullable) --samples: the Monte-Carlo replays */
    gint64 time_samples_us;      /* their wall-clock time (diagnostics only) */
} PpsimRunResult;

PpsimRunResult *ppsim_run_result_new(void);
void ppsim_run_result_free(PpsimRunResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimRunResult, ppsim_run_result_free)

/* Max over devices of peak_activation / peak_memory. */
gint64 ppsim_run_result_max_peak_activation(const PpsimRunResult *res);
gint64 ppsim_run_result_max_peak_memory(const PpsimRunResult *res);
/* Whether any device (or host) is out of memory: memory_verdict oom on a device, or a
 * host's peak over its limit. */
gboolean ppsim_run_result_any_oom(const PpsimRunResult *res);
/* Whether every device fits with every overhead at its default (no device over_budget, no host
 * out of memory): the conservative test of plan, sweeps and search. */
gboolean ppsim_run_result_fits(const PpsimRunResult *res);
/* The worst device verdict of @res (a host out of memory counts as oom). */
PpsimMemVerdict ppsim_run_result_verdict(const PpsimRunResult *res);

/* The verdict of a peak @peak against @limit (0: no limit, always fits), @peak_low being the
 * same peak with the uncertain overheads at their low ends (<= @peak). */
PpsimMemVerdict ppsim_mem_verdict(gint64 peak, gint64 peak_low, gint64 limit);
/* "fits", "tight" or "oom". */
const char *ppsim_mem_verdict_name(PpsimMemVerdict v);

G_END_DECLS
