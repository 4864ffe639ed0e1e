/* cmd-search.c: `ppsim search SCENARIO --gpus N`: every layout of N GPUs a practitioner
 * would consider (tp within a node, pp, dp, microbatch size, chunks, every schedule), each
 * with the cheapest memory plan that fits (recompute, ZeRO stage), ranked by tokens/s.
 *
 * The layouts run as a sweep over an explicit point list with a ladder of memory plans
 * (sweep.h): rows go to a CSV file (--rows, else a temporary one) that --resume continues
 * after an interruption, and the report is always made from that file, so a resumed search
 * prints byte for byte what an uninterrupted one prints. */
#include "cli/cli.h"
#include "cli/cmd-search-internal.h"
#include "cost/kernels.h"
#include "plan/plan.h"
#include "sim/sim.h"
#include "sweep/sweep.h"
#include "util/ppsim-error.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static void
search_options_clear(SearchOptions *o)
{
    g_strfreev(o->schedules);
    g_strfreev(o->sets);
    g_free(o->format);
    g_free(o->plot);
    g_free(o->rows);
}

/* ---- evaluating ------------------------------------------------------------------------- */

/* --plan for row @r: its layout's scenario, planned and replayed into @out. */
static void
plan_layout(const char *path, char **sets, const PpsimSweepRow *r, Planned *out)
{
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (char **s = sets; s && *s; s++)
        g_ptr_array_add(ov, g_strdup(*s));
    for (int c = 0; c < N_AXIS_COLS; c++)
        g_ptr_array_add(
            ov, g_strdup_printf("%s=%s", ppsim_cli_search_paths[c], ppsim_cli_search_label(r, c)));
    g_ptr_array_add(
        ov, g_strdup_printf("model.recompute=%s", ppsim_cli_search_label(r, COL_RECOMPUTE)));
    g_ptr_array_add(ov, g_strdup_printf("parallel.zero=%s", ppsim_cli_search_label(r, COL_ZERO)));
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
    out->fits = ppsim_run_result_fits(res);
    const PpsimPlanAssignment *a = plan->best;
    GString *t = g_string_new("[");
    for (int st = 0; st < a->n_stages; st++) {
        PpsimRecompute m = plan->problem->mode[a->mode[st]];
        g_string_append_printf(t, "%s%d%s", st ? " " : "", a->layers[st], ppsim_recompute_mark(m));
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
    "dividing the layers, context parallelism cp (powers of two up to 16 while each GPU keeps at\n"
    "least 4,096 tokens of the sequence), data parallelism dp = N / (tp x pp x cp), for a\n"
    "mixture of experts expert parallelism ep (powers of two dividing the experts and tp x cp\n"
    "x dp; the experts split over tp when ep divides cp x dp, else whole: etp 1), microbatch\n"
    "sizes 1, 2, 4, 8 with the microbatch count m = global batch / (dp x microbatch size) (the\n"
    "global batch is training.global_batch, else the scenario's m x microbatch_size x dp),\n"
    "chunks 2 and 4 for the generators that take training.chunks, and every schedule (all\n"
    "generators but optpipe, whose MILP per layout is slow: name it in --schedules). Layouts\n"
    "that do not divide are skipped; the scenario's model.stage_layers and stage_recompute,\n"
    "written for one pp, are dropped. Each layout takes the first memory plan that fits, in the\n"
    "order ZeRO-1, -2, -3 x recompute none, mla_up_proj (multi-head latent attention only),\n"
    "selective, moe (a mixture of experts only), full;\n"
    "a plan whose static memory alone (weights, gradients, optimizer states) is over\n"
    "memory.limit is pruned before replay.\n"
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
    /* a GPU without the numbers the kernel model needs fails every layout alike: say why */
    if (!ppsim_kernels_check(sc, &error))
        return ppsim_cli_fail(error);
    g_autoptr(GPtrArray) classes = ppsim_cli_search_schedules(o->schedules, &error);
    if (classes == NULL)
        return ppsim_cli_usage("%s", error->message);
    int n = o->gpus, g = sc->hardware.gpus_per_node;
    int batch =
        sc->training.global_batch > 0
            ? sc->training.global_batch
            : sc->training.microbatches * sc->training.microbatch_size * MAX(sc->parallel.dp, 1);
    g_autoptr(GPtrArray) points = ppsim_cli_search_points(sc, n, batch, classes);
    if (points->len == 0) {
        int below, above;
        ppsim_cli_search_nearest_counts(sc, n, batch, &below, &above);
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
    /* fixed for every point: the user's --set, then no per-stage lists (written for one pp,
     * they fit no other; each layout splits its layers evenly, --plan balances them) */
    g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);
    for (char **s = o->sets; s && *s; s++)
        g_ptr_array_add(sets, g_strdup(*s));
    g_ptr_array_add(sets, g_strdup("model.stage_layers=[]"));
    g_ptr_array_add(sets, g_strdup("model.stage_recompute=[]"));
    g_ptr_array_add(sets, NULL);
    g_autoptr(GPtrArray) rungs = ppsim_cli_search_rungs(sc);
    g_autoptr(PpsimSweep) sweep =
        ppsim_sweep_new_points(path, (char **)sets->pdata, (char **)ppsim_cli_search_paths, points,
                               (char **)ppsim_cli_search_rung_paths, rungs, &error);
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
    g_ptr_array_sort(rows, ppsim_cli_search_cmp_rank);
    if (rows->len == 0 || !ppsim_cli_search_row_fits(g_ptr_array_index(rows, 0)))
        return ppsim_cli_search_report_none_fits(sc, n, rows);
    int top = o->top > 0 ? o->top : 10;
    guint n_planned = 0;
    Planned *planned = NULL;
    if (o->plan) {
        planned = g_new0(Planned, top);
        for (guint i = 0; i < rows->len && i < (guint)top; i++) {
            const PpsimSweepRow *r = g_ptr_array_index(rows, i);
            if (!ppsim_cli_search_row_fits(r))
                break;
            plan_layout(path, o->sets, r, &planned[i]);
            n_planned = i + 1;
        }
    }
    g_autoptr(GString) out = g_string_new(NULL);
    if (o->format != NULL && strcmp(o->format, "json") == 0)
        ppsim_cli_search_report_json(out, sc, n, rows, planned, n_planned);
    else
        ppsim_cli_search_report_text(out, sc, n, rows, top, planned);
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
            cols[i] = (char *)ppsim_cli_search_paths[i];
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
