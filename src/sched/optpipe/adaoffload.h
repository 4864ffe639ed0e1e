/* adaoffload.h: AdaOffload ([OP] §4.1.3, App. D Algorithm 1), the denser-fill offload
 * schedule, shared by the adaoffload generator and optpipe (its warm start). Internal. */
#pragma once

#include "sched/generator.h"
#include "sched/optpipe/op-eval.h"

G_BEGIN_DECLS

/* How a search went: chains run of the full search's, and ops timed. */
typedef struct {
    int n_run, n_total;
    gint64 spent;
} PpsimAdaInfo;

/* Builds AdaOffload for @shape (v = 1: stage d on device d) on @costs under the activation
 * budget @limit ([p] memory units, nullable: none): several fills (from 1F1B's p - d
 * forwards before the first B up to the densest Algorithm 1 allows, then PipeOffload's rules:
 * B with W right after it, one F per B, offloads where the round trip hides) with and without
 * offload, PipeOffload's own schedule among them, each timed and measured on the estimates;
 * the fastest that fits wins (ties: the lower peak, then the full search's first). *@eval
 * receives its estimate. Without @allow_offload, only the fills without offload are tried.
 * @budget > 0 stops starting candidates once that many ops have been timed and one fits
 * (PipeOffload's own is always measured); 0 searches in full. @info (nullable) receives how
 * far the search went.
 * Errors: PPSIM_SCHED_ERROR_UNSUPPORTED when no candidate fits @limit, naming the smallest
 * budget one fits in. */
gboolean ppsim_adaoffload_build(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                                const gint64 *limit, gboolean allow_offload,
                                const char *co_schedule, gint64 budget, PpsimAdaInfo *info,
                                PpsimSchedule **out, PpsimOpEval *eval, GError **error);

/* The compute lists of the fill @w ([p]: forwards device d runs before its first B, not
 * fewer than the next device's) with the W lag of kind @lag (0: W right after its B; 1:
 * device d holds d Ws back; 2: p - 1 - d; 3: p - 1), without copies: one of the search's
 * candidates. Returns: (transfer full). */
PpsimSchedule *ppsim_adaoffload_fill(const PpsimPipelineShape *shape, const int *w, int lag);

/* Each device's activation peak ([p] into @peak) of that fill without offload, as the
 * estimates (ppsim_op_eval) give it, found without timing the schedule: FALSE (nothing
 * found) when some forward takes no time, where the timeline can reorder the changes. */
gboolean ppsim_adaoffload_fill_peaks(const PpsimPipelineShape *shape,
                                     const PpsimCostEstimates *costs, const int *w, int lag,
                                     gint64 *peak);

/* The default search budget (`budget: auto`) of AdaOffload on p devices and m microbatches:
 * 0 (the full search) while p m <= 4096, else a fixed amount of work. */
gint64 ppsim_adaoffload_auto_budget(int p, int m);

/* Records in @choices (nullable) that @budget cut the search (nothing when it did not). */
void ppsim_adaoffload_note_budget(GArray *choices, const PpsimPipelineShape *shape,
                                  const PpsimCostEstimates *costs, gint64 budget, gboolean is_auto,
                                  const PpsimAdaInfo *info, const PpsimOpEval *eval);

/* Each device's budget for the family's generators: option @cap (a number of M_B, or NULL),
 * else the scenario's memory.limit when set; NULL in *@limit when neither caps anything.
 * Errors as ppsim_memory_cap_default(). */
gboolean ppsim_optpipe_limits(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                              const char *cap, const char *what, gint64 **limit, GError **error);

G_END_DECLS
