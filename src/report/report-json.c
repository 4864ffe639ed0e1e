/* report-json.c: the JSON summary. Keys are a contract; new keys may be added,
 * existing ones never change meaning without a schema_version bump. Times are milliseconds
 * (time_unit), memory is bytes (integers) or explicit-mode units (memory_unit).
 */
#include "report/report.h"
#include "report/columns.h"
#include "util/fmt.h"

#include <math.h>

static void
json_string(GString *out, const char *s)
{
    ppsim_fmt_json_string(out, s);
}

static void
json_key(GString *out, const char *key)
{
    json_string(out, key);
    g_string_append_c(out, ':');
}

/* One device object: the columns of columns.h, in order, each group ("idle", "bubbles") an
 * object of its own. */
static void
json_device(GString *out, const PpsimRunResult *res, const PpsimDeviceResult *d)
{
    const char *group = NULL;
    gboolean first = TRUE;
    g_string_append_c(out, '{');
    for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++) {
        if ((c->flags & PPSIM_COLUMN_T_OFFLOAD) && !(d->optimizer_overlap >= 0))
            continue;
        if ((c->flags & PPSIM_COLUMN_MEMORY_BREAKDOWN) && !d->has_breakdown)
            continue;
        if ((c->flags & PPSIM_COLUMN_COMPUTE_BREAKDOWN) && !res->has_compute_breakdown)
            continue;
        if (g_strcmp0(c->group, group) != 0) {
            if (group != NULL)
                g_string_append_c(out, '}');
            if (c->group != NULL) {
                g_string_append_c(out, ',');
                json_key(out, c->group);
                g_string_append_c(out, '{');
                first = TRUE;
            }
            group = c->group;
        }
        if (!first)
            g_string_append_c(out, ',');
        first = FALSE;
        json_key(out, c->json);
        ppsim_device_column_append(out, c, res, d);
    }
    if (group != NULL)
        g_string_append_c(out, '}');
    if (res->samples != NULL) { /* --samples: report-samples.c (per device, not columns) */
        g_string_append(out, ",\"critical_share\":");
        ppsim_fmt_double(out, res->samples->critical_share[d->id]);
        g_string_append(out, ",\"slack\":");
        ppsim_fmt_fixed(out, res->samples->slack_mean_ps[d->id] / PPSIM_PS_PER_MS, 6);
        g_string_append(out, ",\"critical_ops\":");
        ppsim_fmt_double(out, res->samples->critical_ops[d->id]);
    }
    g_string_append_c(out, '}');
}

static void
json_number_or_null(GString *out, const char *key, double v)
{
    g_string_append_c(out, ',');
    json_key(out, key);
    if (isfinite(v))
        ppsim_fmt_double(out, v);
    else
        g_string_append(out, "null");
}

/* src/README.md "OptPipe", paths and report: solver{status, objective, bound, gap, seconds} for
 * MILP schedules, plus the path that produced the schedule and why (objective and bound in ms).
 * Status and objective are those of the schedule returned; milp_status and milp_objective are
 * the solver's own (they differ when the returned schedule is not the solver's). */
static void
json_solver(GString *out, const PpsimRunResult *res)
{
    g_string_append(out, ",\"solver\":{\"status\":");
    json_string(out, res->solver.status);
    json_number_or_null(out, "objective", res->solver.objective_ms);
    json_number_or_null(out, "bound", res->solver.bound_ms);
    json_number_or_null(out, "gap", res->solver.gap);
    json_number_or_null(out, "seconds", res->solver.seconds);
    g_string_append(out, ",\"path\":");
    json_string(out, res->solver.path);
    g_string_append(out, ",\"note\":");
    json_string(out, res->solver.note);
    g_string_append(out, ",\"milp_status\":");
    json_string(out, res->solver.milp_status);
    json_number_or_null(out, "milp_objective", res->solver.milp_objective_ms);
    g_string_append_c(out, '}');
}

