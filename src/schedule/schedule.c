/* schedule.c: construction and description of the schedule IR; see schedule.h. */
#include "schedule/schedule.h"

#include <string.h>

static const char *const kind_names[PPSIM_OP_N_KINDS] = {
    [PPSIM_OP_F] = "F",       [PPSIM_OP_B] = "B",     [PPSIM_OP_W] = "W",     [PPSIM_OP_BW] = "BW",
    [PPSIM_OP_R] = "R",       [PPSIM_OP_OPT] = "OPT", [PPSIM_OP_OFF] = "OFF", [PPSIM_OP_RL] = "RL",
    [PPSIM_OP_GOFF] = "GOFF", [PPSIM_OP_WRL] = "WRL",
};

const char *
ppsim_op_kind_name(PpsimOpKind kind)
{
    g_return_val_if_fail(kind < PPSIM_OP_N_KINDS, "?");
    return kind_names[kind];
}

void
ppsim_op_describe(GString *out, const PpsimOp *op)
{
    if (ppsim_op_kind_per_stage(op->kind))
        g_string_append_printf(out, "%s(s=%d)", ppsim_op_kind_name(op->kind), op->stage);
    else
        g_string_append_printf(out, "%s(s=%d, mb=%d)", ppsim_op_kind_name(op->kind), op->stage,
                               op->microbatch);
}

PpsimSchedule *
ppsim_schedule_new(int n_devices, int n_stages, int n_microbatches)
{
    g_return_val_if_fail(n_devices > 0 && n_stages > 0 && n_microbatches > 0, NULL);
    PpsimSchedule *sched = g_new0(PpsimSchedule, 1);
    sched->n_devices = n_devices;
    sched->n_stages = n_stages;
    sched->n_microbatches = n_microbatches;
    sched->stage_device = g_new(int, n_stages);
    for (int s = 0; s < n_stages; s++)
        sched->stage_device[s] = -1;
    sched->compute = g_new(GArray *, n_devices);
    sched->copy = g_new(GArray *, n_devices);
    sched->copy_after = g_new(GArray *, n_devices);
    sched->copy_sync = g_new(GArray *, n_devices);
    sched->compute_wait = g_new(GArray *, n_devices);
    for (int d = 0; d < n_devices; d++) {
        sched->compute[d] = g_array_new(FALSE, FALSE, sizeof(PpsimOp));
        sched->copy[d] = g_array_new(FALSE, FALSE, sizeof(PpsimOp));
        sched->copy_after[d] = g_array_new(FALSE, FALSE, sizeof(gint32));
        sched->copy_sync[d] = g_array_new(FALSE, FALSE, sizeof(PpsimCopySync));
        sched->compute_wait[d] = g_array_new(FALSE, FALSE, sizeof(PpsimComputeWait));
    }
    return sched;
}

static GArray *
array_copy(const GArray *a, guint elt)
{
    GArray *c = g_array_sized_new(FALSE, FALSE, elt, a->len);
    g_array_append_vals(c, a->data, a->len);
    return c;
}

PpsimSchedule *
ppsim_schedule_copy(const PpsimSchedule *sched)
{
    PpsimSchedule *c = g_new0(PpsimSchedule, 1);
    *c = *sched;
    c->stage_device = g_memdup2(sched->stage_device, sched->n_stages * sizeof(int));
    c->compute = g_new(GArray *, sched->n_devices);
    c->copy = g_new(GArray *, sched->n_devices);
    c->copy_after = g_new(GArray *, sched->n_devices);
    c->copy_sync = g_new(GArray *, sched->n_devices);
    c->compute_wait = g_new(GArray *, sched->n_devices);
    for (int d = 0; d < sched->n_devices; d++) {
        c->compute[d] = array_copy(sched->compute[d], sizeof(PpsimOp));
        c->copy[d] = array_copy(sched->copy[d], sizeof(PpsimOp));
        c->copy_after[d] = array_copy(sched->copy_after[d], sizeof(gint32));
        c->copy_sync[d] = array_copy(sched->copy_sync[d], sizeof(PpsimCopySync));
        c->compute_wait[d] = array_copy(sched->compute_wait[d], sizeof(PpsimComputeWait));
    }
    return c;
}

static gboolean
array_equal(const GArray *a, const GArray *b, gsize elt)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len * elt) == 0);
}

