/* cmd-search.c: `ppsim search SCENARIO --gpus N`: every layout of N GPUs a practitioner
 * would consider (tp within a node, pp, dp, microbatch size, chunks, every schedule), each
 * with the cheapest memory plan that fits (recompute, ZeRO stage), ranked by tokens/s.
 *
 * The layouts run as a sweep over an explicit point list with a ladder of memory plans
 * (sweep.h): rows go to a CSV file (--rows, else a temporary one) that --resume continues
 * after an interruption, and the report is always made from that file, so a resumed search
 * prints byte for byte what an uninterrupted one prints. */
#include "cli/cli.h"
#include "plan/plan.h"
#include "sched/registry.h"
#include "sim/sim.h"
#include "sweep/sweep.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"
#include "util/suggest.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct {
    int gpus;
    char **schedules; /* --schedules, repeatable or comma-separated */
    char **sets;
    char *format;
    char *plot;
    char *rows;
    gboolean resume;
    int jobs;
    int top;
    gboolean quiet;
    gboolean plan;
} SearchOptions;

/* --plan: the planner's layer split and per-stage recompute for one of the top layouts,
 * replayed. */
typedef struct {
    gboolean done; /* the planner took the layout */
    char *why;     /* when it did not: its error */
    double tokens_per_s, peak_memory;
    gboolean fits;
    char *split; /* "[10 10 9f ...]": layers per stage, s/f = selective/full recompute */
} Planned;

/* The axis columns of a search's points, in order (the CSV's columns after `point`). */
static const char *const search_paths[] = {
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
    "schedule",
    NULL,
};
enum {
    COL_TP,
    COL_PP,
    COL_TPP,
    COL_DP,
    COL_MBS,
    COL_M,
    COL_V,
    COL_NODES,
    COL_GPN,
    COL_CP,
    COL_EP,
    N_AXIS_COLS
};
/* The ladder of memory plans, cheapest in time first: ZeRO 1 and 2 cost no time over plain
 * data parallelism (the same ring volume), ZeRO-3 adds parameter gathers, recompute adds
 * forwards. The first that fits is kept. */
static const char *const rung_paths[] = {"model.recompute", "parallel.zero", NULL};
static const char *const ladder[][2] = {
    {"none", "1"}, {"selective", "1"}, {"full", "1"},      {"none", "2"}, {"selective", "2"},
    {"full", "2"}, {"none", "3"},      {"selective", "3"}, {"full", "3"},
};
enum { COL_RECOMPUTE = N_AXIS_COLS, COL_ZERO };
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
 * degree dividing the experts and the GPUs of one pipeline stage (dp x tp), as the scenario
 * requires. */
static gboolean
ep_candidate(const PpsimScenario *sc, int ep, int dp, int tp)
{
    return ep == 1 ||
           (sc->model.moe.experts > 0 && sc->model.moe.experts % ep == 0 && (dp * tp) % ep == 0);
}

static void
search_options_clear(SearchOptions *o)
{
    g_strfreev(o->schedules);
    g_strfreev(o->sets);
    g_free(o->format);
    g_free(o->plot);
    g_free(o->rows);
}

/* The generators to try: --schedules, else every registered one but optpipe (a MILP per
 * layout) and custom (a file). */
static GPtrArray *
search_schedules(char **names, GError **error)
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

