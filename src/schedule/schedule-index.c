/* schedule-index.c: op lookup tables and the dependency rules; see schedule-index.h.
 *
 * One int32 table of S*m entries per op kind (and S for OPT) maps (stage, microbatch) to a
 * dense op id: O(1) lookups, 4 bytes per slot, built in one pass. A kind the schedule never
 * uses gets no table, and looking it up costs no memory access (most schedules use two or
 * three of the eight kinds).
 */
#include "schedule/schedule-index.h"
#include "util/bigalloc.h"
#include "util/ppsim-error.h"

#include <string.h>

struct PpsimScheduleIndex {
    const PpsimSchedule *sched;
    guint32 n_ops;
    guint32 *base;                   /* [2 * p]: first id of (device, list) */
    gint32 *table[PPSIM_OP_N_KINDS]; /* NULL for kinds absent from the schedule */
    PpsimOpPos *pos;                 /* [n_ops] */
};

static gsize
index_slots(const PpsimSchedule *sched, PpsimOpKind kind)
{
    return ppsim_op_kind_per_stage(kind) ? (gsize)sched->n_stages
                                         : (gsize)sched->n_stages * sched->n_microbatches;
}

static GArray *
index_list(const PpsimSchedule *sched, int device, int list)
{
    return list == 0 ? sched->compute[device] : sched->copy[device];
}

static gboolean
index_check_op(const PpsimSchedule *sched, int d, int list, const PpsimOp *op, GError **error)
{
    const char *problem = NULL;
    gboolean copy_kind = ppsim_op_kind_is_copy(op->kind);
    if (op->kind >= PPSIM_OP_N_KINDS)
        problem = "has an unknown kind";
    else if (op->stage < 0 || op->stage >= sched->n_stages)
        problem = "names a stage out of range";
    else if (!ppsim_op_kind_per_stage(op->kind) &&
             (op->microbatch < 0 || op->microbatch >= sched->n_microbatches))
        problem = "names a microbatch out of range";
    else if (copy_kind != (list == 1))
        problem = copy_kind ? "is a copy op in a compute list" : "is a compute op in a copy list";
    else if (sched->stage_device[op->stage] != d)
        problem = "is not on its stage's device";
    if (G_LIKELY(problem == NULL))
        return TRUE;
    g_autoptr(GString) what = g_string_new(NULL);
    ppsim_op_describe(what, op);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID, "op '%s' on device %d %s",
                what->str, d, problem);
    return FALSE;
}

static gboolean
index_check_anchor(const PpsimSchedule *sched, int d, guint i, const PpsimOp *op, GError **error)
{
    gint32 after = g_array_index(sched->copy_after[d], gint32, i);
    if (after >= -1 && after < (gint32)sched->compute[d]->len)
        return TRUE;
    g_autoptr(GString) what = g_string_new(NULL);
    ppsim_op_describe(what, op);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                "op '%s' on device %d is anchored to compute op %d, but the device has %u",
                what->str, d, after, sched->compute[d]->len);
    return FALSE;
}

static gboolean
index_check_syncs(const PpsimSchedule *sched, int d, GError **error)
{
    const GArray *syncs = sched->copy_sync[d];
    for (guint k = 0; k < syncs->len; k++) {
        const PpsimCopySync *e = &g_array_index(syncs, PpsimCopySync, k);
        const char *problem = NULL;
        if (e->op < 0 || e->op >= (gint32)sched->copy[d]->len)
            problem = "names no copy op of its own device";
        else if (k > 0 && g_array_index(syncs, PpsimCopySync, k - 1).op > e->op)
            problem = "is out of order (waits must be sorted by copy op)";
        else if (e->device < 0 || e->device >= sched->n_devices || e->device == d)
            problem = "names no other device";
        else if (e->index < 0 || e->index >= (gint32)sched->copy[e->device]->len)
            problem = "names a copy op the other device does not have";
        if (problem == NULL)
            continue;
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "device %d: cross-device wait of copy op %d on copy op %d of device %d %s", d,
                    e->op, e->index, e->device, problem);
        return FALSE;
    }
    return TRUE;
}

