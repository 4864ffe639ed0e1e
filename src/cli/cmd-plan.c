/* cmd-plan.c: `ppsim plan SCENARIO`: the holistic planner (src/plan), its plan replayed,
 * optionally against the even-split baselines, and the plan as a scenario fragment. */
#include "cli/cli.h"
#include "plan/plan.h"
#include "report/columns.h"
#include "util/fmt.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct {
    char *schedule;
    char **sets;
    char *output;
    char *format;
    gboolean heuristic, compare, no_replay, timings;
    double time_limit;
} PlanOptions;

/* One row of the output: the plan or a candidate (nothing owned). */
typedef struct {
    const char *name;
    const PpsimPlanAssignment *a;
    const PpsimRunResult *res; /* NULL when not replayed */
} PlanRow;

static const char plan_description[] =
    "Chooses, for the schedule family of SCENARIO (its first schedule, or --schedule), how\n"
    "many transformer layers each pipeline stage holds and how each stage recomputes (none,\n"
    "selective, full, and for a mixture of experts moe: its MLP blocks re-run), minimising\n"
    "the recompute, imbalance and warm-up/cool-down bubbles together under memory.limit: an\n"
    "integer program on CBC, or a local search labelled 'heuristic' when ppsim was built\n"
    "without CBC (or with --heuristic). A solve stopped by --time-limit says how far its plan\n"
    "is from the solver's bound. The plan is then replayed by the simulator next to the\n"
    "baselines (even split with full recompute, greedy modes on the even split, the scenario\n"
    "as given; for zb-v each also with its cap sized from memory.limit), and the fastest that\n"
    "fits is the plan: never slower than a baseline (--no-replay returns the optimiser's plan\n"
    "unchecked). -o writes it as a scenario fragment for 'ppsim run --with'. When no plan\n"
    "fits, the error names the smallest memory limit that would.\n"
    "\n"
    "The text shows each stage's device, layers and mode, the predicted makespan, peak\n"
    "memory and bubbles (recompute B_R, imbalance B_I, warm-up/cool-down B_P, summed over\n"
    "devices), then the replayed makespan and peak memory of each candidate and the gap\n"
    "between prediction and replay. src/README.md \"The planner\" has the model.\n"
    "\n"
    "Examples:\n"
    "  ppsim plan scenarios/plan/llama3-8b-a100.yaml --compare\n"
    "  ppsim plan x.yaml --schedule interleaved --set memory.limit=40GiB --compare\n"
    "  ppsim plan x.yaml --schedule zb-h1 -o plan.yaml && ppsim run x.yaml --with plan.yaml\n"
    "  ppsim plan x.yaml --format json | jq '.plan.stage_layers'\n"
    "\n"
    "Exit status: 0 ok, 1 bad scenario or no plan fits, 2 usage error.";

/* The plan, then with --compare every candidate the planner replayed (ppsim_plan_choose):
 * the optimiser's plan, Megatron's even split with full recompute everywhere, the greedy
 * baseline (even split, each stage's fastest mode that fits), the scenario as given, and
 * for zb-v each with the cap sized from memory.limit ("+cap"). */
static GArray *
plan_rows(const PpsimPlan *plan, const GPtrArray *cands, gboolean compare)
{
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(PlanRow));
    const PpsimPlanCandidate *chosen = ppsim_plan_chosen(plan, cands);
    PlanRow row = {"plan", plan->best, chosen != NULL ? chosen->res : NULL};
    g_array_append_val(rows, row);
    for (guint i = 0; compare && cands != NULL && i < cands->len; i++) {
        const PpsimPlanCandidate *c = g_ptr_array_index(cands, i);
        if (c->res == NULL)
            continue;
        row = (PlanRow){c->name, c->a, c->res};
        g_array_append_val(rows, row);
    }
    return rows;
}

static void
plan_text_assignment(GString *out, const PpsimPlanProblem *pb, const PpsimPlanAssignment *a)
{
    g_string_append(out, "[");
    for (int s = 0; s < a->n_stages; s++) {
        PpsimRecompute r = pb->mode[a->mode[s]];
        const char *mark = ppsim_recompute_mark(r);
        if (a->mode[s] != 0 && a->mixed[s] >= 0) /* 9(3f): the first 3 of 9 recomputed */
            g_string_append_printf(out, "%s%d(%d%s)", s ? " " : "", a->layers[s], a->mixed[s],
                                   mark);
        else
            g_string_append_printf(out, "%s%d%s", s ? " " : "", a->layers[s], mark);
    }
    g_string_append(out, "]");
}

/* The solver stopped at a limit with a plan of its own, whose distance to the best bound is
 * known. */
