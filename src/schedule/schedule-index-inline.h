/* schedule-index-inline.h: the index's layout and its dependency rules, inline, for
 * schedule-index.c and the hot loops of other modules (the one-pass replay, sim/sim-fast.c;
 * the offload estimate, sched/estimate.c), whose innermost loop they are. An
 * interface, but a low-level one: everything else uses schedule-index.h. */
#pragma once

#include "schedule/schedule-index.h"

/* Lookups by id answered by binary search before the device table is built. */
#define INDEX_LAZY_LOOKUPS 4096

struct PpsimScheduleIndex {
    const PpsimSchedule *sched;
    guint32 n_ops;
    guint32 *base;                   /* [2 * p + 1]: first id of (device, list), then n_ops */
    gint32 *table[PPSIM_OP_N_KINDS]; /* NULL for kinds absent from the schedule */
    guint max_syncs;                 /* most cross-device waits of one copy op */
    guint max_waits;                 /* most waits of one compute op on copy ops */
    guint flags;                     /* the union of every op's PpsimOpFlags */
    /* lookups by id: the device of every op once there have been INDEX_LAZY_LOOKUPS of
     * them (a cache behind the const accessors: an index serves one thread) */
    guint32 *device; /* [n_ops] or NULL */
    guint lookups;
};

/* (kind, stage, microbatch) -> id, or -1: ppsim_schedule_index_find() for in-range stages. */
static inline gint64
index_dep_find(const PpsimScheduleIndex *idx, PpsimOpKind kind, int s, int j)
{
    const gint32 *t = idx->table[kind];
    if (t == NULL)
        return -1;
    return ppsim_op_kind_per_stage(kind) ? t[s] : t[(gsize)s * idx->sched->n_microbatches + j];
}

typedef struct {
    PpsimDep *out;
    guint n;
} IndexDepOut;

/* Appends a dependency on @from (when it exists), an op of @device's list @list. */
static inline void
index_dep_emit(IndexDepOut *o, gint64 from, int device, int list, PpsimDepKind kind, int boundary)
{
    if (from >= 0)
        o->out[o->n++] = (PpsimDep){.from = (guint32)from,
                                    .device = device,
                                    .list = (guint8)list,
                                    .kind = (guint8)kind,
                                    .boundary = boundary};
}

static inline guint ppsim_schedule_index_deps_inline(const PpsimScheduleIndex *idx,
                                                     const PpsimOpPos *pos, const PpsimOp *op,
                                                     PpsimDep *out);

/* The F half of an F&B pair (schedule.h PPSIM_OP_FLAG_OVERLAP) also waits for the inputs of
 * its BW half, the next op of the list, so that the pair starts as one op: the BW's
 * cross-device inputs as events (kind SYNC: the data itself still travels to the BW, once),
 * the rest as they are. */
static inline void
index_dep_overlap(const PpsimScheduleIndex *idx, const PpsimOpPos *pos, IndexDepOut *o)
{
    const GArray *list = idx->sched->compute[pos->device];
    if ((guint)pos->index + 1 >= list->len)
        return;
    const PpsimOp *next = &g_array_index(list, PpsimOp, pos->index + 1);
    if (next->kind != PPSIM_OP_BW || !(next->flags & PPSIM_OP_FLAG_OVERLAP))
        return; /* the checker names it */
    PpsimOpPos npos = {pos->device, 0, pos->index + 1};
    PpsimDep room[8];
    guint n = ppsim_schedule_index_deps_inline(idx, &npos, next, room);
    for (guint k = 0; k < n; k++) {
        const PpsimDep *e = &room[k];
        if (e->device == pos->device && e->list == 0 &&
            e->from >= idx->base[2 * pos->device] + (guint32)pos->index)
            continue; /* its own F half (or later): list order already covers it */
        index_dep_emit(o, e->from, e->device, e->list,
                       e->device == pos->device ? (PpsimDepKind)e->kind : PPSIM_DEP_SYNC,
                       e->boundary);
    }
}

/* The first entry of @entries (PpsimCopySync or PpsimComputeWait, both led by their gint32
 * .op and sorted by it) whose op is @op or later: a binary search. */
