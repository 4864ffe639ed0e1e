/* schedule.h: the schedule IR (src/README.md "Semantics").
 *
 * A schedule is data: per device, the ordered compute ops (F, B, W, BW, R, OPT) and the
 * ordered copy ops (OFF, RL), plus the stage -> device map. Cross-device transfers are never
 * listed; the replay derives them from the dependencies. Nothing in src/schedule/ knows a
 * generator: the plug-in class lives in sched/generator.h.
 */
#pragma once

#include <glib.h>
#include "util/units.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_OP_F,    /* forward */
    PPSIM_OP_B,    /* backward for inputs (activation gradient) */
    PPSIM_OP_W,    /* backward for weights */
    PPSIM_OP_BW,   /* fused full backward: B then W as one op */
    PPSIM_OP_R,    /* recompute-forward, before B */
    PPSIM_OP_OPT,  /* optimizer step of a stage (microbatch -1) */
    PPSIM_OP_OFF,  /* activation offload, device -> host (copy stream) */
    PPSIM_OP_RL,   /* activation reload, host -> device (copy stream) */
    PPSIM_OP_GOFF, /* a stage's gradients, device -> host after its last backward (copy
                    * stream, microbatch -1; T-Offload, [TP] §5) */
    PPSIM_OP_WRL,  /* a stage's weights, host -> device before its first forward (copy
                    * stream, microbatch -1; share = bits per weight, 0 = 16) */
    PPSIM_OP_N_KINDS
} PpsimOpKind;

/* Kinds that run on a copy stream (in a device's copy list). */
static inline gboolean
ppsim_op_kind_is_copy(int kind)
{
    return kind == PPSIM_OP_OFF || kind == PPSIM_OP_RL || kind == PPSIM_OP_GOFF ||
           kind == PPSIM_OP_WRL;
}

/* Kinds that exist once per stage (microbatch -1): OPT, GOFF, WRL. */
static inline gboolean
ppsim_op_kind_per_stage(int kind)
{
    return kind == PPSIM_OP_OPT || kind == PPSIM_OP_GOFF || kind == PPSIM_OP_WRL;
}

typedef enum {
    PPSIM_OP_FLAG_NONE = 0,
    PPSIM_OP_FLAG_CPU = 1 << 0, /* OPT runs on a host CPU worker (T-Offload) */
    /* F&B ([DSV3] §3.2.1; [DUALPIPE] README "F&B"): an F and the BW right after it in the
     * same compute list form one overlapped op. Both carry the flag. The pair starts when
     * the inputs of both halves are ready and lasts the stage's F&B time (costs
     * `forward_backward`), the F half first (the cost model splits the time between the
     * halves); F allocates at the pair's start, BW frees at its end. CSV: `+` between the
     * two cells' text, e.g. `0F3+7B1`. */
    PPSIM_OP_FLAG_OVERLAP = 1 << 1,
} PpsimOpFlags;

/* A cross-device wait of a copy op ([PO] App. D synchronized co-schedule): copy op @op of
 * the device holding this entry starts only after copy op @index of device @device (another
 * device) has ended, like a CUDA event recorded on one copy stream and waited on by another. */
typedef struct {
    gint32 op;     /* index into the holder's copy list */
    gint32 device; /* the other device */
    gint32 index;  /* index into its copy list */
} PpsimCopySync;

/* A wait of a compute op on a copy op of its own device: compute op @op starts only after
 * copy op @index has ended, like a compute stream waiting on an event recorded after an
 * offload (the memory it frees is then free before the compute op allocates). */
typedef struct {
    gint32 op;    /* index into the device's compute list */
    gint32 index; /* index into its copy list */
} PpsimComputeWait;

/* One op: a plain 12-byte value. */
typedef struct {
    guint8 kind;       /* PpsimOpKind */
    guint8 flags;      /* PpsimOpFlags */
    guint16 share;     /* WRL: bits per weight (0 = 16). R: percent of the stage's recomputable
                        * activation it recomputes,     1..100; 0 = all (CSV `<s>R<mb>%<share>`) */
    gint32 stage;      /* global (virtual) stage */
    gint32 microbatch; /* -1 for OPT */
} PpsimOp;

typedef struct {
    int n_devices;         /* p */
    int n_stages;          /* S = p * v */
    int n_microbatches;    /* m */
    int *stage_device;     /* [n_stages] */
    int pipe_stages;       /* stages per pipeline: 0 (or n_stages) = one pipeline through every
                            * stage; n_stages / 2 = two pipelines, stages [0, S/2) and [S/2, S)
                            * (DualPipe's two directions): each microbatch runs through the one
                            * pipeline that holds its forward at the pipeline's first stage, and
                            * no dependency crosses from one pipeline to the other */
    GArray **compute;      /* [n_devices] GArray of PpsimOp: F B W BW R OPT */
    GArray **copy;         /* [n_devices] GArray of PpsimOp: OFF RL */
    GArray **copy_after;   /* [n_devices] gint32 per copy op: it may start only after the
                            * device's compute op of that index ends (its anchor); -1: none.
                            * Lets a generator place a reload "at the latest slot before its B"
                            * ([PO] §4.2) on an in-order copy stream. */
    GArray **copy_sync;    /* [n_devices] PpsimCopySync, sorted by .op; usually empty */
    GArray **compute_wait; /* [n_devices] PpsimComputeWait, sorted by .op; usually empty */
} PpsimSchedule;

/* The first and last stage of the pipeline holding stage @s. */
static inline void
ppsim_schedule_pipe_bounds(const PpsimSchedule *sched, int s, int *first, int *last)
{
    int ps = sched->pipe_stages > 0 ? sched->pipe_stages : sched->n_stages;
    *first = s - s % ps;
    *last = *first + ps - 1;
}

