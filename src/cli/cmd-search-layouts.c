/* cmd-search-layouts.c: the layouts `ppsim search` tries (cmd-search-internal.h): the
 * schedules, the points (tp within a node, pp, cp, dp, ep, microbatch size, chunks) of N GPUs
 * for a scenario, the ladder of memory plans each point climbs, and the nearest GPU counts
 * with a layout when N has none. Pure enumeration: nothing here runs or prints. */
#include "cli/cmd-search-internal.h"
#include "sched/registry.h"
#include "util/ppsim-error.h"

#include <string.h>

/* The axis columns of a search's points, in order (the CSV's columns after `point`). */
const char *const ppsim_cli_search_paths[] = {
    "parallel.tp",
    "parallel.pp",
    "training.pp",
    "parallel.dp",
    "training.microbatch_size",
    "training.microbatches",
    "training.chunks",
    "hardware.nodes", /* a column, not a fixed override: the base scenario's own layout is
                         never checked against the searched node count */
    "hardware.gpus_per_node",
    "parallel.cp",
    "parallel.ep",
    "parallel.etp",
    "schedule",
    NULL,
};

/* The ladder of memory plans, cheapest in time first: ZeRO 1 and 2 cost no time over plain
 * data parallelism (the same ring volume), ZeRO-3 adds parameter gathers, recompute adds
 * forwards (multi-head latent attention's up-projections, then a mixture of experts' MLP
 * blocks alone, before whole layers). The first that fits is kept. */
const char *const ppsim_cli_search_rung_paths[] = {"model.recompute", "parallel.zero", NULL};
static const char *const ladder_zero[] = {"1", "2", "3"};
static const char *const ladder_recompute[] = {"none", "mla_up_proj", "selective", "moe", "full"};
/* Microbatch sizes tried, and chunk counts for the generators whose v is training.chunks. */
static const int microbatch_sizes[] = {1, 2, 4, 8};
static const int chunk_counts[] = {2, 4};
/* Context parallelism is tried up to this degree, and only while each rank keeps at least
 * CP_MIN_TOKENS of the sequence (ring attention pays off on long sequences; below that its
 * KV exchanges only add time and the search would double for nothing). */
#define CP_MAX 16
#define CP_MIN_TOKENS 4096

/* Whether @cp is a context-parallel degree to try for @sc. */
static gboolean
cp_candidate(const PpsimScenario *sc, int cp)
{
    const PpsimModel *m = &sc->model;
    return cp == 1 || (m->seq_len % cp == 0 && m->heads % cp == 0 && m->kv_heads % cp == 0 &&
                       m->seq_len / cp >= CP_MIN_TOKENS);
}

/* Whether @ep is an expert-parallel degree to try: 1, or for a mixture-of-experts model a
 * degree dividing the experts and the GPUs of one pipeline stage (tp x cp x dp), as the
 * scenario requires of ep x etp: with etp = tp (Megatron-Core's default) when ep divides
 * cp x dp, else with whole experts (etp 1), the EP group spanning the TP ranks. The
 * expert-tensor-parallel size to run it with in *@etp. */
static gboolean
ep_candidate(const PpsimScenario *sc, int ep, int dp, int cp, int tp, int *etp)
{
    *etp = tp;
    if (ep == 1)
        return TRUE;
    if (sc->model.moe.experts <= 0 || sc->model.moe.experts % ep != 0 || (tp * cp * dp) % ep != 0)
        return FALSE;
    if ((cp * dp) % ep != 0)
        *etp = 1;
    return TRUE;
}

/* The generators to try: --schedules, else every registered one but optpipe (a MILP per
 * layout) and custom (a file). */
GPtrArray *
ppsim_cli_search_schedules(char **names, GError **error)
{
    GPtrArray *out = g_ptr_array_new();
    if (names == NULL) {
        for (guint i = 0; i < ppsim_sched_registry_count(); i++) {
            const PpsimScheduleClass *k = ppsim_sched_registry_nth(i);
            if (strcmp(k->name, "optpipe") != 0 && strcmp(k->name, "custom") != 0)
                g_ptr_array_add(out, (gpointer)k);
        }
        return out;
    }
    for (char **n = names; *n; n++) {
        g_auto(GStrv) parts = g_strsplit(*n, ",", -1);
        for (char **p = parts; *p; p++) {
            const char *name = g_strstrip(*p);
            if (*name == '\0')
                continue;
            const PpsimScheduleClass *k = ppsim_sched_registry_find(name, error);
            if (k == NULL || strcmp(name, "custom") == 0) {
                if (k != NULL)
                    g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                                "'custom' replays one file, it has no layouts to search");
                g_prefix_error(error, "--schedules: ");
                g_ptr_array_unref(out);
                return NULL;
            }
            g_ptr_array_add(out, (gpointer)k);
        }
    }
    if (out->len == 0) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--schedules: no schedule named (see 'ppsim list schedules')");
        g_ptr_array_unref(out);
        return NULL;
    }
    return out;
}

/* Whether a layout of @n GPUs exists for @sc: the checks of ppsim_cli_search_points without the
 * schedules. */
