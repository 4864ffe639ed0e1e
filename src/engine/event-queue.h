/* event-queue.h: a binary min-heap of POD events ordered by (time, seq).
 *
 * seq is an insertion counter, so events at equal times come out in insertion order
 * (git's prio_queue): the simulation is deterministic by construction. O(log n) push/pop.
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
/* Copies @ev in, stamping its seq. */
void ppsim_event_queue_push(PpsimEventQueue *q, const PpsimEvent *ev);
/* Pops the earliest event into @out; FALSE when empty. */
gboolean ppsim_event_queue_pop(PpsimEventQueue *q, PpsimEvent *out);
static inline gsize
ppsim_event_queue_len(const PpsimEventQueue *q)
{
    return q->len;
}

G_END_DECLS
