/* report-json.c: the JSON summary. Keys are a contract; new keys may be added,
 * existing ones never change meaning without a schema_version bump. Times are milliseconds
 * (time_unit), memory is bytes (integers) or explicit-mode units (memory_unit).
 */
#include "report/report.h"
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

/* README "JSON": the bubble breakdown (run-result.h); its five parts sum to `lost`. */
static void
json_bubbles(GString *out, const PpsimDeviceResult *d)
{
    g_string_append(out, ",\"bubbles\":{\"lost\":");
    ppsim_fmt_ms(out, d->bubble_lost_ps);
    g_string_append(out, ",\"recompute\":");
    ppsim_fmt_ms(out, d->bubble_recompute_ps);
    g_string_append(out, ",\"imbalance\":");
    ppsim_fmt_ms(out, d->bubble_imbalance_ps);
    g_string_append(out, ",\"preparation\":");
    ppsim_fmt_ms(out, d->bubble_preparation_ps);
    g_string_append(out, ",\"transfer\":");
    ppsim_fmt_ms(out, d->bubble_transfer_ps);
    g_string_append(out, ",\"offload\":");
    ppsim_fmt_ms(out, d->bubble_offload_ps);
    g_string_append_c(out, '}');
}

static void
json_device(GString *out, const PpsimRunResult *res, const PpsimDeviceResult *d)
{
    g_string_append_printf(out, "{\"id\":%d,\"busy\":", d->id);
    ppsim_fmt_ms(out, d->busy_ps);
    g_string_append(out, ",\"first_start\":");
    ppsim_fmt_ms(out, d->first_start_ps);
    g_string_append(out, ",\"end\":");
    ppsim_fmt_ms(out, d->end_ps);
    g_string_append(out, ",\"bubble_ratio\":");
    ppsim_fmt_double(out, d->bubble_ratio);
    g_string_append(out, ",\"peak_activation\":");
    ppsim_fmt_mem(out, d->peak_activation, res->mem_scale);
    g_string_append(out, ",\"peak_memory\":");
    ppsim_fmt_mem(out, d->peak_memory, res->mem_scale);
    g_string_append(out, ",\"static_memory\":");
    ppsim_fmt_mem(out, d->static_memory, res->mem_scale);
    g_string_append_printf(out, ",\"oom\":%s,\"peak_time\":", d->oom ? "true" : "false");
    ppsim_fmt_ms(out, d->peak_time_ps);
    g_string_append(out, ",\"peak_op\":");
    if (d->has_peak_op) {
        g_autoptr(GString) op = g_string_new(NULL);
        ppsim_op_describe(op, &d->peak_op);
        json_string(out, op->str);
    } else {
        g_string_append(out, "null");
    }
    g_string_append(out, ",\"idle\":{\"warmup\":");
    ppsim_fmt_ms(out, d->idle_warmup_ps);
    g_string_append(out, ",\"dependency\":");
    ppsim_fmt_ms(out, d->idle_wait_ps);
    g_string_append(out, ",\"transfer\":");
    ppsim_fmt_ms(out, d->idle_transfer_ps);
    g_string_append(out, ",\"cooldown\":");
    ppsim_fmt_ms(out, d->idle_cooldown_ps);
    g_string_append(out, "},\"recompute\":");
    ppsim_fmt_ms(out, d->recompute_ps);
    json_bubbles(out, d);
    if (d->optimizer_overlap >= 0) { /* T-Offload only, so other outputs stay as they were */
        g_string_append(out, ",\"static_memory_saved\":");
        ppsim_fmt_mem(out, d->static_memory_saved, res->mem_scale);
        g_string_append(out, ",\"optimizer_overlap\":");
        ppsim_fmt_double(out, d->optimizer_overlap);
    }
    /* 3D parallelism (0 without it): TP collectives inside F/B (never hidden), ZeRO-3
     * gathers (flows before F/B), DP gradient reduction and the part of it past the last
     * compute op */
    g_string_append(out, ",\"tp_comm\":");
    ppsim_fmt_ms(out, d->tp_comm_ps);
    g_string_append(out, ",\"zero_gather\":");
    ppsim_fmt_ms(out, d->zero_gather_ps);
    g_string_append(out, ",\"dp_comm\":");
    ppsim_fmt_ms(out, d->dp_comm_ps);
    g_string_append(out, ",\"dp_comm_exposed\":");
    ppsim_fmt_ms(out, d->dp_exposed_ps);
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

/* README "JSON": solver{status, objective, bound, gap, seconds} for MILP schedules, plus the
 * path that produced the schedule and why (objective and bound in ms). Status and objective
 * are those of the schedule returned; milp_status and milp_objective are the solver's own
 * (they differ when the returned schedule is not the solver's). */
static void
json_solver(GString *out, const PpsimRunResult *res)
{
    g_string_append(out, ",\"solver\":{\"status\":");
    json_string(out, res->solver_status);
    json_number_or_null(out, "objective", res->solver_objective_ms);
    json_number_or_null(out, "bound", res->solver_bound_ms);
    json_number_or_null(out, "gap", res->solver_gap);
    json_number_or_null(out, "seconds", res->solver_seconds);
    g_string_append(out, ",\"path\":");
    json_string(out, res->solver_path);
    g_string_append(out, ",\"note\":");
    json_string(out, res->solver_note);
    g_string_append(out, ",\"milp_status\":");
    json_string(out, res->solver_milp_status);
    json_number_or_null(out, "milp_objective", res->solver_milp_objective_ms);
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
    if (res->has_solver)
        json_solver(out, res);
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
