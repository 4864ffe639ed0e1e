/* event-queue.c: 4-ary min-heap on (time, seq); see event-queue.h.
 *
 * Events are stored inline (POD), so push/pop copy 40 bytes and never allocate once the
 * array has grown. The heap is small in practice (a few events per device). Its cost is in
 * the comparisons, whose outcome is unpredictable: (time, seq) is compared as one 128-bit
 * key (time >= 0, so unsigned order is time order, then seq), the smallest child is picked
 * arithmetically, not by branches, and four children per node halve the depth of a binary
 * heap (a pop sifts through log4 n levels).
 */
#include "engine/event-queue.h"

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 EventKey;
static inline EventKey
event_key(const PpsimEvent *e)
{
    return ((EventKey)(guint64)e->time_ps << 64) | e->seq;
}
#define event_before(x, y) (event_key(x) < event_key(y))
#else
static inline gboolean
event_before(const PpsimEvent *x, const PpsimEvent *y)
{
    return x->time_ps < y->time_ps || (x->time_ps == y->time_ps && x->seq < y->seq);
}
#endif

void
ppsim_event_queue_init(PpsimEventQueue *q)
{
    q->heap = NULL;
    q->len = 0;
    q->cap = 0;
    q->next_seq = 0;
}

void
ppsim_event_queue_clear(PpsimEventQueue *q)
{
    g_free(q->heap);
    ppsim_event_queue_init(q);
}

void
ppsim_event_queue_push(PpsimEventQueue *q, const PpsimEvent *ev)
{
    g_assert(ev->time_ps >= 0);
    if (q->len == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->heap = g_renew(PpsimEvent, q->heap, q->cap);
    }
    PpsimEvent item = *ev;
    item.seq = q->next_seq++;
    gsize i = q->len++;
    while (i > 0) {
        gsize parent = (i - 1) / 4;
        if (!event_before(&item, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = item;
}

gboolean
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
            gsize a = first + event_before(&h[first + 1], &h[first]);
            gsize b = first + 2 + event_before(&h[first + 3], &h[first + 2]);
            child = event_before(&h[b], &h[a]) ? b : a;
        } else {
            for (gsize c = first + 1; c < n; c++)
                if (event_before(&h[c], &h[child]))
                    child = c;
        }
        if (!event_before(&h[child], last))
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = *last;
    return TRUE;
}
