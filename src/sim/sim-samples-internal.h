/* sim-samples-internal.h: the compiled model shared by the Monte-Carlo sampler's files
 * (sim.h ppsim_sim_sample): sim-samples-model.c compiles it, sim-samples.c draws the
 * samples, sim-samples-summary.c sums them up and computes the slack. Not part of the
 * library's interface. */
#pragma once

#include "sim.h"

typedef struct {
    gint32 lane_prev;   /* op id of the previous op of its stream, -1 */
    guint32 pred_first; /* its inputs: edges[pred_first, + pred_n) */
    guint32 pred_n;
    gint32 device;
    PpsimTime base_ps; /* deterministic duration */
    PpsimTime slow_ps; /* x the persistent device factor (replica 0) */
    guint8 noise;      /* PpsimNoiseKind */
    guint8 gpu;        /* runs on the device's GPU: device windows apply */
    guint8 windows;    /* gpu, and the device has slowdown windows */
} SampOp;

typedef struct {
    guint32 from;
    PpsimTime lat_ps;  /* the deterministic latency */
    PpsimTime slow_ps; /* x the persistent link factor (replica 0) */
} SampEdge;

typedef struct {
    PpsimTime from_ps, to_ps;
    double factor;
} SampSegment;

typedef struct {
    int p, n_ops, dp, dp_exact;
    gboolean slowed; /* slowdowns (devices, links, events): replica 0 only takes them */
    SampOp *op;
    SampEdge *edge;
    guint32 *order; /* op ids (the schedule index's) in topological order = new numbering */
    gboolean noisy[PPSIM_NOISE_N_KINDS];
    double mu[PPSIM_NOISE_N_KINDS], sigma[PPSIM_NOISE_N_KINDS];
    SampSegment *seg; /* per device, sorted, disjoint: [seg_first[d], seg_first[d + 1]) */
    int *seg_first;
    /* gradient reductions, device by device in list order: reduction j follows op
     * red_op[j] (its stage's last W/BW, else B) and lasts red_ps[j]; device d's are
     * [red_first[d], red_first[d + 1]) */
    int n_red;
    guint32 *red_op;
    PpsimTime *red_ps;
    int *red_first;
    /* the noisy durations and latencies, drawn in this order before each pass (the pass
     * then reads plain arrays): target >= 0 is op target's duration, else edge -1 - target's
     * latency */
    int n_slots;
    gint32 *slot_target;
    guint8 *slot_kind;
    guint32 n_edges;
} SampModel;

/* Compiles @res (a replay of @sc, its schedule and, in hardware mode, its transfers) into
 * @m, which starts zeroed; FALSE with @error set when the costs or the schedule index fail
 * or the wait graph has a cycle. Either way, release @m with ppsim_sim_samples_model_free. */
gboolean ppsim_sim_samples_compile(SampModel *m, const PpsimScenario *sc, const PpsimRunResult *res,
                                   GError **error);
/* Frees the arrays @m holds (not @m itself). */
void ppsim_sim_samples_model_free(SampModel *m);

/* sim-samples-summary.c. dp > dp_exact: carries the makespans @x of @s->n samples, each of
 * a block of @block replicas, to @dp replicas, and records the carry in @s. */
void ppsim_sim_samples_extrapolate_dp(PpsimSampleSummary *s, PpsimTime *x, int dp, int block);
/* Mean, spread, percentiles and, from @path ([n x p]: the devices on each sample's critical
 * path), critical shares of the samples in @s. */
void ppsim_sim_samples_summary_finish(PpsimSampleSummary *s, const guint8 *path);
/* Per device of @m, its GPU ops' mean float and share of ops without float, into @s. */
void ppsim_sim_samples_summary_slack(PpsimSampleSummary *s, const SampModel *m);
