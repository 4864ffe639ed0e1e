/* schedule-index.h: finds ops by (kind, stage, microbatch) and derives the dependencies of
 * src/README.md "Semantics" from a schedule. Shared by the checker (validate.c) and the replay
 * (sim.c), so the rules live in one place.
 */
#pragma once

#include "schedule/schedule.h"

G_BEGIN_DECLS

/* Ops get dense ids, device-major: device 0's compute ops, then its copy ops, then device 1's
 * ... */
typedef struct {
    gint32 device;
    gint32 list; /* 0 = compute, 1 = copy */
    gint32 index;
} PpsimOpPos;

typedef struct PpsimScheduleIndex PpsimScheduleIndex;

/* Indexes @sched, checking that each op's stage and microbatch are in range, that it sits in
 * the right list on its stage's device, that no op appears twice, and that anchors and
 * cross-device waits name existing ops.
 * Errors: PPSIM_SCHED_ERROR_INVALID. Returns: (transfer full) (nullable). */
PpsimScheduleIndex *ppsim_schedule_index_new(const PpsimSchedule *sched, GError **error);
void ppsim_schedule_index_free(PpsimScheduleIndex *idx);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimScheduleIndex, ppsim_schedule_index_free)

guint32 ppsim_schedule_index_n_ops(const PpsimScheduleIndex *idx);
/* The union of the flags (PpsimOpFlags) of every op. */
guint ppsim_schedule_index_flags(const PpsimScheduleIndex *idx);
/* Whether the schedule has any op of @kind (looking one up then costs nothing). */
gboolean ppsim_schedule_index_has_kind(const PpsimScheduleIndex *idx, PpsimOpKind kind);
/* The id table of @kind, for walking it in bulk: [S * m] by stage then microbatch, or [S]
 * for the per-stage kinds; -1 where absent; NULL when the schedule has no op of @kind.
 * Returns: (transfer none) (nullable). */
const gint32 *ppsim_schedule_index_table(const PpsimScheduleIndex *idx, PpsimOpKind kind);
/* Dense id of (kind, stage, microbatch), or -1 when absent (microbatch ignored for OPT). */
gint64 ppsim_schedule_index_find(const PpsimScheduleIndex *idx, PpsimOpKind kind, int stage,
                                 int microbatch);
/* The position of dense op id @id. Lookups by id (pos, device, op) search the list starts
 * at first and build a 4-byte-per-op table after a few thousand of them; an index is not
 * meant for lookups from several threads at once. */
void ppsim_schedule_index_pos(const PpsimScheduleIndex *idx, guint32 id, PpsimOpPos *out);
/* Device of op @id. */
int ppsim_schedule_index_device(const PpsimScheduleIndex *idx, guint32 id);
/* Dense id of the first op of @device's @list (ids of a list are consecutive). */
guint32 ppsim_schedule_index_base(const PpsimScheduleIndex *idx, int device, int list);
const PpsimOp *ppsim_schedule_index_op(const PpsimScheduleIndex *idx, guint32 id);

typedef enum {
    PPSIM_DEP_LOCAL,      /* same stage: no data crosses devices */
    PPSIM_DEP_ACTIVATION, /* F(s-1) -> F(s): the boundary activation of stage s-1 */
    PPSIM_DEP_GRADIENT,   /* B(s+1) -> B(s): the gradient at the boundary of stage s */
    PPSIM_DEP_SYNC,       /* copy op -> copy op of another device (schedule.h copy_sync):
                           * an event, no data crosses */
} PpsimDepKind;

/* Called once per dependency, producer @from -> consumer @to (dense ids). For ACTIVATION
 * and GRADIENT, @boundary is the stage whose output activation crosses (s-1, resp. s). */
typedef void (*PpsimDepFunc)(guint32 from, guint32 to, PpsimDepKind kind, int boundary,
                             gpointer user_data);

/* One dependency of an op on its producer, with where the producer sits. */
typedef struct {
    guint32 from;    /* the producer's dense id */
    gint32 device;   /* its device */
    guint8 list;     /* its list there: 0 = compute, 1 = copy */
    guint8 kind;     /* PpsimDepKind */
    gint32 boundary; /* as PpsimDepFunc's @boundary */
} PpsimDep;

/* Room ppsim_schedule_index_deps() needs for any one op of the schedule. */
guint ppsim_schedule_index_max_deps(const PpsimScheduleIndex *idx);
/* The dependencies whose consumer is op @id (@op, at @pos), in the order
 * ppsim_schedule_foreach_dep() gives them, into @out (room for
 * ppsim_schedule_index_max_deps()). Returns how many. */
guint ppsim_schedule_index_deps(const PpsimScheduleIndex *idx, guint32 id, const PpsimOpPos *pos,
                                const PpsimOp *op, PpsimDep *out);

/* Every dependency (src/README.md "Semantics") whose producer exists: F(s) <- F(s-1); B/BW(s) <-
 * B/BW(s+1), or F(S-1) on the last stage; B/BW(s) <- F(s), R(s), RL(s); W(s) <- B(s); R(s) <- F(s);
 * OFF(s) <- F(s); RL(s) <- OFF(s); OPT(s) and GOFF(s) <- every W/BW(s); OPT(s) <- GOFF(s);
 * F(s) <- WRL(s); a copy op <- its anchor
 * (schedule.h copy_after) and <- the copy ops of other devices it waits for (copy_sync,
 * kind PPSIM_DEP_SYNC, @boundary its own stage). Deterministic order. */
void ppsim_schedule_foreach_dep(const PpsimScheduleIndex *idx, PpsimDepFunc func,
                                gpointer user_data);

/* The two halves of ppsim_schedule_validate_indexed() (validate.c), for a caller that can
 * learn about cyclic waits more cheaply another way (sim.c: a replay whose streams are
 * exactly the schedule's lists deadlocks iff the wait graph has a cycle): the rules on
 * pairs and same-device order, and the cyclic-wait check. Same errors. */
gboolean ppsim_schedule_validate_rules(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                                       GError **error);
gboolean ppsim_schedule_validate_acyclic(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                                         GError **error);

/* Walks every op in a topological order of the wait graph (list order plus the
 * dependencies above; Kahn's algorithm, deterministic): @visit (nullable) gets each op when
 * all its predecessors have been visited, then @edge (nullable) gets each of its outgoing
 * edges, the list-order edge to its successor in the same list included (kind
 * PPSIM_DEP_LOCAL; @boundary is -1 for every edge). Errors as the cyclic-wait check. */
typedef void (*PpsimTopoFunc)(guint32 id, gpointer user_data);
gboolean ppsim_schedule_topo_walk(const PpsimSchedule *sched, const PpsimScheduleIndex *idx,
                                  PpsimTopoFunc visit, PpsimDepFunc edge, gpointer user_data,
                                  GError **error);

G_END_DECLS
