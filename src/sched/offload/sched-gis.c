/* sched-gis.c: PipeOffload's generalised interleaved schedule ([PO] §3.1-3.2, Table 1;
 * [PO] Table 1). Megatron's interleaved order (stage s on device s mod p, chunk-
 * microbatches in groups of g) with two changes: the backward is split into B and W and W
 * runs right after its B (not delayed), and rank r warms up with (v-1)g + p - r - 1
 * forwards instead of (v-1)g + 2(p-r-1) ([PO]'s d(v-1) + d - i, which counts the first
 * steady forward). Rank 0 then holds g(v-1) + p chunk-activations: d v for GIS (g = d)
 * instead of d v + d - 1, "without introducing any additional pipeline bubbles"; the bubble
 * is (d-1)(T_F+T_B). A smaller group, ceil(d/2) <= g <= d (option group_size), trades
 * bubble for memory; `gis-h` is g = ceil(d/2). Needs m a multiple of g.
 */
#include "sched/offload/gis.h"
#include "util/ppsim-error.h"

static void
gis_forward(PpsimSchedule *s, int r, int k, int g, int v)
{
    int chunk, mb;
    ppsim_interleaved_slot(k, g, v, TRUE, &chunk, &mb);
    ppsim_schedule_push(s, r, PPSIM_OP_F, chunk * s->n_devices + r, mb);
}

static void
gis_backward(PpsimSchedule *s, int r, int k, int g, int v)
{
    int chunk, mb;
    ppsim_interleaved_slot(k, g, v, FALSE, &chunk, &mb);
    ppsim_schedule_push(s, r, PPSIM_OP_B, chunk * s->n_devices + r, mb);
    ppsim_schedule_push(s, r, PPSIM_OP_W, chunk * s->n_devices + r, mb);
}

gboolean
ppsim_gis_generate(const PpsimPipelineShape *shape, int g, PpsimSchedule **out, GError **error)
{
    int p = shape->p, v = shape->v, m = shape->m;
    if (g < (p + 1) / 2 || g > p || m % g != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "gis needs ceil(p/2) <= g <= p and m a multiple of the group size g "
                    "([PO] §3.2); got p = %d, g = %d, m = %d",
                    p, g, m);
        return FALSE;
    }
    PpsimSchedule *s = ppsim_schedule_new(p, p * v, m);
    ppsim_schedule_map_interleaved(s);
    int total = m * v;
    for (int r = 0; r < p; r++) {
        int warmup = MIN((v - 1) * g + p - r - 1, total), f = 0, b = 0;
        for (; f < warmup; f++)
            gis_forward(s, r, f, g, v);
        for (; f < total; f++, b++) {
            gis_forward(s, r, f, g, v);
            gis_backward(s, r, b, g, v);
        }
        for (; b < total; b++)
            gis_backward(s, r, b, g, v);
    }
    *out = s;
    return TRUE;
}

static const PpsimOptionSpec gis_options[] = {
    {"group_size", PPSIM_OPTION_INT, NULL,
     "microbatch group size g, ceil(p/2) <= g <= p (default p)"},
    {NULL}};

static gboolean
gis_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
             PpsimSchedule **out, GError **error)
{
    int g = ppsim_options_is_set(params->options, "group_size")
                ? (int)ppsim_options_get_int(params->options, "group_size")
                : shape->p;
    if (shape->v > 1 && !ppsim_options_is_set(params->options, "group_size")) {
        char value[16];
        g_snprintf(value, sizeof value, "%d", g);
        ppsim_choice_add(params->choices, "group_size", value, "default: p");
    }
    return ppsim_gis_generate(shape, g, out, error);
}

const PpsimScheduleClass ppsim_schedule_gis = {
    .name = "gis",
    .summary = "PipeOffload generalised interleaved: B/W split, shorter warm-up, peak d v",
    .reference = "[PO] §3.1-3.2, Table 1",
    .chunks = 0,
    .options = gis_options,
    .generate = gis_generate,
};
