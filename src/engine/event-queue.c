/* event-queue.c: binary min-heap on (time, seq); see event-queue.h.
 *
 * Events are stored inline (POD), so push/pop copy 40 bytes and never allocate once the
 * array has grown. The heap is small in practice (a few events per device), so a plain
 * binary heap beats fancier queues here.
 */
#include "engine/event-queue.h"

static inline gboolean
event_before(const PpsimEvent *x, const PpsimEvent *y)
{
    return x->time_ps < y->time_ps || (x->time_ps == y->time_ps && x->seq < y->seq);
}

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
    if (q->len == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->heap = g_renew(PpsimEvent, q->heap, q->cap);
    }
    PpsimEvent item = *ev;
    item.seq = q->next_seq++;
    gsize i = q->len++;
    while (i > 0) {
        gsize parent = (i - 1) / 2;
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
    PpsimEvent last = q->heap[--q->len];
    gsize n = q->len, i = 0;
    for (;;) {
        gsize child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && event_before(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!event_before(&q->heap[child], &last))
            break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (n > 0)
        q->heap[i] = last;
    return TRUE;
}
