/* v-queue.h: the candidate simulator's devices in (free time, id) order (internal to
 * v-run.c): which device decides next and when anything may next change for a waiting one,
 * without scanning every device.
 *
 * A sorted array of the devices still running, each with a "stuck" flag: the next device is
 * the first one not stuck (stuck devices are few and wait only until some device runs an
 * op); the next time after x is a binary search. A key only grows, so a device moves right
 * past the devices it overtakes. The keys live in the caller's array. */
#pragma once

#include "util/units.h"

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
int ppsim_vqueue_top(const PpsimVQueue *q);
/* Restores the order after the key of the device at index @i grew. */
void ppsim_vqueue_moved(PpsimVQueue *q, int i);
/* The device at index @i has finished: it leaves the queue. */
void ppsim_vqueue_remove(PpsimVQueue *q, int i);
void ppsim_vqueue_set_stuck(PpsimVQueue *q, int d);
void ppsim_vqueue_unstick_all(PpsimVQueue *q);
/* The smallest key > @x of a running device (stuck ones included), -1 when none. */
PpsimTime ppsim_vqueue_next_after(const PpsimVQueue *q, PpsimTime x);