static gsize
index_slot(const PpsimSchedule *sched, const PpsimOp *op)
{
    if (ppsim_op_kind_per_stage(op->kind))
        return op->stage;
    return (gsize)op->stage * sched->n_microbatches + op->microbatch;
}

PpsimScheduleIndex *
ppsim_schedule_index_new(const PpsimSchedule *sched, GError **error)
{
    for (int s = 0; s < sched->n_stages; s++)
        if (sched->stage_device[s] < 0 || sched->stage_device[s] >= sched->n_devices) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                        "stage %d is not mapped to a device", s);
            return NULL;
        }
    g_autoptr(PpsimScheduleIndex) idx = g_new0(PpsimScheduleIndex, 1);
    idx->sched = sched;
    idx->base = g_new(guint32, 2 * sched->n_devices + 1);
    guint32 n = 0;
    for (int d = 0; d < sched->n_devices; d++)
        for (int list = 0; list < 2; list++) {
            idx->base[2 * d + list] = n;
            n += index_list(sched, d, list)->len;
        }
    idx->base[2 * sched->n_devices] = n;
    idx->n_ops = n;
    idx->pos = ppsim_bigalloc(MAX(n, 1) * sizeof(PpsimOpPos));
    for (int d = 0; d < sched->n_devices; d++)
        if (!index_check_syncs(sched, d, error))
            return NULL;
    for (int d = 0; d < sched->n_devices; d++)
        for (int list = 0; list < 2; list++) {
            GArray *ops = index_list(sched, d, list);
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                if (!index_check_op(sched, d, list, op, error))
                    return NULL;
                if (list == 1 && !index_check_anchor(sched, d, i, op, error))
                    return NULL;
                if (G_UNLIKELY(idx->table[op->kind] == NULL)) {
                    gsize slots = index_slots(sched, op->kind);
                    idx->table[op->kind] = ppsim_bigalloc(slots * sizeof(gint32));
                    memset(idx->table[op->kind], 0xff, slots * sizeof(gint32)); /* -1 */
                }
                gint32 *slot = &idx->table[op->kind][index_slot(sched, op)];
                if (*slot >= 0) {
                    g_autoptr(GString) what = g_string_new(NULL);
                    ppsim_op_describe(what, op);
                    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                                "op '%s' appears twice (device %d)", what->str, d);
                    return NULL;
                }
                guint32 id = idx->base[2 * d + list] + i;
                *slot = id;
                idx->pos[id] = (PpsimOpPos){d, list, i};
            }
        }
    return g_steal_pointer(&idx);
}

void
ppsim_schedule_index_free(PpsimScheduleIndex *idx)
{
    if (idx == NULL)
        return;
    for (int k = 0; k < PPSIM_OP_N_KINDS; k++)
        g_free(idx->table[k]);
    g_free(idx->base);
    g_free(idx->pos);
    g_free(idx);
}

guint32
ppsim_schedule_index_n_ops(const PpsimScheduleIndex *idx)
{
    return idx->n_ops;
}

gint64
ppsim_schedule_index_find(const PpsimScheduleIndex *idx, PpsimOpKind kind, int stage,
                          int microbatch)
{
    const PpsimSchedule *sched = idx->sched;
    if (idx->table[kind] == NULL || stage < 0 || stage >= sched->n_stages)
        return -1;
    if (ppsim_op_kind_per_stage(kind))
        return idx->table[kind][stage];
    if (microbatch < 0 || microbatch >= sched->n_microbatches)
        return -1;
    return idx->table[kind][(gsize)stage * sched->n_microbatches + microbatch];
}

guint32
ppsim_schedule_index_id(const PpsimScheduleIndex *idx, const PpsimOpPos *pos)
{
    return idx->base[2 * pos->device + pos->list] + pos->index;
}

void
ppsim_schedule_index_pos(const PpsimScheduleIndex *idx, guint32 id, PpsimOpPos *out)
{
    *out = idx->pos[id];
}

int
ppsim_schedule_index_device(const PpsimScheduleIndex *idx, guint32 id)
{
    return idx->pos[id].device;
}

guint32
ppsim_schedule_index_base(const PpsimScheduleIndex *idx, int device, int list)
{
    return idx->base[2 * device + list];
}