/* Whether a layout of @n GPUs exists for @sc: the checks of search_points without the
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

/* The points: one GStrv per layout and schedule, values in search_paths order. */
static GPtrArray *
search_points(const PpsimScenario *sc, int n, int batch, const GPtrArray *classes)
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
                for (int ep = 1; ep <= MAX(sc->model.moe.experts, 1) && ep <= dp * tp; ep *= 2) {
                    if (!ep_candidate(sc, ep, dp, tp))
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

/* ---- the report ------------------------------------------------------------------------ */

static gboolean
row_fits(const PpsimSweepRow *r)
{
    return r->has_metrics && !r->oom;
}

/* Fitting rows by tokens/s (then point, schedule); the rest by peak memory. */
static int
cmp_rank(gconstpointer pa, gconstpointer pb)
{
    const PpsimSweepRow *a = *(PpsimSweepRow *const *)pa, *b = *(PpsimSweepRow *const *)pb;
    gboolean fa = row_fits(a), fb = row_fits(b);
    if (fa != fb)
        return fa ? -1 : 1;
    if (fa && a->tokens_per_s != b->tokens_per_s)
        return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
    gboolean ma = a->peak_memory > 0, mb = b->peak_memory > 0;
    if (!fa && ma != mb)
        return ma ? -1 : 1;
    if (!fa && a->peak_memory != b->peak_memory)
        return a->peak_memory < b->peak_memory ? -1 : 1;
    if (a->point != b->point)
        return a->point < b->point ? -1 : 1;
    return strcmp(a->schedule, b->schedule);
}

static const char *
lab(const PpsimSweepRow *r, int col)
{
    return r->labels[col] ? r->labels[col] : "";
}

/* The row's ZeRO stage as it acts: 0 with one replica and no context parallelism (ZeRO
 * shards over dp x cp; nothing to shard over). */
static const char *
row_zero(const PpsimSweepRow *r)
{
    gboolean alone = strcmp(lab(r, COL_DP), "1") == 0 &&
                     (*lab(r, COL_CP) == '\0' || strcmp(lab(r, COL_CP), "1") == 0);
    return alone ? "0" : lab(r, COL_ZERO);
}

/* "tp=4 pp=8 dp=2 mbs=1 m=64 v=2 zb-v recompute=none zero=1" */
static void
layout_text(GString *out, const PpsimSweepRow *r)
{
    g_string_append_printf(out, "tp=%s pp=%s dp=%s", lab(r, COL_TP), lab(r, COL_PP),
                           lab(r, COL_DP));
    if (strcmp(lab(r, COL_CP), "1") != 0)
        g_string_append_printf(out, " cp=%s", lab(r, COL_CP));
    if (strcmp(lab(r, COL_EP), "1") != 0)
        g_string_append_printf(out, " ep=%s", lab(r, COL_EP));
    g_string_append_printf(out, " mbs=%s m=%s", lab(r, COL_MBS), lab(r, COL_M));
    if (strcmp(lab(r, COL_V), "1") != 0)
        g_string_append_printf(out, " v=%s", lab(r, COL_V));
    g_string_append_printf(out, " %s", r->schedule);
    if (*lab(r, COL_RECOMPUTE))
        g_string_append_printf(out, " recompute=%s", lab(r, COL_RECOMPUTE));
    if (*lab(r, COL_ZERO))
        g_string_append_printf(out, " zero=%s", row_zero(r));
}

static void
report_text(GString *out, const PpsimScenario *sc, int n, const GPtrArray *rows, int top,
            const Planned *planned)
{
    guint fit = 0, oom = 0, pruned = 0, other = 0;
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (row_fits(r))
            fit++;
        else if (r->has_metrics)
            oom++;
        else if (strcmp(r->status, "pruned") == 0)
            pruned++;
        else
            other++;
    }
    g_autoptr(GString) limit = g_string_new(NULL);
    ppsim_fmt_fixed(limit, (double)sc->memory_limit_bytes / GIB, 2);
    g_string_append_printf(out,
                           "search %s: %d GPU%s, %u layouts: %u fit in %s GiB, %u out of memory "
                           "on every plan, %u pruned before replay (static memory over the "
                           "limit), %u refused or invalid\n",
                           sc->name, n, n == 1 ? "" : "s", rows->len, fit, limit->str, oom, pruned,
                           other);
    g_string_append_printf(out, "top %u by tokens/s:\n", MIN((guint)top, fit));
    g_string_append_printf(out, "%4s %11s %10s %7s %10s %10s  %s\n", "rank", "tokens/s", "makespan",
                           "mfu", "peak", "headroom", "layout");
    g_string_append_printf(out, "%4s %11s %10s %7s %10s %10s\n", "", "", "ms", "", "GiB", "GiB");
    g_autoptr(GString) cell = g_string_new(NULL);
    for (guint i = 0; i < fit && i < (guint)top; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        g_string_append_printf(out, "%4u ", i + 1);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, r->tokens_per_s, 0);
        g_string_append_printf(out, "%11s ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, r->makespan_ms, 1);
        g_string_append_printf(out, "%10s ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, r->mfu, 4);
        g_string_append_printf(out, "%7s ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, r->peak_memory / GIB, 2);
        g_string_append_printf(out, "%10s ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, ((double)sc->memory_limit_bytes - r->peak_memory) / GIB, 2);
        g_string_append_printf(out, "%10s  ", cell->str);
        layout_text(out, r);
        g_string_append_c(out, '\n');
    }
    if (planned == NULL)
        return;
    g_string_append(out, "\n--plan: the planner's layers and recompute per stage for each, "
                         "replayed (s/f: selective/full recompute)\n");
    g_string_append_printf(out, "%4s %11s %10s %4s  %s\n", "rank", "tokens/s", "peak", "fits",
                           "stage layers");
    for (guint i = 0; i < fit && i < (guint)top; i++) {
        const Planned *p = &planned[i];
        if (!p->done) {
            g_string_append_printf(out, "%4u  not planned: %s\n", i + 1, p->why);
            continue;
        }
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, p->tokens_per_s, 0);
        g_string_append_printf(out, "%4u %11s ", i + 1, cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, p->peak_memory / GIB, 2);
        g_string_append_printf(out, "%10s %4s  %s\n", cell->str, p->fits ? "yes" : "no", p->split);
    }
}

static void
json_num_or_null(GString *out, const char *key, const PpsimSweepRow *r, double v)
{
    g_string_append_printf(out, ",\"%s\":", key);
    if (r->has_metrics)
        ppsim_fmt_double(out, v);
    else
        g_string_append(out, "null");
}

static void
report_json(GString *out, const PpsimScenario *sc, int n, const GPtrArray *rows,
            const Planned *planned, guint n_planned)
{
    g_string_append_printf(out, "{\"schema_version\":1,\"scenario\":");
    ppsim_fmt_json_string(out, sc->name);
    g_string_append_printf(out,
                           ",\"gpus\":%d,\"memory_limit\":%" G_GUINT64_FORMAT
                           ",\"memory_unit\":\"bytes\",\"layouts\":[",
                           n, sc->memory_limit_bytes);
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        g_string_append_printf(out,
                               "%s\n{\"tp\":%s,\"pp\":%s,\"dp\":%s,\"cp\":%s,\"ep\":%s,"
                               "\"microbatch_size\":%s,\"microbatches\":%s,\"chunks\":%s,"
                               "\"schedule\":",
                               i ? "," : "", lab(r, COL_TP), lab(r, COL_PP), lab(r, COL_DP),
                               lab(r, COL_CP), lab(r, COL_EP), lab(r, COL_MBS), lab(r, COL_M),
                               lab(r, COL_V));
        ppsim_fmt_json_string(out, r->schedule);
        g_string_append(out, ",\"recompute\":");
        if (*lab(r, COL_RECOMPUTE))
            ppsim_fmt_json_string(out, lab(r, COL_RECOMPUTE));
        else
            g_string_append(out, "null");
        g_string_append_printf(out, ",\"zero\":%s,\"status\":\"%s\"",
                               *lab(r, COL_ZERO) ? row_zero(r) : "null", r->status);
        json_num_or_null(out, "tokens_per_s", r, r->tokens_per_s);
        json_num_or_null(out, "mfu", r, r->mfu);
        json_num_or_null(out, "makespan_ms", r, r->makespan_ms);
        g_string_append(out, ",\"peak_memory\":");
        if (r->has_metrics || r->peak_memory > 0)
            ppsim_fmt_fixed(out, r->peak_memory, 0);
        else
            g_string_append(out, "null");
        g_string_append_printf(out, ",\"fits\":%s", row_fits(r) ? "true" : "false");
        if (planned != NULL && i < n_planned) {
            const Planned *p = &planned[i];
            g_string_append(out, ",\"planned\":");
            if (!p->done) {
                g_string_append(out, "{\"error\":");
                ppsim_fmt_json_string(out, p->why);
                g_string_append_c(out, '}');
            } else {
                g_string_append(out, "{\"tokens_per_s\":");
                ppsim_fmt_double(out, p->tokens_per_s);
                g_string_append(out, ",\"peak_memory\":");
                ppsim_fmt_fixed(out, p->peak_memory, 0);
                g_string_append_printf(out, ",\"fits\":%s,\"stages\":", p->fits ? "true" : "false");
                ppsim_fmt_json_string(out, p->split);
                g_string_append_c(out, '}');
            }
        }
        g_string_append_c(out, '}');
    }
    g_string_append(out, "]}\n");
}

/* No layout fits: one line naming the closest (the smallest peak replayed, else the
 * smallest static memory of the pruned ones). Rows are sorted (cmp_rank). */
static int
report_none_fits(const PpsimScenario *sc, int n, const GPtrArray *rows)
{
    const PpsimSweepRow *best = NULL;
    for (guint i = 0; i < rows->len && best == NULL; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (r->peak_memory > 0)
            best = r;
    }
    g_autoptr(GString) msg = g_string_new(NULL);
    g_string_append_printf(msg, "no layout of %d GPU%s fits in ", n, n == 1 ? "" : "s");
    ppsim_fmt_fixed(msg, (double)sc->memory_limit_bytes / GIB, 2);
    g_string_append(msg, " GiB");
    if (best == NULL) {
        g_string_append(msg, " (no layout ran: see the rows' errors with --rows FILE)");
    } else {
        g_string_append(msg, "; closest: ");
        layout_text(msg, best);
        if (best->has_metrics) {
            g_string_append(msg, ", peak ");
            ppsim_fmt_fixed(msg, best->peak_memory / GIB, 2);
            g_string_append(msg, " GiB (that much memory per GPU would hold it)");
        } else {
            g_string_append(msg, ", whose static memory alone is ");
            ppsim_fmt_fixed(msg, best->peak_memory / GIB, 2);
            g_string_append(msg, " GiB per GPU (it needs more, with activations): more "
                                 "memory or more GPUs");
        }
    }
    fprintf(stderr, "ppsim: error: %s\n", msg->str);
    return PPSIM_EXIT_FAILURE;
}

/* --plan for row @r: its layout's scenario, planned and replayed into @out. */
static void
plan_layout(const char *path, char **sets, const PpsimSweepRow *r, Planned *out)
{
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (char **s = sets; s && *s; s++)
        g_ptr_array_add(ov, g_strdup(*s));
    for (int c = 0; c < N_AXIS_COLS; c++)
        g_ptr_array_add(ov, g_strdup_printf("%s=%s", search_paths[c], lab(r, c)));
    g_ptr_array_add(ov, g_strdup_printf("model.recompute=%s", lab(r, COL_RECOMPUTE)));
    g_ptr_array_add(ov, g_strdup_printf("parallel.zero=%s", lab(r, COL_ZERO)));
    g_ptr_array_add(ov, g_strdup_printf("schedule=%s", r->schedule));
    g_ptr_array_add(ov, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_load_file(path, (const char *const *)ov->pdata, &error);
    PpsimPlanOptions po = {.schedule = r->schedule, .time_limit_s = 10};
    g_autoptr(PpsimPlan) plan = sc ? ppsim_plan_new(sc, &po, &error) : NULL;
    /* the planner's choice among its plan and the baselines it replays (never slower):
     * the chosen candidate's replay is the plan's */
    g_autoptr(GPtrArray) cands = plan ? ppsim_plan_choose(plan, sc, &error) : NULL;
    if (cands == NULL) {
        out->why = g_strdup(error->message);
        return;
    }
    const PpsimPlanCandidate *chosen = ppsim_plan_chosen(plan, cands);
    const PpsimRunResult *res = chosen != NULL ? chosen->res : NULL;
    if (res == NULL) {
        out->why = g_strdup("the planned layout did not replay");
        return;
    }
    out->done = TRUE;
    out->tokens_per_s = res->tokens_per_s;
    out->peak_memory = (double)ppsim_run_result_max_peak_memory(res);
    out->fits = !ppsim_run_result_any_oom(res);
    const PpsimPlanAssignment *a = plan->best;
    GString *t = g_string_new("[");
    for (int st = 0; st < a->n_stages; st++) {
        PpsimRecompute m = plan->problem->mode[a->mode[st]];
        g_string_append_printf(t, "%s%d%s", st ? " " : "", a->layers[st],
                               m == PPSIM_RECOMPUTE_NONE        ? ""
                               : m == PPSIM_RECOMPUTE_SELECTIVE ? "s"
                                                                : "f");
    }
    g_string_append_c(t, ']');
    out->split = g_string_free(t, FALSE);
}

/* --resume: the rows already in @path must be this search's (the same points): a file of
 * another search (other --gpus, --schedules or scenario) would mix into the ranking. */
static gboolean
resume_matches(const char *path, const char *header, const GPtrArray *points, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_test(path, G_FILE_TEST_EXISTS) || !g_file_get_contents(path, &text, &len, NULL))
        return TRUE; /* nothing to resume, or the sweep runner says why */
    while (len > 0 && text[len - 1] != '\n')
        len--;
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    if (len == 0 || !ppsim_sweep_parse_csv(text, len, path, header, rows, NULL, NULL))
        return TRUE;
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        gboolean same = r->point < points->len;
        char **v = same ? g_ptr_array_index(points, r->point) : NULL;
        for (int c = 0; same && c < N_AXIS_COLS; c++)
            same = g_strcmp0(r->labels[c], v[c]) == 0;
        if (same && *r->schedule) /* (an invalid point's row has no schedule) */
            same = strcmp(r->schedule, v[N_AXIS_COLS]) == 0;
        if (!same) {
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_IO,
                        "--resume: %s holds another search's rows (point %" G_GUINT64_FORMAT
                        " differs: other --gpus, --schedules, --set or scenario); remove it "
                        "or name another --rows file",
                        path, r->point);
            return FALSE;
        }
    }
    return TRUE;
}