static gboolean
layout_exists(const PpsimScenario *sc, int n, int batch)
{
    int g = sc->hardware.gpus_per_node;
    if (n > g && n % g != 0)
        return FALSE;
    for (int tp = 1; tp <= MIN(g, n); tp *= 2) {
        if (n % tp != 0 || sc->model.heads % tp != 0 || sc->model.kv_heads % tp != 0)
            continue;
        for (int pp = 1; pp <= n / tp && pp <= sc->model.layers; pp++) {
            if ((n / tp) % pp != 0 || sc->model.layers % pp != 0)
                continue;
            int dp = n / (tp * pp);
            if (batch % dp == 0)
                return TRUE;
        }
    }
    return FALSE;
}

/* The points: one GStrv per layout and schedule, values in ppsim_cli_search_paths order. */
GPtrArray *
ppsim_cli_search_points(const PpsimScenario *sc, int n, int batch, const GPtrArray *classes)
{
    GPtrArray *points = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    int g = sc->hardware.gpus_per_node;
    if (n > g && n % g != 0)
        return points; /* more than a node, but not whole nodes */
    for (int tp = 1; tp <= MIN(g, n); tp *= 2) {
        if (n % tp != 0 || g % tp != 0 || sc->model.heads % tp != 0 || sc->model.kv_heads % tp != 0)
            continue;
        for (int pp = 1; pp <= n / tp && pp <= sc->model.layers; pp++) {
            if ((n / tp) % pp != 0 || sc->model.layers % pp != 0)
                continue;
            for (int cp = 1; cp <= CP_MAX && cp <= n / (tp * pp); cp *= 2) {
                if ((n / (tp * pp)) % cp != 0 || !cp_candidate(sc, cp))
                    continue;
                int dp = n / (tp * pp * cp);
                for (int ep = 1; ep <= MAX(sc->model.moe.experts, 1) && ep <= dp * cp * tp;
                     ep *= 2) {
                    int etp;
                    if (!ep_candidate(sc, ep, dp, cp, tp, &etp))
                        continue;
                    for (guint b = 0; b < G_N_ELEMENTS(microbatch_sizes); b++) {
                        int mbs = microbatch_sizes[b];
                        if (batch % (dp * mbs) != 0)
                            continue;
                        int m = batch / (dp * mbs);
                        for (guint c = 0; c < classes->len; c++) {
                            const PpsimScheduleClass *k = g_ptr_array_index(classes, c);
                            int vs[G_N_ELEMENTS(chunk_counts)], nv = 0;
                            if (k->chunks == 0)
                                for (guint i = 0; i < G_N_ELEMENTS(chunk_counts); i++)
                                    vs[nv++] = chunk_counts[i];
                            else
                                vs[nv++] = k->chunks;
                            for (int i = 0; i < nv; i++) {
                                if (sc->model.layers % (pp * vs[i]) != 0)
                                    continue; /* stages of unequal depth: not a layout one picks */
                                char **v = g_new0(char *, N_AXIS_COLS + 2);
                                v[COL_TP] = g_strdup_printf("%d", tp);
                                v[COL_PP] = g_strdup_printf("%d", pp);
                                v[COL_TPP] = g_strdup_printf("%d", pp);
                                v[COL_DP] = g_strdup_printf("%d", dp);
                                v[COL_MBS] = g_strdup_printf("%d", mbs);
                                v[COL_M] = g_strdup_printf("%d", m);
                                v[COL_V] = g_strdup_printf("%d", k->chunks == 0 ? vs[i] : 1);
                                /* whole nodes; less than a node: a node of n GPUs */
                                v[COL_NODES] = g_strdup_printf("%d", n >= g ? n / g : 1);
                                v[COL_GPN] = g_strdup_printf("%d", n >= g ? g : n);
                                v[COL_CP] = g_strdup_printf("%d", cp);
                                v[COL_EP] = g_strdup_printf("%d", ep);
                                v[COL_ETP] = g_strdup_printf("%d", etp);
                                v[N_AXIS_COLS] = g_strdup(k->name);
                                g_ptr_array_add(points, v);
                            }
                        }
                    }
                }
            }
        }
    }
    return points;
}

/* The GPU counts nearest @n, below and above, that have a layout (0: none found). */
void
ppsim_cli_search_nearest_counts(const PpsimScenario *sc, int n, int batch, int *below, int *above)
{
    *below = *above = 0;
    /* within 4096 of n: far enough for any count one mistypes, bounded for a huge one */
    for (int k = n - 1; k >= MAX(1, n - 4096) && *below == 0; k--)
        if (layout_exists(sc, k, batch))
            *below = k;
    for (int k = n + 1; k <= n + 4096 && *above == 0; k++)
        if (layout_exists(sc, k, batch))
            *above = k;
}

/* The ladder as the sweep takes it for @sc: one GStrv of values per rung (recompute moe for
 * a mixture of experts only, mla_up_proj for multi-head latent attention only). */
GPtrArray *
ppsim_cli_search_rungs(const PpsimScenario *sc)
{
    GPtrArray *rungs = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    for (guint z = 0; z < G_N_ELEMENTS(ladder_zero); z++)
        for (guint i = 0; i < G_N_ELEMENTS(ladder_recompute); i++) {
            if (strcmp(ladder_recompute[i], "moe") == 0 && sc->model.moe.experts <= 0)
                continue;
            if (strcmp(ladder_recompute[i], "mla_up_proj") == 0 && sc->model.mla.kv_lora_rank <= 0)
                continue;
            char **r = g_new0(char *, 3);
            r[0] = g_strdup(ladder_recompute[i]);
            r[1] = g_strdup(ladder_zero[z]);
            g_ptr_array_add(rungs, r);
        }
    return rungs;
}