static void
json_result(GString *out, const PpsimRunResult *res)
{
    g_string_append_c(out, '{');
    json_key(out, "schedule");
    json_string(out, res->label);
    g_string_append_c(out, ',');
    json_key(out, "generator");
    json_string(out, res->generator);
    g_string_append_printf(out,
                           ",\"p\":%d,\"v\":%d,\"m\":%d,\"stages_total\":%d,\"makespan\":", res->p,
                           res->v, res->m, res->n_stages);
    ppsim_fmt_ms(out, res->makespan_ps);
    g_string_append(out, ",\"time_unit\":\"ms\",\"bubble_ratio\":");
    ppsim_fmt_double(out, res->bubble_ratio);
    g_string_append(out, ",\"bubble_ratio_span\":");
    ppsim_fmt_double(out, res->bubble_ratio_span);
    g_string_append(out, ",\"memory_unit\":");
    json_string(out, res->memory_unit);
    g_string_append(out, ",\"memory_limit\":");
    ppsim_fmt_mem(out, res->memory_limit, res->mem_scale);
    g_string_append(out, ",\"memory_verdict\":");
    ppsim_fmt_json_string(out, ppsim_mem_verdict_name(ppsim_run_result_verdict(res)));
    g_string_append(out, ",\"offload_ratio_k\":");
    if (res->explicit_mode)
        g_string_append(out, "null");
    else
        ppsim_fmt_double(out, res->offload_ratio_k);
    g_string_append(out, ",\"offload_ratio_k_scenario\":");
    if (res->explicit_mode)
        g_string_append(out, "null");
    else
        ppsim_fmt_double(out, res->offload_ratio_k_scenario);
    for (int part = 0; part < 2; part++) {
        g_string_append(out, part == 0 ? ",\"choices\":{" : "},\"choice_notes\":{");
        for (guint i = 0; res->choices != NULL && i < res->choices->len; i++) {
            const PpsimChoice *c = &g_array_index(res->choices, PpsimChoice, i);
            if (i > 0)
                g_string_append_c(out, ',');
            json_key(out, c->key);
            json_string(out, part == 0 ? c->value : c->note);
        }
    }
    g_string_append_c(out, '}');
    if (res->solver.present)
        json_solver(out, res);
    if (res->samples != NULL)
        ppsim_report_json_samples(out, res->samples, res->makespan_ps);
    g_string_append(out, ",\"devices\":[");
    for (int d = 0; d < res->p; d++) {
        if (d > 0)
            g_string_append_c(out, ',');
        json_device(out, res, &res->devices[d]);
    }
    g_string_append(out, "],\"hosts\":[");
    for (int h = 0; h < res->n_hosts; h++) {
        const PpsimHostResult *host = &res->hosts[h];
        g_string_append_printf(out, "%s{\"node\":%d,\"peak_memory\":", h > 0 ? "," : "",
                               host->node);
        ppsim_fmt_mem(out, host->peak_memory, res->mem_scale);
        g_string_append(out, ",\"limit\":");
        ppsim_fmt_mem(out, host->limit, res->mem_scale);
        g_string_append_printf(out, ",\"oom\":%s}", host->oom ? "true" : "false");
    }
    g_string_append(out, "],\"mfu\":");
    if (res->explicit_mode)
        g_string_append(out, "null");
    else
        ppsim_fmt_double(out, res->mfu);
    g_string_append(out, ",\"model_flops\":");
    ppsim_fmt_double(out, res->model_flops);
    g_string_append(out, ",\"tokens_per_s\":");
    if (res->tokens > 0)
        ppsim_fmt_double(out, res->tokens_per_s);
    else /* explicit costs without a model's sequence length: no token count */
        g_string_append(out, "null");
    g_string_append(out, ",\"tflops_per_gpu\":");
    if (res->explicit_mode)
        g_string_append(out, "null");
    else
        ppsim_fmt_double(out, res->tflops_per_gpu);
    g_string_append_printf(out, ",\"gpus\":%d,\"tp\":%d,\"dp\":%d,\"zero\":%d", res->gpus, res->tp,
                           res->dp, res->zero);
    g_string_append(out, ",\"stages\":[");
    for (int s = 0; s < res->n_stages; s++) {
        const PpsimStageResult *st = &res->stages[s];
        g_string_append_printf(out,
                               "%s{\"id\":%d,\"device\":%d,\"peak_activation\":", s > 0 ? "," : "",
                               st->id, st->device);
        ppsim_fmt_mem(out, st->peak_activation, res->mem_scale);
        g_string_append_c(out, '}');
    }
    g_string_append(out, "]}");
}

void
ppsim_report_json(GString *out, const PpsimScenario *scenario, const GPtrArray *results)
{
    g_string_append_printf(out, "{\"schema_version\":%d,\"scenario\":", PPSIM_JSON_SCHEMA_VERSION);
    json_string(out, scenario->name);
    g_string_append(out, ",\"results\":[");
    for (guint i = 0; i < results->len; i++) {
        if (i > 0)
            g_string_append(out, ",\n");
        json_result(out, g_ptr_array_index(results, i));
    }
    g_string_append(out, "]}\n");
}