static gboolean
plan_stopped(const PpsimPlan *plan)
{
    return strcmp(plan->method, "ilp") == 0 &&
           (strcmp(plan->status, "time_limit") == 0 || strcmp(plan->status, "node_limit") == 0) &&
           isfinite(plan->gap) && plan->gap > 0;
}

static void
plan_text(GString *out, const PpsimScenario *sc, const PpsimPlan *plan, const GArray *rows)
{
    const PpsimPlanProblem *pb = plan->problem;
    const PpsimPlanAssignment *a = plan->best;
    gboolean ilp = strcmp(plan->method, "ilp") == 0;
    g_string_append_printf(out, "plan for scenario %s: schedule %s (p=%d, v=%d, m=%d), %s%s%s",
                           sc->name, pb->schedule, pb->p, pb->v, pb->m, ilp ? "ILP on CBC, " : "",
                           ilp ? plan->status : "HEURISTIC",
                           ilp ? "" : " (local search, CBC not used)");
    if (plan_stopped(plan)) {
        g_string_append(out, " (its plan within ");
        ppsim_fmt_fixed(out, 100.0 * plan->gap, 2);
        g_string_append(out, "% of the solver's bound)");
    }
    g_string_append_c(out, '\n');
    if (strcmp(plan->source, plan->method) != 0)
        g_string_append_printf(out,
                               "the plan is the %s candidate: it replays faster than the %s's own "
                               "plan (see --compare)\n",
                               plan->source,
                               strcmp(plan->method, "ilp") == 0 ? "ILP" : "local search");
    if (plan->free_cap)
        g_string_append(out, "zb-v's cap: sized by the generator from memory.limit (it replays "
                             "faster than pinned at p M_B)\n");
    g_string_append(out, "stage device layers recompute\n");
    for (int s = 0; s < a->n_stages; s++) {
        g_autofree char *mode = a->mode[s] != 0 && a->mixed[s] >= 0
                                    ? g_strdup_printf("%s for the first %d, none for %d",
                                                      ppsim_recompute_name(pb->mode[a->mode[s]]),
                                                      a->mixed[s], a->layers[s] - a->mixed[s])
                                    : g_strdup(ppsim_recompute_name(pb->mode[a->mode[s]]));
        g_string_append_printf(
            out, "%5d %6d %6d %s%s\n", s, pb->stage_device[s], a->layers[s], mode,
            s == 0                 ? " (+ embedding)"
            : s == a->n_stages - 1 ? (sc->model.mtp_layers > 0 ? " (+ head, MTP)" : " (+ head)")
                                   : "");
    }
    g_string_append(out, "predicted: makespan ");
    ppsim_fmt_fixed(out, a->makespan_ms, 3);
    g_string_append(out, " ms, peak memory ");
    ppsim_fmt_fixed(out, a->peak_memory / GIB, 2);
    g_string_append(out, " GiB; bubbles (ms, summed over devices): recompute ");
    ppsim_fmt_fixed(out, a->b_recompute_ms, 3);
    g_string_append(out, ", imbalance ");
    ppsim_fmt_fixed(out, a->b_imbalance_ms, 3);
    g_string_append(out, ", warm-up/cool-down ");
    ppsim_fmt_fixed(out, a->b_preparation_ms, 3);
    g_string_append_c(out, '\n');
    if (g_array_index(rows, PlanRow, 0).res == NULL)
        return;
    g_string_append(out, "\nreplayed (split: layers per stage, s/m/f/u = "
                         "selective/moe/full/mla_up_proj recompute)\n");
    g_string_append(out,
                    "candidate      predicted(ms)  replayed(ms)    gap  peak_mem(GiB) oom split\n");
    for (guint i = 0; i < rows->len; i++) {
        const PlanRow *row = &g_array_index(rows, PlanRow, i);
        const PpsimRunResult *res = row->res;
        double replay_ms = (double)res->makespan_ps / PPSIM_PS_PER_MS;
        g_autoptr(GString) cell = g_string_new(NULL);
        g_string_append_printf(out, "%-13s ", row->name);
        ppsim_fmt_fixed(cell, row->a->makespan_ms, 3);
        g_string_append_printf(out, "%14s ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, replay_ms, 3);
        g_string_append_printf(out, "%13s ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, 100.0 * (replay_ms - row->a->makespan_ms) / replay_ms, 1);
        g_string_append_printf(out, "%5s%% ", cell->str);
        g_string_truncate(cell, 0);
        ppsim_fmt_fixed(cell, (double)ppsim_run_result_max_peak_memory(res) / GIB, 2);
        g_string_append_printf(out, "%14s %-3s ", cell->str,
                               ppsim_run_result_fits(res) ? "-" : "yes");
        plan_text_assignment(out, pb, row->a);
        g_string_append_c(out, '\n');
    }
}

static void
plan_json_assignment(GString *out, const PpsimPlanProblem *pb, const PlanRow *row)
{
    const PpsimPlanAssignment *a = row->a;
    g_string_append_printf(out, "{\"name\":\"%s\",\"stage_layers\":[", row->name);
    for (int s = 0; s < a->n_stages; s++)
        g_string_append_printf(out, "%s%d", s ? "," : "", a->layers[s]);
    g_string_append(out, "],\"stage_recompute\":[");
    for (int s = 0; s < a->n_stages; s++)
        g_string_append_printf(out, "%s\"%s\"", s ? "," : "",
                               ppsim_recompute_name(pb->mode[a->mode[s]]));
    /* layers of each stage in that mode; the rest are in none */
    g_string_append(out, "],\"stage_recompute_layers\":[");
    for (int s = 0; s < a->n_stages; s++)
        g_string_append_printf(out, "%s%d", s ? "," : "",
                               a->mode[s] == 0 ? 0 : ppsim_plan_in_mode(a, s));
    g_string_append(out, "],\"predicted_makespan\":");
    ppsim_fmt_double(out, a->makespan_ms);
    g_string_append(out, ",\"predicted_peak_memory\":");
    g_string_append_printf(out, "%.0f", a->peak_memory);
    g_string_append(out, ",\"predicted_bubbles\":{\"recompute\":");
    ppsim_fmt_double(out, a->b_recompute_ms);
    g_string_append(out, ",\"imbalance\":");
    ppsim_fmt_double(out, a->b_imbalance_ms);
    g_string_append(out, ",\"preparation\":");
    ppsim_fmt_double(out, a->b_preparation_ms);
    g_string_append_c(out, '}');
    if (row->res != NULL) {
        g_string_append(out, ",\"makespan\":");
        ppsim_fmt_ms(out, row->res->makespan_ps);
        /* the run's figures as every report writes them (report/columns.h) */
        g_string_append(out, ",\"peak_memory\":");
        ppsim_device_column_append_max(out, ppsim_device_column_find("peak_memory"), row->res);
        /* plan packs against the whole budget: a tight device does not fit (run-result.h) */
        g_string_append(out, ",\"oom\":");
        g_string_append(out, ppsim_run_result_fits(row->res) ? "false" : "true");
        g_string_append(out, ",\"memory_verdict\":");
        ppsim_device_column_append_max(out, ppsim_device_column_find("memory_verdict"), row->res);
    }
    g_string_append_c(out, '}');
}

static void
plan_json(GString *out, const PpsimScenario *sc, const PpsimPlan *plan, const GArray *rows)
{
    const PpsimPlanProblem *pb = plan->problem;
    g_string_append(out, "{\"schema_version\":1,\"scenario\":");
    ppsim_fmt_json_string(out, sc->name);
    g_string_append_printf(out,
                           ",\"schedule\":\"%s\",\"p\":%d,\"v\":%d,\"m\":%d,\"method\":\"%s\","
                           "\"rounds\":%d,\"solver\":{\"status\":\"%s\",\"seconds\":",
                           pb->schedule, pb->p, pb->v, pb->m, plan->method, plan->rounds,
                           plan->status);
    ppsim_fmt_double(out, plan->seconds);
    if (plan_stopped(plan)) {
        g_string_append(out, ",\"gap\":");
        ppsim_fmt_double(out, plan->gap);
    }
    g_string_append(out, "},\"memory_limit\":");
    g_string_append_printf(out, "%.0f", pb->gpu_limit); /* memory.limit, not the allocator share */
    g_string_append(out, ",\"stage_device\":[");
    for (int s = 0; s < pb->n_stages; s++)
        g_string_append_printf(out, "%s%d", s ? "," : "", pb->stage_device[s]);
    g_string_append(out, "],\"plan\":");
    plan_json_assignment(out, pb, &g_array_index(rows, PlanRow, 0));
    g_string_truncate(out, out->len - 1); /* its closing brace */
    g_string_append_printf(out, ",\"from\":\"%s\",\"free_cap\":%s}", plan->source,
                           plan->free_cap ? "true" : "false");
    /* even-full and greedy first, as before the other candidates were added */
    g_string_append(out, ",\"baselines\":[");
    gboolean first = TRUE;
    for (int pass = 0; pass < 2; pass++)
        for (guint i = 1; i < rows->len; i++) {
            const PlanRow *row = &g_array_index(rows, PlanRow, i);
            gboolean classic =
                strcmp(row->name, "even-full") == 0 || strcmp(row->name, "greedy") == 0;
            if (classic != (pass == 0))
                continue;
            if (!first)
                g_string_append_c(out, ',');
            first = FALSE;
            plan_json_assignment(out, pb, row);
        }
    g_string_append(out, "]}\n");
}

static int
plan_main(const PlanOptions *o, const char *path)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_load_file(path, (const char *const *)o->sets, &error);
    if (sc == NULL)
        return ppsim_cli_fail(error);
    PpsimPlanOptions po = {
        .schedule = o->schedule, .heuristic = o->heuristic, .time_limit_s = o->time_limit};
    g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &po, &error);
    if (plan == NULL)
        return ppsim_cli_fail(error);
    if (o->schedule == NULL) {
        /* none was named: say which one was planned (the scenario's first) */
        if (sc->schedules->len > 1)
            fprintf(stderr,
                    "ppsim: note: planned for '%s', the first of the scenario's %u schedules; "
                    "--schedule NAME plans another\n",
                    plan->problem->schedule, sc->schedules->len);
        else
            fprintf(stderr,
                    "ppsim: note: planned for '%s', the scenario's schedule; --schedule NAME "
                    "plans another\n",
                    plan->problem->schedule);
    }
    g_autoptr(GPtrArray) cands = NULL;
    if (!o->no_replay && (cands = ppsim_plan_choose(plan, sc, &error)) == NULL)
        return ppsim_cli_fail(error);
    g_autoptr(GArray) rows = plan_rows(plan, cands, o->compare);
    g_autoptr(GString) out = g_string_new(NULL);
    if (o->format && strcmp(o->format, "json") == 0)
        plan_json(out, sc, plan, rows);
    else
        plan_text(out, sc, plan, rows);
    fputs(out->str, stdout);
    if (strcmp(plan->status, "crashed") == 0)
        ppsim_cli_warning("the ILP solver (CBC) died before it answered; the plan is the local "
                          "search's (its start)");
    if (o->timings)
        fprintf(stderr, "ppsim: timings: plan %s %.2f s\n", plan->method, plan->seconds);
    if (o->output != NULL) {
        g_autoptr(GString) frag = g_string_new(NULL);
        ppsim_plan_write_fragment(frag, sc, plan);
        if (!ppsim_cli_write_file(o->output, frag->str, frag->len, &error))
            return ppsim_cli_fail(error);
    }
    return PPSIM_EXIT_OK;
}

