/* event-queue.h: a 4-ary min-heap of POD events ordered by (time, seq).
 *
 * seq is an insertion counter, so events at equal times come out in insertion order
 * (git's prio_queue): the simulation is deterministic by construction. O(log n) push/pop,
 * inline here as they are the engine's innermost loop.
 *
 * Events are stored inline (POD), so push/pop copy 40 bytes and never allocate once the
 * array has grown. The heap is small in practice (a few events per device). Its cost is in
 * the comparisons, whose outcome is unpredictable: (time, seq) is compared as one 128-bit
 * key (time >= 0, so unsigned order is time order, then seq), the smallest child is picked
 * arithmetically, not by branches, and four children per node halve the depth of a binary
 * heap (a pop sifts through log4 n levels).
 */
#pragma once

#include <glib.h>
#include "util/units.h"

G_BEGIN_DECLS

typedef struct {
    PpsimTime time_ps;
    guint64 seq;
    guint32 target; /* entity id */
    guint32 kind;   /* entity-defined */
    gint64 a, b;    /* payload: ids, sizes, generation numbers; never owning pointers */
} PpsimEvent;

typedef struct {
    PpsimEvent *heap;
    gsize len;
    gsize cap;
    guint64 next_seq;
} PpsimEventQueue;

void ppsim_event_queue_init(PpsimEventQueue *q);
void ppsim_event_queue_clear(PpsimEventQueue *q);
/* Doubles the capacity (internal to push). */
void ppsim_event_queue_grow(PpsimEventQueue *q);

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 PpsimEventKey_; /* (GCC and Clang: not ISO C) */
static inline PpsimEventKey_
ppsim_event_key_(const PpsimEvent *e)
{
    return ((PpsimEventKey_)(guint64)e->time_ps << 64) | e->seq;
}
#define ppsim_event_before_(x, y) (ppsim_event_key_(x) < ppsim_event_key_(y))
#else
static inline gboolean
ppsim_event_before_(const PpsimEvent *x, const PpsimEvent *y)
{
    return x->time_ps < y->time_ps || (x->time_ps == y->time_ps && x->seq < y->seq);
}
#endif

/* Copies @ev in, stamping its seq. */
static inline void
ppsim_event_queue_push(PpsimEventQueue *q, const PpsimEvent *ev)
{
    g_assert(ev->time_ps >= 0);
    if (q->len == q->cap)
        ppsim_event_queue_grow(q);
    PpsimEvent item = *ev;
    item.seq = q->next_seq++;
    gsize i = q->len++;
    while (i > 0) {
        gsize parent = (i - 1) / 4;
        if (!ppsim_event_before_(&item, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = item;
}

/* Pops the earliest event into @out; FALSE when empty. */
static inline gboolean
ppsim_event_queue_pop(PpsimEventQueue *q, PpsimEvent *out)
{
    if (q->len == 0)
        return FALSE;
    *out = q->heap[0];
    gsize n = --q->len;
    if (n == 0)
        return TRUE;
    const PpsimEvent *last = &q->heap[n];
    PpsimEvent *h = q->heap;
    gsize i = 0;
    for (;;) {
        gsize first = 4 * i + 1, child = first;
        if (first >= n)
            break;
        if (first + 3 < n) {
            /* the smallest of four children, by selection rather than branches */
            gsize a = first + ppsim_event_before_(&h[first + 1], &h[first]);
            gsize b = first + 2 + ppsim_event_before_(&h[first + 3], &h[first + 2]);
            child = ppsim_event_before_(&h[b], &h[a]) ? b : a;
        } else {
            for (gsize c = first + 1; c < n; c++)
                if (ppsim_event_before_(&h[c], &h[child]))
                    child = c;
        }
        if (!ppsim_event_before_(&h[child], last))
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = *last;
    return TRUE;
}

static inline gsize
ppsim_event_queue_len(const PpsimEventQueue *q)
{
    return q->len;
}

G_END_DECLS