const PpsimOp *
ppsim_schedule_index_op(const PpsimScheduleIndex *idx, guint32 id)
{
    const PpsimOpPos *pos = &idx->pos[id];
    return &g_array_index(index_list(idx->sched, pos->device, pos->list), PpsimOp, pos->index);
}

static void
dep_emit(gint64 from, guint32 to, PpsimDepKind kind, int boundary, PpsimDepFunc func, gpointer data)
{
    if (from >= 0)
        func((guint32)from, to, kind, boundary, data);
}

/* The dependencies whose consumer is op @id, @op, at index @index of device @device's list
 * @list (README "Semantics"). *@sync walks the device's copy_sync entries alongside its copy ops.
 */
static void
dep_of_op(const PpsimScheduleIndex *idx, guint32 id, const PpsimOp *op, int device, int list,
          guint index, guint *sync, PpsimDepFunc func, gpointer data)
{
    int s = op->stage, j = op->microbatch, last = idx->sched->n_stages - 1;
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        if (s > 0)
            dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_F, s - 1, j), id, PPSIM_DEP_ACTIVATION,
                     s - 1, func, data);
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_WRL, s, -1), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        break;
    case PPSIM_OP_B:
    case PPSIM_OP_BW:
        if (s < last) {
            gint64 up = ppsim_schedule_index_find(idx, PPSIM_OP_B, s + 1, j);
            if (up < 0)
                up = ppsim_schedule_index_find(idx, PPSIM_OP_BW, s + 1, j);
            dep_emit(up, id, PPSIM_DEP_GRADIENT, s, func, data);
        }
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_F, s, j), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_R, s, j), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_RL, s, j), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        break;
    case PPSIM_OP_W:
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_B, s, j), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        break;
    case PPSIM_OP_R:
    case PPSIM_OP_OFF:
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_F, s, j), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        break;
    case PPSIM_OP_RL:
        dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_OFF, s, j), id, PPSIM_DEP_LOCAL, s, func,
                 data);
        break;
    case PPSIM_OP_OPT:
    case PPSIM_OP_GOFF:
        for (int mb = 0; mb < idx->sched->n_microbatches; mb++) {
            gint64 w = ppsim_schedule_index_find(idx, PPSIM_OP_W, s, mb);
            if (w < 0)
                w = ppsim_schedule_index_find(idx, PPSIM_OP_BW, s, mb);
            dep_emit(w, id, PPSIM_DEP_LOCAL, s, func, data);
        }
        if (op->kind == PPSIM_OP_OPT) /* T-Offload: the CPU step needs the gradients */
            dep_emit(ppsim_schedule_index_find(idx, PPSIM_OP_GOFF, s, -1), id, PPSIM_DEP_LOCAL, s,
                     func, data);
        break;
    case PPSIM_OP_WRL:
        break;
    default:
        g_assert_not_reached();
    }
    /* a copy op's anchor: it waits for a compute op of its device to end */
    if (list == 1) {
        gint32 after = g_array_index(idx->sched->copy_after[device], gint32, index);
        if (after >= 0)
            func(idx->base[2 * device] + after, id, PPSIM_DEP_LOCAL, s, data);
        const GArray *syncs = idx->sched->copy_sync[device];
        for (; *sync < syncs->len; ++*sync) {
            const PpsimCopySync *e = &g_array_index(syncs, PpsimCopySync, *sync);
            if (e->op != (gint32)index)
                break;
            func(idx->base[2 * e->device + 1] + e->index, id, PPSIM_DEP_SYNC, s, data);
        }
    }
}

void
ppsim_schedule_foreach_dep(const PpsimScheduleIndex *idx, PpsimDepFunc func, gpointer user_data)
{
    /* consumers in id order: device-major, compute list first, walked without lookups */
    guint32 id = 0;
    for (int d = 0; d < idx->sched->n_devices; d++) {
        guint sync = 0;
        for (int list = 0; list < 2; list++) {
            const GArray *ops = index_list(idx->sched, d, list);
            for (guint i = 0; i < ops->len; i++, id++)
                dep_of_op(idx, id, &g_array_index(ops, PpsimOp, i), d, list, i, &sync, func,
                          user_data);
        }
    }
    g_assert(id == idx->n_ops);
}