int
ppsim_cmd_plan(int argc, char **argv)
{
    PlanOptions o = {0};
    GOptionEntry entries[] = {
        {"schedule", 's', 0, G_OPTION_ARG_STRING, &o.schedule,
         "Schedule family to plan for (default: the scenario's first), e.g. 1f1b, interleaved, "
         "zb-h1, zb-v",
         "NAME"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
         "Override a scenario value, e.g. memory.limit=40GiB (repeatable)", "KEY.PATH=VALUE"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
         "Write the plan as a scenario fragment (for 'ppsim run --with')", "FILE.yaml"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o.format, "Output on stdout: text or json",
         "FORMAT"},
        {"compare", 0, 0, G_OPTION_ARG_NONE, &o.compare,
         "Also show every candidate replayed: the optimiser's plan, even split with full "
         "recompute, greedy (even split, each stage's fastest recompute mode that fits), the "
         "scenario as given, and for zb-v each with its cap from memory.limit (+cap)",
         NULL},
        {"heuristic", 0, 0, G_OPTION_ARG_NONE, &o.heuristic,
         "Use the local search even when CBC is available", NULL},
        {"time-limit", 0, 0, G_OPTION_ARG_DOUBLE, &o.time_limit,
         "Solver wall-clock limit in seconds (default 60)", "S"},
        {"no-replay", 0, 0, G_OPTION_ARG_NONE, &o.no_replay, "Only plan; do not simulate", NULL},
        {"timings", 0, 0, G_OPTION_ARG_NONE, &o.timings, "Print the solver's wall time on stderr",
         NULL},
        G_OPTION_ENTRY_NULL};
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("SCENARIO - plan layers and recompute per stage (ILP)");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, plan_description);
    int rc;
    if (!ppsim_cli_parse(ctx, &argc, &argv))
        rc = PPSIM_EXIT_USAGE;
    else if (o.format && strcmp(o.format, "text") && strcmp(o.format, "json"))
        rc = ppsim_cli_usage_quoted("--format must be text or json, got", o.format);
    else if (!isfinite(o.time_limit) || o.time_limit < 0)
        rc = ppsim_cli_usage(
            "--time-limit must be a number of seconds (0: the default, 60), got %g", o.time_limit);
    else if (argc != 2)
        rc = ppsim_cli_usage(argc < 2 ? "missing SCENARIO (see 'ppsim plan --help')"
                                      : "expected one SCENARIO, got %d arguments",
                             argc - 1);
    else
        rc = plan_main(&o, argv[1]);
    g_free(o.schedule);
    g_strfreev(o.sets);
    g_free(o.output);
    g_free(o.format);
    return rc;
}
