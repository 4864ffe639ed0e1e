/* interleaved.h: Megatron's interleaved order, shared by interleaved, gis and gis-h
 * (internal to src/sched). */
#pragma once

#include "sched/generator.h"

/* The k-th chunk-microbatch a rank runs in Megatron's interleaved order ([MEG]
 * schedules.py): groups of @g microbatches per chunk, chunks ascending for forwards and
 * descending for backwards. */
void ppsim_interleaved_slot(int k, int g, int v, gboolean forward, int *chunk, int *mb);
