/* schedule-csv-write.c: writing schedules as PyTorch pipelining CSV; the format is described in
 * schedule-csv.c, which reads it back. */
#include "schedule/schedule.h"

static const char *
csv_kind_code(const PpsimOp *op)
{
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        return "F";
    case PPSIM_OP_B:
        return "I";
    case PPSIM_OP_W:
        return "W";
    case PPSIM_OP_BW:
        return "B";
    case PPSIM_OP_R:
        return "R";
    case PPSIM_OP_OFF:
        return "O";
    case PPSIM_OP_RL:
        return "L";
    case PPSIM_OP_OPT:
        return (op->flags & PPSIM_OP_FLAG_CPU) ? "SC" : "S";
    case PPSIM_OP_GOFF:
        return "OG";
    case PPSIM_OP_WRL:
        return "LW";
    default:
        g_assert_not_reached();
    }
}

static void
csv_append_ops(GString *out, const GArray *ops, const GArray *after, const GArray *syncs,
               const GArray *waits, gboolean *first)
{
    guint k = 0, kw = 0; /* cursors into @syncs and @waits, sorted by op */
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        gboolean pair_half = i > 0 && op->kind == PPSIM_OP_BW &&
                             (op->flags & PPSIM_OP_FLAG_OVERLAP) &&
                             (g_array_index(ops, PpsimOp, i - 1).flags & PPSIM_OP_FLAG_OVERLAP);
        if (pair_half) /* the BW half of an F&B pair: in the F's cell */
            g_string_append_c(out, '+');
        else if (!*first)
            g_string_append_c(out, ',');
        *first = FALSE;
        g_string_append_printf(out, "%d%s", op->stage, csv_kind_code(op));
        if (!ppsim_op_kind_per_stage(op->kind))
            g_string_append_printf(out, "%d", op->microbatch);
        if ((op->kind == PPSIM_OP_R || op->kind == PPSIM_OP_WRL) && op->share != 0)
            g_string_append_printf(out, "%%%d", op->share);
        /* a compute op's waits on copy ops; the format has one per cell, so several
         * collapse to the latest (the copy list runs in order) */
        gint32 wait = -1;
        for (; waits != NULL && kw < waits->len; kw++) {
            const PpsimComputeWait *e = &g_array_index(waits, PpsimComputeWait, kw);
            if (e->op != (gint32)i)
                break;
            wait = MAX(wait, e->index);
        }
        if (wait >= 0)
            g_string_append_printf(out, "&%d", wait);
        if (after != NULL && g_array_index(after, gint32, i) >= 0)
            g_string_append_printf(out, "@%d", g_array_index(after, gint32, i));
        for (; syncs != NULL && k < syncs->len; k++) {
            const PpsimCopySync *e = &g_array_index(syncs, PpsimCopySync, k);
            if (e->op != (gint32)i)
                break;
            g_string_append_printf(out, "^%d.%d", e->device, e->index);
        }
    }
}

GString *
ppsim_schedule_to_csv(const PpsimSchedule *sched)
{
    GString *out = g_string_new(NULL);
    for (int d = 0; d < sched->n_devices; d++) {
        gboolean first = TRUE;
        csv_append_ops(out, sched->compute[d], NULL, NULL, sched->compute_wait[d], &first);
        if (sched->copy[d]->len > 0) {
            g_string_append(out, first ? "|" : ",|");
            first = FALSE;
            csv_append_ops(out, sched->copy[d], sched->copy_after[d], sched->copy_sync[d], NULL,
                           &first);
        }
        g_string_append_c(out, '\n');
    }
    return out;
}
