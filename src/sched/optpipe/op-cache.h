/* op-cache.h: OptPipe's cached schedules ([OP] §4.2) (internal): solved schedules stored
 * under a key of the discretised costs, memory budget and shape, reused as warm starts. */
#pragma once

#include "sched/generator.h"

G_BEGIN_DECLS

/* The key: p, m, and per stage F, B, W, offload and the p2p latency as multiples of 1/8 of
 * the mean forward, act_w / act in 1/8, the budget in 1/4 M_B (or "none"), the offload
 * flag. Instances whose costs round to the same proportions share an entry.
 * Returns: (transfer full). */
char *ppsim_op_cache_key(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                         const gint64 *limit, gboolean offload);

/* Reads the entry for @key under @dir: <dir>/optpipe-<hash>.csv (the schedule, PyTorch
 * pipelining CSV with ppsim's extensions) and .json (metadata: the key, p, m, the makespan
 * it was solved to). Returns NULL without a message when there is none; NULL with
 * *@warning (transfer full) set when an entry exists but is corrupt or stale (another key,
 * another shape, a schedule the checker refuses): it is never trusted. The caller still
 * times it on its own costs. */
PpsimSchedule *ppsim_op_cache_load(const char *dir, const char *key, int p, int m, char **warning);

/* Stores @sched for @key under @dir (created if needed), each file written to a temporary
 * name and renamed. Errors: I/O. */
gboolean ppsim_op_cache_store(const char *dir, const char *key, const PpsimSchedule *sched,
                              PpsimTime makespan_ps, GError **error);

G_END_DECLS
