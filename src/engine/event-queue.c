/* event-queue.c: the queue's setup and growth; push and pop are inline in event-queue.h. */
#include "engine/event-queue.h"

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
ppsim_event_queue_grow(PpsimEventQueue *q)
{
    q->cap = q->cap ? 2 * q->cap : 64;
    q->heap = g_renew(PpsimEvent, q->heap, q->cap);
}
