/* cmd-search-report.c: what `ppsim search` prints of its rows (cmd-search-internal.h): the
 * ranking, the text table of the top layouts (and their --plan splits), the JSON of every
 * layout, and the one-line error when none fits. */
#include "cli/cli.h"
#include "cli/cmd-search-internal.h"
#include "util/fmt.h"

#include <stdio.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

gboolean
ppsim_cli_search_row_fits(const PpsimSweepRow *r)
{
    return r->has_metrics && !r->oom;
}

/* Fitting rows by tokens/s (then point, schedule); the rest by peak memory. */
int
ppsim_cli_search_cmp_rank(gconstpointer pa, gconstpointer pb)
{
    const PpsimSweepRow *a = *(PpsimSweepRow *const *)pa, *b = *(PpsimSweepRow *const *)pb;
    gboolean fa = ppsim_cli_search_row_fits(a), fb = ppsim_cli_search_row_fits(b);
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

const char *
ppsim_cli_search_label(const PpsimSweepRow *r, int col)
{
    return r->labels[col] ? r->labels[col] : "";
}

/* The row's ZeRO stage as it acts: 0 with one replica and no context parallelism (ZeRO
 * shards over dp x cp; nothing to shard over). */
static const char *
row_zero(const PpsimSweepRow *r)
{
    const char *cp = ppsim_cli_search_label(r, COL_CP);
    gboolean alone = strcmp(ppsim_cli_search_label(r, COL_DP), "1") == 0 &&
                     (*cp == '\0' || strcmp(cp, "1") == 0);
    return alone ? "0" : ppsim_cli_search_label(r, COL_ZERO);
}

/* "tp=4 pp=8 dp=2 mbs=1 m=64 v=2 zb-v recompute=none zero=1" */
static void
layout_text(GString *out, const PpsimSweepRow *r)
{
    g_string_append_printf(out, "tp=%s pp=%s dp=%s", ppsim_cli_search_label(r, COL_TP),
                           ppsim_cli_search_label(r, COL_PP), ppsim_cli_search_label(r, COL_DP));
    if (strcmp(ppsim_cli_search_label(r, COL_CP), "1") != 0)
        g_string_append_printf(out, " cp=%s", ppsim_cli_search_label(r, COL_CP));
    if (strcmp(ppsim_cli_search_label(r, COL_EP), "1") != 0)
        g_string_append_printf(out, " ep=%s", ppsim_cli_search_label(r, COL_EP));
    if (strcmp(ppsim_cli_search_label(r, COL_ETP), ppsim_cli_search_label(r, COL_TP)) != 0)
        g_string_append_printf(out, " etp=%s", ppsim_cli_search_label(r, COL_ETP));
    g_string_append_printf(out, " mbs=%s m=%s", ppsim_cli_search_label(r, COL_MBS),
                           ppsim_cli_search_label(r, COL_M));
    if (strcmp(ppsim_cli_search_label(r, COL_V), "1") != 0)
        g_string_append_printf(out, " v=%s", ppsim_cli_search_label(r, COL_V));
    g_string_append_printf(out, " %s", r->schedule);
    if (*ppsim_cli_search_label(r, COL_RECOMPUTE))
        g_string_append_printf(out, " recompute=%s", ppsim_cli_search_label(r, COL_RECOMPUTE));
    if (*ppsim_cli_search_label(r, COL_ZERO))
        g_string_append_printf(out, " zero=%s", row_zero(r));
}

void
ppsim_cli_search_report_text(GString *out, const PpsimScenario *sc, int n, const GPtrArray *rows,
                             int top, const Planned *planned)
{
    guint fit = 0, oom = 0, pruned = 0, other = 0;
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (ppsim_cli_search_row_fits(r))
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
                         "replayed (s/m/f/u: selective/moe/full/mla_up_proj recompute)\n");
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

void
ppsim_cli_search_report_json(GString *out, const PpsimScenario *sc, int n, const GPtrArray *rows,
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
                               "\"etp\":%s,\"microbatch_size\":%s,\"microbatches\":%s,"
                               "\"chunks\":%s,\"schedule\":",
                               i ? "," : "", ppsim_cli_search_label(r, COL_TP),
                               ppsim_cli_search_label(r, COL_PP), ppsim_cli_search_label(r, COL_DP),
                               ppsim_cli_search_label(r, COL_CP), ppsim_cli_search_label(r, COL_EP),
                               ppsim_cli_search_label(r, COL_ETP),
                               ppsim_cli_search_label(r, COL_MBS), ppsim_cli_search_label(r, COL_M),
                               ppsim_cli_search_label(r, COL_V));
        ppsim_fmt_json_string(out, r->schedule);
        g_string_append(out, ",\"recompute\":");
        if (*ppsim_cli_search_label(r, COL_RECOMPUTE))
            ppsim_fmt_json_string(out, ppsim_cli_search_label(r, COL_RECOMPUTE));
        else
            g_string_append(out, "null");
        g_string_append_printf(out, ",\"zero\":%s,\"status\":\"%s\"",
                               *ppsim_cli_search_label(r, COL_ZERO) ? row_zero(r) : "null",
                               r->status);
        json_num_or_null(out, "tokens_per_s", r, r->tokens_per_s);
        json_num_or_null(out, "mfu", r, r->mfu);
        json_num_or_null(out, "makespan_ms", r, r->makespan_ms);
        g_string_append(out, ",\"peak_memory\":");
        if (r->has_metrics || r->peak_memory > 0)
            ppsim_fmt_fixed(out, r->peak_memory, 0);
        else
            g_string_append(out, "null");
        g_string_append_printf(out, ",\"fits\":%s",
                               ppsim_cli_search_row_fits(r) ? "true" : "false");
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
 * smallest static memory of the pruned ones). Rows are sorted (ppsim_cli_search_cmp_rank). */
int
ppsim_cli_search_report_none_fits(const PpsimScenario *sc, int n, const GPtrArray *rows)
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