/* ---- running ---------------------------------------------------------------------------- */

static const char search_description[] =
    "Enumerates the layouts of N GPUs for the model and hardware of SCENARIO: tensor\n"
    "parallelism tp within a node (powers of two dividing the heads), pipeline depth pp\n"
    "dividing the layers, data parallelism dp = N / (tp x pp), microbatch sizes 1, 2, 4, 8 with\n"
    "the microbatch count m = global batch / (dp x microbatch size) (the global batch is\n"
    "training.global_batch, else the scenario's m x microbatch_size x dp), chunks 2 and 4 for\n"
    "the generators that take training.chunks, and every schedule (all generators but\n"
    "optpipe, whose MILP per layout is slow: name it in --schedules). Layouts that do not\n"
    "divide are skipped. Each layout takes the first memory plan that fits, in the order\n"
    "ZeRO-1, -2, -3 x recompute none, selective, full; a plan whose static memory alone\n"
    "(weights, gradients, optimizer states) is over memory.limit is pruned before replay.\n"
    "\n"
    "With --plan, the planner then balances the layers and recompute per stage of each of\n"
    "the top layouts (as 'ppsim plan' does), and the plans are replayed.\n"
    "\n"
    "Prints the top layouts by tokens/s with MFU, peak memory and headroom; --format json\n"
    "gives every layout (key 'layouts', sorted). The rows also go to --rows FILE (CSV), which\n"
    "--resume continues after an interruption; the output is then the same byte for byte.\n"
    "\n"
    "Examples:\n"
    "  ppsim search scenarios/llama70b_32xh100.yaml --gpus 64\n"
    "  ppsim search x.yaml --gpus 32 --schedules 1f1b,zb-v --format json | jq '.layouts[0]'\n"
    "  ppsim search x.yaml --gpus 64 --rows rows.csv --plot plots/   # then, if killed: --resume\n"
    "\n"
    "Exit status: 0 ok, 1 bad scenario, no layout divides or none fits, 2 usage error.";

