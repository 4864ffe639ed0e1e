/* v-queue.c: see v-queue.h. */
#include "sched/vshape/v-queue.h"

#include <string.h>

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
        for (; j > 0 && ppsim_vqueue_less(q, d, q->order[j - 1]); j--)
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