/* Short name of a kind: "F", "B", "W", "BW", "R", "OPT", "OFF", "RL", "GOFF", "WRL". */
const char *ppsim_op_kind_name(PpsimOpKind kind);

/* Appends "F(s=3, mb=5)" style text for messages. */
void ppsim_op_describe(GString *out, const PpsimOp *op);

/* A schedule with empty op lists; the stage map is unset (-1) until filled. */
PpsimSchedule *ppsim_schedule_new(int n_devices, int n_stages, int n_microbatches);
/* A deep copy. Returns: (transfer full). */
PpsimSchedule *ppsim_schedule_copy(const PpsimSchedule *sched);
/* Whether @a and @b are the same schedule: shape, stage map, and every list, anchor and
 * cross-device wait, in order. */
gboolean ppsim_schedule_equal(const PpsimSchedule *a, const PpsimSchedule *b);
void ppsim_schedule_free(PpsimSchedule *sched);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimSchedule, ppsim_schedule_free)

/* Fills the stage map: plain (s = d, needs S = p), interleaved (d = s mod p) or V-shape
 * (d = s for s < p, 2p-1-s otherwise; needs S = 2p). The bidirectional map is V-shape's
 * with two pipelines (pipe_stages = p): stage s < p on device s for the forward direction,
 * stage p + k on device p-1-k for the reverse one ([DUALPIPE]). */
void ppsim_schedule_map_plain(PpsimSchedule *sched);
void ppsim_schedule_map_interleaved(PpsimSchedule *sched);
void ppsim_schedule_map_vshape(PpsimSchedule *sched);
void ppsim_schedule_map_bidirectional(PpsimSchedule *sched);

/* Appends an op to @device's compute list, or its copy list for OFF/RL/GOFF/WRL. */
void ppsim_schedule_push(PpsimSchedule *sched, int device, PpsimOpKind kind, int stage,
                         int microbatch);
/* Same, with flags. */
void ppsim_schedule_push_op(PpsimSchedule *sched, int device, PpsimOp op);
/* Appends a copy op (OFF/RL) to @device's copy list that may start only after compute op
 * @after (an index into the same device's compute list; -1 for none) has ended. */
void ppsim_schedule_push_copy(PpsimSchedule *sched, int device, PpsimOp op, int after);
/* Makes copy op @index of @device wait for copy op @other_index of @other_device to end
 * (kept sorted by @index; indices are checked by the checker, not here). */
void ppsim_schedule_add_copy_sync(PpsimSchedule *sched, int device, int index, int other_device,
                                  int other_index);

/* Makes compute op @index of @device wait for copy op @copy_index of the same device to end
 * (kept sorted by @index; indices are checked by the checker, not here). */
void ppsim_schedule_add_compute_wait(PpsimSchedule *sched, int device, int index, int copy_index);

/* Total number of ops in all lists. */
gsize ppsim_schedule_n_ops(const PpsimSchedule *sched);

/* Checks the schedule (validate.c): the stage map is complete; every op sits on its stage's
 * device; ranges; no duplicate op; every F has exactly one backward (B or BW), W only with B
 * and after it on the same device, no W without B; R before its B; OFF after F and RL after
 * OFF, RL only with OFF; OPT after every W/BW of its stage; an overlapped F directly
 * followed by an overlapped BW (F&B pairs) and no other op flagged; with two pipelines, each
 * microbatch starting in exactly one and having ops only there; and no cyclic wait (the
 * per-device orders plus the dependencies of src/README.md "Semantics" form an acyclic graph).
 * Errors: PPSIM_SCHED_ERROR_INVALID naming the first offending op and device. */
gboolean ppsim_schedule_validate(const PpsimSchedule *sched, GError **error);
/* The same checks on an index the caller already built with ppsim_schedule_index_new()
 * (which itself checks ranges, placement and duplicates); see schedule-index.h. */
struct PpsimScheduleIndex;
gboolean ppsim_schedule_validate_indexed(const PpsimSchedule *sched,
                                         const struct PpsimScheduleIndex *idx, GError **error);

/* PyTorch pipelining CSV (scenarios/README.md "Schedules as data"), schedule-csv.c. One row per
 * device, one cell per action
 * `<stage><kind><microbatch>` with kind F, I (B), W, B (BW); ppsim's extensions: `<stage>OG`
 * (GOFF) and `<stage>LW` (WRL, `%<bits>` after it when not 16) on the copy stream, R (recompute;
 * `%<share>` after it: a partial recompute of that percent),
 * O (offload), L (reload), and `<stage>S` (optimizer step; `<stage>SC` on a CPU worker). Copy
 * ops of a device follow its compute cells in the same row, after a `|` cell; a copy cell
 * may end in `@k`, its anchor: it starts only after the row's k-th compute action (0-based)
 * has ended; then in zero or more `^r.i`, cross-device waits: it starts only after row r's
 * i-th copy action (0-based among that row's copy cells) has ended. A compute cell may end
 * in `&i`: it starts only after the row's own i-th copy action has ended. An F&B pair is one
 * cell `<s>F<j>+<s'>B<j'>`; two pipelines are read from where the microbatches start
 * (schedule-csv.c). */
GString *ppsim_schedule_to_csv(const PpsimSchedule *sched);
/* Parses CSV text; @display_name prefixes errors with "name:line:col: ". The stage map comes
 * from which row holds which stage; p = rows, S = 1 + max stage, m = 1 + max microbatch.
 * Errors: PPSIM_SCHED_ERROR_PARSE. Returns: (transfer full) (nullable). */
PpsimSchedule *ppsim_schedule_from_csv(const char *text, gsize len, const char *display_name,
                                       GError **error);

G_END_DECLS
