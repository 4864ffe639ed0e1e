/* op-eval.c: estimated timeline and activation peaks of a schedule; see op-eval.h. */
#include "sched/optpipe/op-eval.h"
#include "sched/co-schedule.h"
#include "schedule/schedule-index.h"

#include <stdlib.h>

typedef struct {
    PpsimTime t;
    int order; /* 0 compute free, 1 copy free, 2 allocation */
    gint64 delta;
} MemEvent;

static int
mem_event_cmp(const void *a, const void *b)
{
    const MemEvent *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->order - y->order;
}

/* The memory events of op @op (starting at @st, ending at @en) appended to @ev. */
static void
eval_op_events(const PpsimCostEstimates *c, const PpsimOp *op, PpsimTime st, PpsimTime en,
               GArray *ev)
{
    const PpsimStageEstimate *s = &c->stage[op->stage];
    MemEvent e[2];
    int n = 0;
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        e[n++] = (MemEvent){st, 2, s->act};
        break;
    case PPSIM_OP_B:
        e[n++] = (MemEvent){en, 0, -(s->act - s->act_w)};
        break;
    case PPSIM_OP_W:
        e[n++] = (MemEvent){en, 0, -s->act_w};
        break;
    case PPSIM_OP_BW:
        e[n++] = (MemEvent){en, 0, -s->act};
        break;
    case PPSIM_OP_OFF:
        e[n++] = (MemEvent){en, 1, -s->act};
        break;
    case PPSIM_OP_RL:
        e[n++] = (MemEvent){st, 2, s->act};
        break;
    default:
        break;
    }
    g_array_append_vals(ev, e, n);
}

gboolean
ppsim_op_eval(const PpsimSchedule *sched, const PpsimCostEstimates *costs, const gint64 *limit,
              gint64 *peak, PpsimOpEval *out, GError **error)
{
    g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(sched, error);
    if (idx == NULL)
        return FALSE;
    guint32 n = ppsim_schedule_index_n_ops(idx);
    g_autofree PpsimTime *st = g_new(PpsimTime, n + 1), *en = g_new(PpsimTime, n + 1);
    if (!ppsim_schedule_estimate(sched, idx, costs, st, en, NULL, error))
        return FALSE;
    *out = (PpsimOpEval){.fits = TRUE};
    for (guint32 id = 0; id < n; id++)
        out->makespan_ps = MAX(out->makespan_ps, en[id]);
    for (int d = 0; d < sched->n_devices; d++) {
        guint32 b = ppsim_schedule_index_base(idx, d, 0), len = sched->compute[d]->len;
        if (len > 0) /* a list runs in order: its first op starts first, its last ends last */
            out->span_ps = MAX(out->span_ps, en[b + len - 1] - st[b]);
        for (guint32 k = 0; k < len; k++)
            out->start_sum_ps += st[b + k];
    }
    /* a list's ops run one after another, so each list's events come in time order (but for
     * ops of no duration): merge the two lists' instead of sorting them together */
    g_autoptr(GArray) ev0 = g_array_new(FALSE, FALSE, sizeof(MemEvent));
    g_autoptr(GArray) ev1 = g_array_new(FALSE, FALSE, sizeof(MemEvent));
    for (int d = 0; d < sched->n_devices; d++) {
        for (int list = 0; list < 2; list++) {
            GArray *ops = list == 0 ? sched->compute[d] : sched->copy[d];
            GArray *ev = list == 0 ? ev0 : ev1;
            g_array_set_size(ev, 0);
            guint32 base = ppsim_schedule_index_base(idx, d, list);
            for (guint i = 0; i < ops->len; i++)
                eval_op_events(costs, &g_array_index(ops, PpsimOp, i), st[base + i], en[base + i],
                               ev);
            for (guint k = 1; k < ev->len; k++)
                if (mem_event_cmp(&g_array_index(ev, MemEvent, k - 1),
                                  &g_array_index(ev, MemEvent, k)) > 0) {
                    qsort(ev->data, ev->len, sizeof(MemEvent), mem_event_cmp);
                    break;
                }
        }
        /* equal (time, order) events all free or all allocate: their order leaves the peak */
        gint64 cur = 0, top = 0;
        const MemEvent *a = (const MemEvent *)(const void *)ev0->data;
        const MemEvent *b = (const MemEvent *)(const void *)ev1->data;
        for (guint i = 0, j = 0; i < ev0->len || j < ev1->len;) {
            gboolean take_a = j == ev1->len || (i < ev0->len && mem_event_cmp(&a[i], &b[j]) <= 0);
            cur += take_a ? a[i++].delta : b[j++].delta;
            top = MAX(top, cur);
        }
        if (peak != NULL)
            peak[d] = top;
        out->peak_max = MAX(out->peak_max, top);
        if (limit != NULL && top > limit[d])
            out->fits = FALSE;
    }
    return TRUE;
}