static GOptionContext *
search_context(SearchOptions *o)
{
    GOptionEntry entries[] = {
        {"gpus", 'n', 0, G_OPTION_ARG_INT, &o->gpus, "Number of GPUs to lay out (required)", "N"},
        {"schedules", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o->schedules,
         "Try only these generators (repeatable, or comma-separated)", "LIST"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets,
         "Override a scenario value first, e.g. memory.limit=70GiB (repeatable)", "KEY.PATH=VALUE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o->format,
         "Output on stdout: text (default) or json", "FORMAT"},
        {"top", 0, 0, G_OPTION_ARG_INT, &o->top, "Layouts shown in the text (default 10)", "K"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot,
         "Write search.svg, tokens/s against peak memory with the Pareto front, to DIR", "DIR"},
        {"rows", 'o', 0, G_OPTION_ARG_FILENAME, &o->rows,
         "Keep the rows (one per layout, CSV) in FILE", "FILE"},
        {"resume", 0, 0, G_OPTION_ARG_NONE, &o->resume,
         "Keep the rows already in --rows FILE and run the rest", NULL},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs, "Threads (default: the cores)", "N"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "No progress bar", NULL},
        {"plan", 0, 0, G_OPTION_ARG_NONE, &o->plan,
         "Balance the layers and recompute per stage of the top layouts with the planner "
         "('ppsim plan') and replay them",
         NULL},
        G_OPTION_ENTRY_NULL};
    GOptionContext *ctx = g_option_context_new("SCENARIO - rank the layouts of N GPUs by tokens/s");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, search_description);
    return ctx;
}

