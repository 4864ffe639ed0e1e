/* stream-plan.c: see stream-plan.h.
 *
 * The intervals live in a gap buffer: a sorted array with a hole at the last insertion
 * point. The planner inserts offloads left to right and reloads right to left, so the hole
 * moves little between insertions and an insertion costs about O(1) instead of moving the
 * tail of the array; lookups are binary searches over the logical order.
 */
#include "sched/offload/stream-plan.h"

#include <string.h>

typedef struct {
    PpsimTime a, b;
} Interval;

struct PpsimStreamPlan {
    Interval *v; /* capacity @cap; [gap, gap + cap - n) is the hole */
    gsize n, cap, gap;
    PpsimTime maxlen; /* longest interval taken: an interval starting before t - maxlen
                       * ends by t */
};

PpsimStreamPlan *
ppsim_stream_plan_new(void)
{
    return g_new0(PpsimStreamPlan, 1);
}

void
ppsim_stream_plan_free(PpsimStreamPlan *pl)
{
    if (pl == NULL)
        return;
    g_free(pl->v);
    g_free(pl);
}

static inline const Interval *
plan_at(const PpsimStreamPlan *pl, gsize k)
{
    return &pl->v[k < pl->gap ? k : k + (pl->cap - pl->n)];
}

/* First index whose start is >= @t (n when none). */
static gsize
plan_lower_bound(const PpsimStreamPlan *pl, PpsimTime t)
{
    gsize lo = 0, hi = pl->n;
    while (lo < hi) {
        gsize mid = lo + (hi - lo) / 2;
        if (plan_at(pl, mid)->a < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void
plan_move_gap(PpsimStreamPlan *pl, gsize k)
{
    gsize hole = pl->cap - pl->n;
    if (k < pl->gap)
        memmove(pl->v + k + hole, pl->v + k, (pl->gap - k) * sizeof(Interval));
    else if (k > pl->gap)
        memmove(pl->v + pl->gap, pl->v + pl->gap + hole, (k - pl->gap) * sizeof(Interval));
    pl->gap = k;
}

void
ppsim_stream_plan_take(PpsimStreamPlan *pl, PpsimTime start, PpsimTime end)
{
    gsize k = plan_lower_bound(pl, start);
    if (pl->n == pl->cap) {
        plan_move_gap(pl, pl->n); /* hole (empty) at the end, then grow it */
        pl->cap = MAX(16, 2 * pl->cap);
        pl->v = g_renew(Interval, pl->v, pl->cap);
    }
    plan_move_gap(pl, k);
    pl->v[pl->gap++] = (Interval){start, end};
    pl->n++;
    pl->maxlen = MAX(pl->maxlen, end - start);
}

PpsimTime
ppsim_stream_plan_earliest(const PpsimStreamPlan *pl, PpsimTime t, PpsimTime len, PpsimTime by)
{
    /* A scan from the first interval would skip every interval starting before
     * t - maxlen (it ends by t), so start there. */
    for (gsize k = plan_lower_bound(pl, t - pl->maxlen); k < pl->n; k++) {
        const Interval *iv = plan_at(pl, k);
        if (iv->b <= t)
            continue;
        if (iv->a >= t + len)
            break;
        t = iv->b;
        if (t > by)
            break; /* t only moves up from here */
    }
    return t;
}

PpsimTime
ppsim_stream_plan_latest(const PpsimStreamPlan *pl, PpsimTime lo, PpsimTime end, PpsimTime len)
{
    PpsimTime t_end = end;
    /* A scan from the last interval would skip every interval starting at @end or later. */
    for (gsize k = plan_lower_bound(pl, end); k > 0; k--) {
        const Interval *iv = plan_at(pl, k - 1);
        if (iv->a >= t_end)
            continue;
        if (iv->b <= t_end - len)
            break;
        t_end = MIN(t_end, iv->a);
        if (t_end - len < lo)
            return -1; /* t_end only moves down from here */
    }
    return t_end - len >= lo ? t_end - len : -1;
}