static inline guint
index_first_entry(const GArray *entries, gint32 op)
{
    const char *data = entries->data;
    guint size = g_array_get_element_size((GArray *)entries);
    guint lo = 0, hi = entries->len;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (*(const gint32 *)(gconstpointer)(data + (gsize)mid * size) < op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline guint
ppsim_schedule_index_deps_inline(const PpsimScheduleIndex *idx, const PpsimOpPos *pos,
                                 const PpsimOp *op, PpsimDep *out)
{
    const PpsimSchedule *sched = idx->sched;
    int s = op->stage, j = op->microbatch, first = 0, last = sched->n_stages - 1, d = pos->device;
    if (G_UNLIKELY(sched->pipe_stages > 0))
        ppsim_schedule_pipe_bounds(sched, s, &first, &last);
    IndexDepOut o = {out, 0};
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        if (G_UNLIKELY(op->flags & PPSIM_OP_FLAG_OVERLAP))
            index_dep_overlap(idx, pos, &o);
        if (s > first)
            index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_F, s - 1, j),
                           sched->stage_device[s - 1], 0, PPSIM_DEP_ACTIVATION, s - 1);
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_WRL, s, -1), d, 1, PPSIM_DEP_LOCAL, s);
        break;
    case PPSIM_OP_B:
    case PPSIM_OP_BW:
        if (s < last) {
            gint64 up = index_dep_find(idx, PPSIM_OP_B, s + 1, j);
            if (up < 0)
                up = index_dep_find(idx, PPSIM_OP_BW, s + 1, j);
            index_dep_emit(&o, up, sched->stage_device[s + 1], 0, PPSIM_DEP_GRADIENT, s);
        }
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_F, s, j), d, 0, PPSIM_DEP_LOCAL, s);
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_R, s, j), d, 0, PPSIM_DEP_LOCAL, s);
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_RL, s, j), d, 1, PPSIM_DEP_LOCAL, s);
        break;
    case PPSIM_OP_W:
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_B, s, j), d, 0, PPSIM_DEP_LOCAL, s);
        break;
    case PPSIM_OP_R:
    case PPSIM_OP_OFF:
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_F, s, j), d, 0, PPSIM_DEP_LOCAL, s);
        break;
    case PPSIM_OP_RL:
        index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_OFF, s, j), d, 1, PPSIM_DEP_LOCAL, s);
        break;
    case PPSIM_OP_OPT:
    case PPSIM_OP_GOFF:
        for (int mb = 0; mb < sched->n_microbatches; mb++) {
            gint64 w = index_dep_find(idx, PPSIM_OP_W, s, mb);
            if (w < 0)
                w = index_dep_find(idx, PPSIM_OP_BW, s, mb);
            index_dep_emit(&o, w, d, 0, PPSIM_DEP_LOCAL, s);
        }
        if (op->kind == PPSIM_OP_OPT) /* T-Offload: the CPU step needs the gradients */
            index_dep_emit(&o, index_dep_find(idx, PPSIM_OP_GOFF, s, -1), d, 1, PPSIM_DEP_LOCAL, s);
        break;
    case PPSIM_OP_WRL:
        break;
    default:
        g_assert_not_reached();
    }
    /* a copy op's anchor: it waits for a compute op of its device to end */
    if (pos->list == 1) {
        gint32 after = g_array_index(sched->copy_after[d], gint32, pos->index);
        if (after >= 0)
            index_dep_emit(&o, idx->base[2 * d] + after, d, 0, PPSIM_DEP_LOCAL, s);
        /* its waits on other devices' copy ops: the run of entries for this op (sorted) */
        const GArray *syncs = sched->copy_sync[d];
        const PpsimCopySync *e = (const PpsimCopySync *)(gconstpointer)syncs->data;
        guint lo = index_first_entry(syncs, pos->index);
        for (; lo < syncs->len && e[lo].op == pos->index; lo++)
            index_dep_emit(&o, idx->base[2 * e[lo].device + 1] + e[lo].index, e[lo].device, 1,
                           PPSIM_DEP_SYNC, s);
    } else if (idx->max_waits > 0) {
        /* a compute op's waits on its device's copy ops (schedule.h compute_wait) */
        const GArray *waits = sched->compute_wait[d];
        const PpsimComputeWait *e = (const PpsimComputeWait *)(gconstpointer)waits->data;
        guint lo = index_first_entry(waits, pos->index);
        for (; lo < waits->len && e[lo].op == pos->index; lo++)
            index_dep_emit(&o, idx->base[2 * d + 1] + e[lo].index, d, 1, PPSIM_DEP_LOCAL, s);
    }
    return o.n;
}