/* The GPU counts nearest @n, below and above, that have a layout (0: none found). */
static void
nearest_counts(const PpsimScenario *sc, int n, int batch, int *below, int *above)
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

static int
search_main(SearchOptions *o, const char *path)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_load_file(path, (const char *const *)o->sets, &error);
    if (sc == NULL)
        return ppsim_cli_fail(error);
    if (sc->costs.present)
        return ppsim_cli_usage("%s: search needs the hardware model; the scenario has "
                               "explicit 'costs:'",
                               path);
    g_autoptr(GPtrArray) classes = search_schedules(o->schedules, &error);
    if (classes == NULL)
        return ppsim_cli_usage("%s", error->message);
    int n = o->gpus, g = sc->hardware.gpus_per_node;
    int batch =
        sc->training.global_batch > 0
            ? sc->training.global_batch
            : sc->training.microbatches * sc->training.microbatch_size * MAX(sc->parallel.dp, 1);
    g_autoptr(GPtrArray) points = search_points(sc, n, batch, classes);
    if (points->len == 0) {
        int below, above;
        nearest_counts(sc, n, batch, &below, &above);
        g_autoptr(GString) msg = g_string_new(NULL);
        g_string_append_printf(msg, "--gpus %d: no layout divides", n);
        if (n > g && n % g != 0)
            g_string_append_printf(msg, " (more than a node of %d GPUs, but not whole nodes)", g);
        else
            g_string_append_printf(msg, " (%d layers, %d heads, global batch %d)", sc->model.layers,
                                   sc->model.heads, batch);
        if (below || above) {
            g_string_append(msg, "; nearest GPU counts with a layout:");
            if (below)
                g_string_append_printf(msg, " %d", below);
            if (above)
                g_string_append_printf(msg, "%s %d", below ? "," : "", above);
        }
        fprintf(stderr, "ppsim: error: %s\n", msg->str);
        return PPSIM_EXIT_FAILURE;
    }
    /* fixed for every point */
    g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);
    for (char **s = o->sets; s && *s; s++)
        g_ptr_array_add(sets, g_strdup(*s));
    g_ptr_array_add(sets, NULL);
    g_autoptr(GPtrArray) rungs = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    for (guint i = 0; i < G_N_ELEMENTS(ladder); i++) {
        char **r = g_new0(char *, 3);
        r[0] = g_strdup(ladder[i][0]);
        r[1] = g_strdup(ladder[i][1]);
        g_ptr_array_add(rungs, r);
    }
    g_autoptr(PpsimSweep) sweep =
        ppsim_sweep_new_points(path, (char **)sets->pdata, (char **)search_paths, points,
                               (char **)rung_paths, rungs, &error);
    if (sweep == NULL)
        return ppsim_cli_fail(error);
    g_autofree char *header0 = ppsim_sweep_csv_header(sweep);
    if (o->resume && !resume_matches(o->rows, header0, points, &error))
        return ppsim_cli_fail(error);
    g_autofree char *tmp = NULL;
    if (o->rows == NULL) {
        int fd = g_file_open_tmp("ppsim-search-XXXXXX.csv", &tmp, &error);
        if (fd < 0)
            return ppsim_cli_fail(error);
        close(fd);
    }
    PpsimCliSweepOptions so = {.output = o->rows ? o->rows : tmp,
                               .threads = o->jobs,
                               .resume = o->resume,
                               .quiet = o->quiet,
                               .progress_label = "search"};
    g_autoptr(GPtrArray) ran = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    int rc = ppsim_cli_sweep_rows(sweep, &so, ran);
    /* the report comes from the file, whole: the same bytes whether resumed or not */
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GPtrArray) rows =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_sweep_row_free);
    g_autofree char *header = ppsim_sweep_csv_header(sweep);
    if (rc == PPSIM_EXIT_OK &&
        (!g_file_get_contents(so.output, &text, &len, &error) ||
         !ppsim_sweep_parse_csv(text, len, so.output, header, rows, NULL, &error)))
        rc = ppsim_cli_fail(error);
    if (tmp != NULL)
        g_unlink(tmp);
    if (rc != PPSIM_EXIT_OK)
        return rc;
    g_ptr_array_sort(rows, cmp_rank);
    if (rows->len == 0 || !row_fits(g_ptr_array_index(rows, 0)))
        return report_none_fits(sc, n, rows);
    int top = o->top > 0 ? o->top : 10;
    guint n_planned = 0;
    Planned *planned = NULL;
    if (o->plan) {
        planned = g_new0(Planned, top);
        for (guint i = 0; i < rows->len && i < (guint)top; i++) {
            const PpsimSweepRow *r = g_ptr_array_index(rows, i);
            if (!row_fits(r))
                break;
            plan_layout(path, o->sets, r, &planned[i]);
            n_planned = i + 1;
        }
    }
    g_autoptr(GString) out = g_string_new(NULL);
    if (o->format != NULL && strcmp(o->format, "json") == 0)
        report_json(out, sc, n, rows, planned, n_planned);
    else
        report_text(out, sc, n, rows, top, planned);
    for (guint i = 0; planned != NULL && i < (guint)top; i++) {
        g_free(planned[i].why);
        g_free(planned[i].split);
    }
    g_free(planned);
    if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout) != 0)
        return ppsim_cli_usage_io("writing the results to stdout");
    if (o->plot != NULL) {
        if (g_mkdir_with_parents(o->plot, 0755) != 0) {
            fprintf(stderr, "ppsim: error: --plot: creating %s: %s\n", o->plot, g_strerror(errno));
            return PPSIM_EXIT_FAILURE;
        }
        g_autoptr(GString) svg = g_string_new(NULL);
        char *cols[N_AXIS_COLS + 2 + 1] = {0};
        for (int i = 0; i < N_AXIS_COLS; i++)
            cols[i] = (char *)search_paths[i];
        cols[COL_RECOMPUTE] = "recompute";
        cols[COL_ZERO] = "zero";
        ppsim_sweep_svg_search(svg, rows, cols, N_AXIS_COLS + 2, (double)sc->memory_limit_bytes);
        g_autofree char *file = g_build_filename(o->plot, "search.svg", NULL);
        if (!ppsim_cli_write_file(file, svg->str, svg->len, &error))
            return ppsim_cli_fail(error);
    }
    return PPSIM_EXIT_OK;
}

