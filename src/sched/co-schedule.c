/* co-schedule.c: cross-device waits between the copy streams of devices sharing a host link
 * ([PO] App. D); see co-schedule.h.
 *
 * [PO] measured, on A100 servers where two GPUs share a PCIe switch, that the two GPUs'
 * offloads and reloads interfere, and schedules them "synchronized interleaved": the
 * partners alternate D2H and H2D starting with complementary directions, with a
 * cross-device event before each transfer (App. D Table 3; the authors' reply to the
 * reviews: "if the GPUs have independent PCIe connections, we schedule offload/reload
 * passes independently"). The paper gives no algorithm for a pipeline's irregular transfer
 * sequences; the rounds here generalise the alternation: in the steady state each device
 * alternates one offload and one reload ([PO] §4.2), and the rounds pair one device's
 * offload with its partner's reload, half a slot apart.
 */
#include "sched/co-schedule.h"

#include <stdlib.h>
#include <string.h>

/* A transfer of a group, in the order the rounds are formed. */
typedef struct {
    PpsimTime start;
    guint32 rank;
    gint32 device, index;
    gboolean reload; /* direction: H2D (RL) or D2H (OFF) */
} Transfer;

static int
transfer_cmp(const void *a, const void *b)
{
    const Transfer *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Whether @t may join @round (its @n transfers) under @mode. */
static gboolean
round_admits(const Transfer *round, int n, const Transfer *t, PpsimCoSchedule mode)
{
    if (n == 0)
        return FALSE;
    for (int k = 0; k < n; k++) {
        if (round[k].device == t->device)
            return FALSE;
        gboolean same = round[k].reload == t->reload;
        if (mode == PPSIM_CO_SYNC_INTERLEAVED ? same : !same)
            return FALSE;
    }
    return TRUE;
}

/* Forms the rounds of one group's transfers @ts (sorted) and adds the waits. A round holds
 * at most one transfer per device. */
static void
co_group(PpsimSchedule *sched, const GArray *ts, PpsimCoSchedule mode)
{
    int cap = sched->n_devices;
    g_autofree Transfer *prev = g_new(Transfer, cap), *cur = g_new(Transfer, cap);
    int n_prev = 0, n_cur = 0;
    for (guint i = 0; i < ts->len; i++) {
        const Transfer *t = &g_array_index(ts, Transfer, i);
        if (!round_admits(cur, n_cur, t, mode) && n_cur > 0) {
            Transfer *swap = prev;
            prev = cur;
            cur = swap;
            n_prev = n_cur;
            n_cur = 0;
        }
        cur[n_cur++] = *t;
        for (int k = 0; k < n_prev; k++)
            if (prev[k].device != t->device)
                ppsim_schedule_add_copy_sync(sched, t->device, t->index, prev[k].device,
                                             prev[k].index);
    }
}

/* Each group's transfers (of two or more devices, two or more transfers), sorted. */
struct PpsimCoPlan {
    GPtrArray *groups; /* GArray of Transfer */
};

void
ppsim_co_plan_free(PpsimCoPlan *plan)
{
    if (plan == NULL)
        return;
    g_ptr_array_unref(plan->groups);
    g_free(plan);
}

PpsimCoPlan *
ppsim_co_plan_new(const PpsimSchedule *sched, const PpsimCostEstimates *costs, const int *group,
                  GError **error)
{
    g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(sched, error);
    if (idx == NULL)
        return NULL;
    guint32 n = ppsim_schedule_index_n_ops(idx);
    g_autofree PpsimTime *ready = g_new(PpsimTime, MAX(n, 1));
    g_autofree PpsimTime *end = g_new(PpsimTime, MAX(n, 1));
    /* the topological ranks only break ties of start times: asked for only if there are */
    if (!ppsim_schedule_estimate(sched, idx, costs, ready, end, NULL, error))
        return NULL;
    PpsimCoPlan *plan = g_new0(PpsimCoPlan, 1);
    plan->groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    int p = sched->n_devices;
    g_autofree gboolean *done = g_new0(gboolean, p);
    gboolean ties = FALSE;
    for (int d0 = 0; d0 < p; d0++) {
        if (done[d0])
            continue;
        g_autoptr(GArray) ts = g_array_new(FALSE, FALSE, sizeof(Transfer));
        int members = 0;
        for (int d = d0; d < p; d++) {
            if (group[d] != group[d0])
                continue;
            done[d] = TRUE;
            members++;
            guint32 base = ppsim_schedule_index_base(idx, d, 1);
            for (guint i = 0; i < sched->copy[d]->len; i++) {
                const PpsimOp *op = &g_array_index(sched->copy[d], PpsimOp, i);
                Transfer t = {ready[base + i], 0, d, (gint32)i, op->kind == PPSIM_OP_RL};
                g_array_append_val(ts, t);
            }
        }
        if (members < 2 || ts->len < 2)
            continue;
        qsort(ts->data, ts->len, sizeof(Transfer), transfer_cmp);
        for (guint i = 1; i < ts->len && !ties; i++)
            ties = g_array_index(ts, Transfer, i - 1).start == g_array_index(ts, Transfer, i).start;
        g_ptr_array_add(plan->groups, g_steal_pointer(&ts));
    }
    if (ties) { /* the same start times, and each op's place in a topological order */
        g_autofree guint32 *rank = g_new(guint32, MAX(n, 1));
        if (!ppsim_schedule_estimate(sched, idx, costs, ready, end, rank, error)) {
            ppsim_co_plan_free(plan);
            return NULL;
        }
        for (guint g = 0; g < plan->groups->len; g++) {
            GArray *ts = g_ptr_array_index(plan->groups, g);
            for (guint i = 0; i < ts->len; i++) {
                Transfer *t = &g_array_index(ts, Transfer, i);
                t->rank = rank[ppsim_schedule_index_base(idx, t->device, 1) + (guint32)t->index];
            }
            qsort(ts->data, ts->len, sizeof(Transfer), transfer_cmp);
        }
    }
    return plan;
}

void
ppsim_co_plan_apply(const PpsimCoPlan *plan, PpsimSchedule *sched, PpsimCoSchedule mode)
{
    if (mode == PPSIM_CO_INDEPENDENT)
        return;
    for (guint g = 0; g < plan->groups->len; g++)
        co_group(sched, g_ptr_array_index(plan->groups, g), mode);
}

gboolean
ppsim_co_schedule(PpsimSchedule *sched, const PpsimCostEstimates *costs, const int *group,
                  PpsimCoSchedule mode, GError **error)
{
    if (mode == PPSIM_CO_INDEPENDENT)
        return TRUE;
    g_autoptr(PpsimCoPlan) plan = ppsim_co_plan_new(sched, costs, group, error);
    if (plan == NULL)
        return FALSE;
    ppsim_co_plan_apply(plan, sched, mode);
    return TRUE;
}
