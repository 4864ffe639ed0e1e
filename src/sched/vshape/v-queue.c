/* v-queue.c: see v-queue.h. */
#include "sched/vshape/v-queue.h"

#include <string.h>

static inline gboolean
vq_less(const PpsimVQueue *q, int a, int b)
{
    return q->key[a] < q->key[b] || (q->key[a] == q->key[b] && a < b);
}

void
ppsim_vqueue_init(PpsimVQueue *q, const PpsimTime *key, int p)
{
    q->key = key;
    q->order = g_new(int, p);
    q->stuck = g_new0(gboolean, p);
    q->stuck_ids = g_new(int, p);
    q->n = p;
    q->n_stuck = 0;
    for (int d = 0; d < p; d++)
        q->order[d] = d;
    for (int i = 1; i < p; i++) { /* insertion sort: the keys usually start equal */
        int d = q->order[i], j = i;
        for (; j > 0 && vq_less(q, d, q->order[j - 1]); j--)
            q->order[j] = q->order[j - 1];
        q->order[j] = d;
    }
}

void
ppsim_vqueue_clear(PpsimVQueue *q)
{
    g_free(q->order);
    g_free(q->stuck);
    g_free(q->stuck_ids);
}

int
ppsim_vqueue_top(const PpsimVQueue *q)
{
    for (int i = 0; i < q->n; i++)
        if (!q->stuck[q->order[i]])
            return i;
    return -1;
}

void
ppsim_vqueue_moved(PpsimVQueue *q, int i)
{
    int d = q->order[i], lo = i + 1, hi = q->n;
    while (lo < hi) { /* first index past i whose device stays ahead of d */
        int mid = lo + (hi - lo) / 2;
        if (vq_less(q, q->order[mid], d))
            lo = mid + 1;
        else
            hi = mid;
    }
    int j = lo - 1; /* d's new index */
    memmove(q->order + i, q->order + i + 1, (gsize)(j - i) * sizeof(int));
    q->order[j] = d;
}

void
ppsim_vqueue_remove(PpsimVQueue *q, int i)
{
    memmove(q->order + i, q->order + i + 1, (gsize)(q->n - i - 1) * sizeof(int));
    q->n--;
}

void
ppsim_vqueue_set_stuck(PpsimVQueue *q, int d)
{
    q->stuck[d] = TRUE;
    q->stuck_ids[q->n_stuck++] = d;
}

void
ppsim_vqueue_unstick_all(PpsimVQueue *q)
{
    for (; q->n_stuck > 0; q->n_stuck--)
        q->stuck[q->stuck_ids[q->n_stuck - 1]] = FALSE;
}

PpsimTime
ppsim_vqueue_next_after(const PpsimVQueue *q, PpsimTime x)
{
    int lo = 0, hi = q->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (q->key[q->order[mid]] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < q->n ? q->key[q->order[lo]] : -1;
}