gboolean
ppsim_schedule_equal(const PpsimSchedule *a, const PpsimSchedule *b)
{
    if (a->n_devices != b->n_devices || a->n_stages != b->n_stages ||
        a->n_microbatches != b->n_microbatches || a->pipe_stages != b->pipe_stages ||
        memcmp(a->stage_device, b->stage_device, a->n_stages * sizeof(int)) != 0)
        return FALSE;
    /* PpsimOp and PpsimCopySync have no padding: their bytes are their fields */
    G_STATIC_ASSERT(sizeof(PpsimOp) == 12 && sizeof(PpsimCopySync) == 12 &&
                    sizeof(PpsimComputeWait) == 8);
    for (int d = 0; d < a->n_devices; d++)
        if (!array_equal(a->compute[d], b->compute[d], sizeof(PpsimOp)) ||
            !array_equal(a->copy[d], b->copy[d], sizeof(PpsimOp)) ||
            !array_equal(a->copy_after[d], b->copy_after[d], sizeof(gint32)) ||
            !array_equal(a->copy_sync[d], b->copy_sync[d], sizeof(PpsimCopySync)) ||
            !array_equal(a->compute_wait[d], b->compute_wait[d], sizeof(PpsimComputeWait)))
            return FALSE;
    return TRUE;
}

void
ppsim_schedule_free(PpsimSchedule *sched)
{
    if (sched == NULL)
        return;
    for (int d = 0; d < sched->n_devices; d++) {
        g_array_free(sched->compute[d], TRUE);
        g_array_free(sched->copy[d], TRUE);
        g_array_free(sched->copy_after[d], TRUE);
        g_array_free(sched->copy_sync[d], TRUE);
        g_array_free(sched->compute_wait[d], TRUE);
    }
    g_free(sched->compute);
    g_free(sched->copy);
    g_free(sched->copy_after);
    g_free(sched->copy_sync);
    g_free(sched->compute_wait);
    g_free(sched->stage_device);
    g_free(sched);
}

void
ppsim_schedule_map_plain(PpsimSchedule *sched)
{
    g_return_if_fail(sched->n_stages == sched->n_devices);
    for (int s = 0; s < sched->n_stages; s++)
        sched->stage_device[s] = s;
}

void
ppsim_schedule_map_interleaved(PpsimSchedule *sched)
{
    for (int s = 0; s < sched->n_stages; s++)
        sched->stage_device[s] = s % sched->n_devices;
}

void
ppsim_schedule_map_vshape(PpsimSchedule *sched)
{
    int p = sched->n_devices;
    g_return_if_fail(sched->n_stages == 2 * p);
    for (int s = 0; s < sched->n_stages; s++)
        sched->stage_device[s] = s < p ? s : 2 * p - 1 - s;
}

void
ppsim_schedule_map_bidirectional(PpsimSchedule *sched)
{
    ppsim_schedule_map_vshape(sched);
    sched->pipe_stages = sched->n_devices;
}

void
ppsim_schedule_push_copy(PpsimSchedule *sched, int device, PpsimOp op, int after)
{
    g_return_if_fail(device >= 0 && device < sched->n_devices);
    gint32 anchor = after;
    g_array_append_val(sched->copy[device], op);
    g_array_append_val(sched->copy_after[device], anchor);
}

void
ppsim_schedule_add_copy_sync(PpsimSchedule *sched, int device, int index, int other_device,
                             int other_index)
{
    g_return_if_fail(device >= 0 && device < sched->n_devices);
    GArray *syncs = sched->copy_sync[device];
    PpsimCopySync e = {index, other_device, other_index};
    guint at = syncs->len; /* after every entry of an index <= @index: stable */
    while (at > 0 && g_array_index(syncs, PpsimCopySync, at - 1).op > index)
        at--;
    g_array_insert_val(syncs, at, e);
}

void
ppsim_schedule_add_compute_wait(PpsimSchedule *sched, int device, int index, int copy_index)
{
    g_return_if_fail(device >= 0 && device < sched->n_devices);
    GArray *waits = sched->compute_wait[device];
    PpsimComputeWait e = {index, copy_index};
    guint at = waits->len; /* after every entry of an index <= @index: stable */
    while (at > 0 && g_array_index(waits, PpsimComputeWait, at - 1).op > index)
        at--;
    g_array_insert_val(waits, at, e);
}

void
ppsim_schedule_push_op(PpsimSchedule *sched, int device, PpsimOp op)
{
    g_return_if_fail(device >= 0 && device < sched->n_devices);
    if (ppsim_op_kind_is_copy(op.kind))
        ppsim_schedule_push_copy(sched, device, op, -1);
    else
        g_array_append_val(sched->compute[device], op);
}

void
ppsim_schedule_push(PpsimSchedule *sched, int device, PpsimOpKind kind, int stage, int microbatch)
{
    PpsimOp op = {.kind = kind,
                  .stage = stage,
                  .microbatch = ppsim_op_kind_per_stage(kind) ? -1 : microbatch};
    ppsim_schedule_push_op(sched, device, op);
}

gsize
ppsim_schedule_n_ops(const PpsimSchedule *sched)
{
    gsize n = 0;
    for (int d = 0; d < sched->n_devices; d++)
        n += sched->compute[d]->len + sched->copy[d]->len;
    return n;
}