int
ppsim_cmd_search(int argc, char **argv)
{
    SearchOptions o = {.gpus = G_MININT}; /* G_MININT: --gpus not given */
    g_autoptr(GOptionContext) ctx = search_context(&o);
    int rc;
    if (!ppsim_cli_parse(ctx, &argc, &argv))
        rc = PPSIM_EXIT_USAGE;
    else if (argc != 2)
        rc = ppsim_cli_usage(argc < 2 ? "missing SCENARIO (see 'ppsim search --help')"
                                      : "expected one SCENARIO, got %d arguments",
                             argc - 1);
    else if (o.gpus == G_MININT)
        rc = ppsim_cli_usage("--gpus N is required (the GPUs to lay out)");
    else if (o.gpus < 1)
        rc = ppsim_cli_usage("--gpus must be >= 1, got %d", o.gpus);
    else if (o.gpus > 1 << 20)
        rc = ppsim_cli_usage("--gpus must be at most %d, got %d", 1 << 20, o.gpus);
    else if (o.format && strcmp(o.format, "text") && strcmp(o.format, "json"))
        rc = ppsim_cli_usage("--format must be text or json, got '%s'", o.format);
    else if (o.jobs < 0)
        rc = ppsim_cli_usage("--jobs must be >= 1, got %d", o.jobs);
    else if (o.top < 0)
        rc = ppsim_cli_usage("--top must be >= 1, got %d", o.top);
    else if (o.resume && o.rows == NULL)
        rc = ppsim_cli_usage("--resume needs --rows FILE (the rows written so far)");
    else
        rc = search_main(&o, argv[1]);
    search_options_clear(&o);
    return rc;
}
