/* sched-tpipe.c: T-Pipe ([TP] §4.1, App. A) and T-Pipe + block-wise T-Recomp ([TP] §4.2,
 * App. B-C). Two chunks per device with the interleaved stage map (device d holds the
 * shallow stage d and the deep stage p + d); fused backward. Each device repeats the order
 * of tpipe-table.c's periodic timetable (T_F : T_B = 1 : 2, as App. A assumes); the replay
 * then times it on the real costs. With `recompute: t-recomp` chunk 1 keeps only its
 * checkpoint after F and is recomputed by an R block before its backward.
 * Any p >= 1, m >= 1; v = 2 only (option `chunks`).
 */
#include "sched/generator.h"
#include "sched/tpipe/tpipe.h"
#include "util/ppsim-error.h"

static const PpsimOptionSpec tpipe_options[] = {
    {"recompute", PPSIM_OPTION_STRING, "none",
     "none | t-recomp: recompute chunk 1 block-wise before its backward ([TP] §4.2)"},
    {"offload_optimizer", PPSIM_OPTION_STRING, "none",
     "none (t-offload, [TP] §5, is not implemented yet)"},
    {"chunks", PPSIM_OPTION_INT, "2",
     "chunks per device; 2 only: [TP] App. A-D define the order for 2"},
    {NULL}};

static gboolean
tpipe_check_options(const PpsimOptions *opts, gboolean *recomp, GError **error)
{
    gint64 chunks = ppsim_options_get_int(opts, "chunks");
    if (chunks != 2) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'chunks' must be 2 for tpipe, got %" G_GINT64_FORMAT
                    ": [TP] App. A-D give the order for 2 chunks per device only",
                    chunks);
        return FALSE;
    }
    const char *rc = ppsim_options_get_string(opts, "recompute");
    if (g_strcmp0(rc, "none") != 0 && g_strcmp0(rc, "t-recomp") != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'recompute' must be 'none' or 't-recomp', got '%s'", rc);
        return FALSE;
    }
    const char *oo = ppsim_options_get_string(opts, "offload_optimizer");
    if (g_strcmp0(oo, "none") != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'offload_optimizer' must be 'none', got '%s' (t-offload is not "
                    "implemented yet)",
                    oo);
        return FALSE;
    }
    *recomp = g_strcmp0(rc, "t-recomp") == 0;
    return TRUE;
}

static gboolean
tpipe_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    gboolean recomp = FALSE;
    if (!tpipe_check_options(params->options, &recomp, error))
        return FALSE;
    int p = shape->p, m = shape->m;
    g_assert(shape->v == 2);
    g_autoptr(PpsimTpipeTable) table =
        recomp ? ppsim_tpipe_table_recomp(p, error) : ppsim_tpipe_table_plain(p);
    if (table == NULL)
        return FALSE;
    PpsimSchedule *sched = ppsim_schedule_new(p, 2 * p, m);
    ppsim_schedule_map_interleaved(sched);
    for (int d = 0; d < p; d++)
        ppsim_tpipe_table_emit(table, d, m, sched);
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_tpipe = {
    .name = "tpipe",
    .summary = "T-Pipe: 2 chunks/device, advanced backward, period 6 (7 with T-Recomp)",
    .reference = "[TP] §4, App. A-C",
    .chunks = 2,
    .options = tpipe_options,
    .generate = tpipe_generate,
};
