/* v-queue.h: the candidate simulator's devices in (free time, id) order (internal to
 * v-run.c): which device decides next and when anything may next change for a waiting one,
 * without scanning every device.
 *
 * A sorted array of the devices still running, each with a "stuck" flag: the next device is
 * the first one not stuck (stuck devices are few and wait only until some device runs an
 * op); the next time after x is a short scan from the device's place (ties are few), then
 * a binary search. A key only grows, so a device moves right past the devices it overtakes.
 * The keys live in the caller's array. The calls made per step are inline. */
#pragma once

#include "util/units.h"

#include <string.h>

typedef struct {
    const PpsimTime *key; /* [p], borrowed */
    int *order;           /* [p] device ids by (key, id); the first @n are running */
    gboolean *stuck;      /* [p] */
    int *stuck_ids;       /* [p] the stuck devices, @n_stuck of them */
    int n, n_stuck;
} PpsimVQueue;

void ppsim_vqueue_init(PpsimVQueue *q, const PpsimTime *key, int p);
void ppsim_vqueue_clear(PpsimVQueue *q);
/* The index in @order of the running device with the smallest (key, id) that is not stuck,
 * -1 when none. */
static inline int ppsim_vqueue_top(const PpsimVQueue *q);
/* Restores the order after the key of the device at index @i grew (usually past a few
 * devices: those are stepped over first, the rest is a binary search). */
static inline void ppsim_vqueue_moved(PpsimVQueue *q, int i);
/* The device at index @i has finished: it leaves the queue. */
void ppsim_vqueue_remove(PpsimVQueue *q, int i);
void ppsim_vqueue_set_stuck(PpsimVQueue *q, int d);
void ppsim_vqueue_unstick_all(PpsimVQueue *q);
/* The smallest key > @x of a running device (stuck ones included), -1 when none, where @x
 * is the key of the device at index @i (the search starts there: ties are usually few). */
static inline PpsimTime ppsim_vqueue_next_after_at(const PpsimVQueue *q, int i, PpsimTime x);

/* ---- the hot calls, inline -------------------------------------------------------- */

/* Whether device @a comes before device @b: (key, id) order. */
static inline gboolean
ppsim_vqueue_less(const PpsimVQueue *q, int a, int b)
{
    return q->key[a] < q->key[b] || (q->key[a] == q->key[b] && a < b);
}

static inline int
ppsim_vqueue_top(const PpsimVQueue *q)
{
    for (int i = 0; i < q->n; i++)
        if (!q->stuck[q->order[i]])
            return i;
    return -1;
}

static inline void
ppsim_vqueue_moved(PpsimVQueue *q, int i)
{
    int d = q->order[i], lo = i + 1, hi = q->n;
    for (int k = 0; k < 8 && lo < hi && ppsim_vqueue_less(q, q->order[lo], d); k++)
        lo++; /* the devices it passes are usually few */
    if (lo < hi && ppsim_vqueue_less(q, q->order[lo], d)) {
        while (lo < hi) { /* first index past i whose device stays ahead of d */
            int mid = lo + (hi - lo) / 2;
            if (ppsim_vqueue_less(q, q->order[mid], d))
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    int j = lo - 1; /* d's new index */
    memmove(q->order + i, q->order + i + 1, (gsize)(j - i) * sizeof(int));
    q->order[j] = d;
}

static inline PpsimTime
ppsim_vqueue_next_after_at(const PpsimVQueue *q, int i, PpsimTime x)
{
    int lo = i + 1; /* every device before i has a key <= x */
    for (int k = 0; k < 8 && lo < q->n; k++, lo++)
        if (q->key[q->order[lo]] > x)
            return q->key[q->order[lo]];
    int hi = q->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (q->key[q->order[mid]] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < q->n ? q->key[q->order[lo]] : -1;
}
