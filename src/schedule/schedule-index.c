/* schedule-index.c: op lookup tables and the dependency rules; see schedule-index.h.
 *
 * One int32 table of S*m entries per op kind (and S for OPT) maps (stage, microbatch) to a
 * dense op id: O(1) lookups, 4 bytes per slot, built in one pass. A kind the schedule never
 * uses gets no table, and looking it up costs no memory access (most schedules use two or
 * three of the eight kinds).
 *
 * From an id back to its place: ids are device-major, so (device, list) is the last list
 * whose first id is <= id, found by binary search over the 2p + 1 list starts. Callers that
 * look up many ids (the event replay's graph builder) get a device-per-id table instead,
 * built on the INDEX_LAZY_LOOKUPS-th lookup; the fast replay (sim-fast.c) never asks, and
 * never pays for it.
 */
#include "schedule/schedule-index-inline.h"
#include "util/bigalloc.h"
#include "util/ppsim-error.h"

#include <string.h>

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
index_check_syncs(PpsimScheduleIndex *idx, const PpsimSchedule *sched, int d, GError **error)
{
    const GArray *syncs = sched->copy_sync[d];
    guint run = 0;
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
        if (problem == NULL) {
            run = k > 0 && g_array_index(syncs, PpsimCopySync, k - 1).op == e->op ? run + 1 : 1;
            idx->max_syncs = MAX(idx->max_syncs, run);
            continue;
        }
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "device %d: cross-device wait of copy op %d on copy op %d of device %d %s", d,
                    e->op, e->index, e->device, problem);
        return FALSE;
    }
    return TRUE;
}

static gboolean
index_check_waits(PpsimScheduleIndex *idx, const PpsimSchedule *sched, int d, GError **error)
{
    const GArray *waits = sched->compute_wait[d];
    guint run = 0;
    for (guint k = 0; k < waits->len; k++) {
        const PpsimComputeWait *e = &g_array_index(waits, PpsimComputeWait, k);
        const char *problem = NULL;
        if (e->op < 0 || e->op >= (gint32)sched->compute[d]->len)
            problem = "names no compute op of the device";
        else if (k > 0 && g_array_index(waits, PpsimComputeWait, k - 1).op > e->op)
            problem = "is out of order (waits must be sorted by compute op)";
        else if (e->index < 0 || e->index >= (gint32)sched->copy[d]->len)
            problem = "names a copy op the device does not have";
        if (problem == NULL) {
            run = k > 0 && g_array_index(waits, PpsimComputeWait, k - 1).op == e->op ? run + 1 : 1;
            idx->max_waits = MAX(idx->max_waits, run);
            continue;
        }
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "device %d: wait of compute op %d on copy op %d %s", d, e->op, e->index,
                    problem);
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
    for (int d = 0; d < sched->n_devices; d++)
        if (!index_check_syncs(idx, sched, d, error) || !index_check_waits(idx, sched, d, error))
            return NULL;
    guint32 S = (guint32)sched->n_stages, m = (guint32)sched->n_microbatches;
    for (int d = 0; d < sched->n_devices; d++)
        for (int list = 0; list < 2; list++) {
            GArray *ops = index_list(sched, d, list);
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                /* the common compute op (F, B, W, BW, R: the kinds up to R) in range and in
                 * place; anything else is checked (and named) by the functions */
                G_STATIC_ASSERT(PPSIM_OP_F == 0 && PPSIM_OP_B == 1 && PPSIM_OP_W == 2 &&
                                PPSIM_OP_BW == 3 && PPSIM_OP_R == 4);
                gboolean plain = list == 0 && op->kind <= PPSIM_OP_R && (guint32)op->stage < S &&
                                 (guint32)op->microbatch < m && sched->stage_device[op->stage] == d;
                if (!plain && !index_check_op(sched, d, list, op, error))
                    return NULL;
                idx->flags |= op->flags;
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
                *slot = (gint32)(idx->base[2 * d + list] + i);
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
    g_free(idx->device);
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

/* The device of op @id: binary search over the list starts (the last list starting at or
 * before @id holds it: an empty list starts where the next one does), or the table. */
static int
index_device_of(const PpsimScheduleIndex *idx_c, guint32 id)
{
    g_assert(id < idx_c->n_ops);
    if (G_LIKELY(idx_c->device != NULL))
        return (int)idx_c->device[id];
    PpsimScheduleIndex *idx = (PpsimScheduleIndex *)idx_c; /* the cache (see the struct) */
    if (++idx->lookups >= INDEX_LAZY_LOOKUPS) {
        idx->device = ppsim_bigalloc(MAX(idx->n_ops, 1) * sizeof(guint32));
        for (int d = 0; d < idx->sched->n_devices; d++)
            for (guint32 k = idx->base[2 * d]; k < idx->base[2 * d + 2]; k++)
                idx->device[k] = (guint32)d;
        return (int)idx->device[id];
    }
    guint lo = 0, hi = 2 * (guint)idx->sched->n_devices; /* base[lo] <= id < base[hi] */
    while (hi - lo > 1) {
        guint mid = (lo + hi) / 2;
        if (idx->base[mid] <= id)
            lo = mid;
        else
            hi = mid;
    }
    return (int)(lo / 2);
}

void
ppsim_schedule_index_pos(const PpsimScheduleIndex *idx, guint32 id, PpsimOpPos *out)
{
    int d = index_device_of(idx, id);
    int list = id >= idx->base[2 * d + 1];
    *out = (PpsimOpPos){d, list, (gint32)(id - idx->base[2 * d + list])};
}

int
ppsim_schedule_index_device(const PpsimScheduleIndex *idx, guint32 id)
{
    return index_device_of(idx, id);
}

guint32
ppsim_schedule_index_base(const PpsimScheduleIndex *idx, int device, int list)
{
    return idx->base[2 * device + list];
}

const PpsimOp *
ppsim_schedule_index_op(const PpsimScheduleIndex *idx, guint32 id)
{
    PpsimOpPos pos;
    ppsim_schedule_index_pos(idx, id, &pos);
    return &g_array_index(index_list(idx->sched, pos.device, pos.list), PpsimOp, pos.index);
}

gboolean
ppsim_schedule_index_has_kind(const PpsimScheduleIndex *idx, PpsimOpKind kind)
{
    return idx->table[kind] != NULL;
}

guint
ppsim_schedule_index_flags(const PpsimScheduleIndex *idx)
{
    return idx->flags;
}

const gint32 *
ppsim_schedule_index_table(const PpsimScheduleIndex *idx, PpsimOpKind kind)
{
    return idx->table[kind];
}

guint
ppsim_schedule_index_max_deps(const PpsimScheduleIndex *idx)
{
    /* OPT: a W or BW per microbatch, and GOFF; a copy op: its anchor and its waits; the F
     * half of an F&B pair: its own two and its BW half's four; a compute op: its waits on
     * copy ops */
    return (guint)MAX(idx->sched->n_microbatches + 1, 6) + 1 + idx->max_syncs + idx->max_waits;
}

guint
ppsim_schedule_index_deps(const PpsimScheduleIndex *idx, guint32 id, const PpsimOpPos *pos,
                          const PpsimOp *op, PpsimDep *out)
{
    (void)id;
    return ppsim_schedule_index_deps_inline(idx, pos, op, out);
}

void
ppsim_schedule_foreach_dep(const PpsimScheduleIndex *idx, PpsimDepFunc func, gpointer user_data)
{
    /* consumers in id order: device-major, compute list first, walked without lookups */
    g_autofree PpsimDep *deps = g_new(PpsimDep, ppsim_schedule_index_max_deps(idx));
    guint32 id = 0;
    for (int d = 0; d < idx->sched->n_devices; d++) {
        for (int list = 0; list < 2; list++) {
            const GArray *ops = index_list(idx->sched, d, list);
            for (guint i = 0; i < ops->len; i++, id++) {
                PpsimOpPos pos = {d, list, (gint32)i};
                guint n =
                    ppsim_schedule_index_deps(idx, id, &pos, &g_array_index(ops, PpsimOp, i), deps);
                for (guint k = 0; k < n; k++)
                    func(deps[k].from, id, (PpsimDepKind)deps[k].kind, deps[k].boundary, user_data);
            }
        }
    }
    g_assert(id == idx->n_ops);
}
