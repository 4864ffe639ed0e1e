/* cmd-list.c: `ppsim list schedules|presets|models|frameworks`: what the registries hold. */
#include "cli/cli.h"
#include "scenario/scenario.h"
#include "cost/moe.h"
#include "cost/parallel.h"
#include "sched/registry.h"
#include "sim/sim.h"
#include "util/fmt.h"
#include "util/quote.h"

#include <stdio.h>
#include <string.h>

static const char *
option_type_name(PpsimOptionType type)
{
    switch (type) {
    case PPSIM_OPTION_INT:
        return "int";
    case PPSIM_OPTION_DOUBLE:
        return "number";
    default:
        return "string";
    }
}

/* "2 (V-shape)" or "2 (interleaved)": which map a two-chunk generator uses, read from a
 * tiny schedule it makes (p = 2: stage 2 is on device 1 in a V, on device 0 interleaved). */
static const char *
two_chunk_map(const PpsimScheduleClass *k)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(2, 2, 4, k->name);
    g_autoptr(PpsimSchedule) sched =
        ppsim_sim_build_schedule(sc, g_ptr_array_index(sc->schedules, 0), NULL, NULL);
    return sched && sched->stage_device[2] == 0 ? "2 (interleaved)" : "2 (V-shape)";
}

static void
list_schedules(void)
{
    for (guint i = 0; i < ppsim_sched_registry_count(); i++) {
        const PpsimScheduleClass *k = ppsim_sched_registry_nth(i);
        printf("%-14s %s\n", k->name, k->summary);
        printf("%-14s source: %s; chunks per device: %s\n", "", k->reference,
               k->chunks == 0   ? "training.chunks"
               : k->chunks == 1 ? "1"
                                : two_chunk_map(k));
        for (const PpsimOptionSpec *o = k->options; o && o->name; o++)
            printf("%-14s option %s (%s, default %s): %s\n", "", o->name, option_type_name(o->type),
                   o->default_value ? o->default_value : "unset", o->help);
    }
    printf("%-14s replay a schedule file: schedule: {name: custom, file: x.csv}\n", "custom");
}

static void
list_presets(void)
{
    for (const PpsimPreset *const *p = ppsim_presets(); *p; p++) {
        const PpsimHardware *hw = &(*p)->hw;
        g_autoptr(GString) line = g_string_new(NULL);
        g_string_append_printf(line, "%-14s %s\n%-14s %d GPUs/node, ", (*p)->name, (*p)->summary,
                               "", hw->gpus_per_node);
        ppsim_fmt_bytes_human(line, (double)hw->gpu_memory_bytes);
        g_string_append(line, ", ");
        ppsim_fmt_fixed(line, hw->gpu_peak_flops / 1e12, 0);
        if (hw->gpu_efficiency > 0) {
            g_string_append(line, " TFLOP/s x ");
            ppsim_fmt_fixed(line, hw->gpu_efficiency, 2);
        } else { /* the kernel model's GPU */
            g_string_append_printf(line, " TFLOP/s, %d SMs, HBM ", hw->gpu_sms);
            ppsim_fmt_fixed(line, hw->gpu_hbm_bytes_per_s / 1e9, 0);
            g_string_append(line, " GB/s, GEMM x ");
            ppsim_fmt_fixed(line, hw->gpu_gemm_efficiency, 3);
            if (hw->gpu_gemm_k_overhead > 0) {
                g_string_append(line, " x K/(K+");
                ppsim_fmt_fixed(line, hw->gpu_gemm_k_overhead, 0);
                g_string_append(line, ")");
            }
            g_string_append(line, ", attention x ");
            ppsim_fmt_fixed(line, hw->gpu_attention_efficiency, 2);
            /* the kernels model.attention_kernel may name on this GPU */
            gboolean any = FALSE;
            for (int k = PPSIM_ATTN_CUDNN; k <= PPSIM_ATTN_FA3; k++) {
                double eff = ppsim_attention_efficiency(hw, k, NULL);
                if (eff <= 0)
                    continue;
                g_string_append_printf(line, "%s%s ", any ? ", " : " (",
                                       ppsim_attention_kernel_name(k));
                ppsim_fmt_fixed(line, eff, 2);
                double bwd = ppsim_attention_backward_efficiency(hw, k);
                if (bwd > 0) {
                    g_string_append(line, " forward / ");
                    ppsim_fmt_fixed(line, bwd, 2);
                    g_string_append(line, " backward");
                }
                any = TRUE;
            }
            if (any)
                g_string_append(line, ")");
        }
        g_string_append(line, ", NVLink ");
        ppsim_fmt_fixed(line, hw->nvlink_bytes_per_s / 1e9, 0);
        g_string_append(line, " GB/s, PCIe ");
        ppsim_fmt_fixed(line, hw->pcie_bytes_per_s / 1e9, 0);
        g_string_append_printf(line, " GB/s (%d GPU(s) per switch", hw->pcie_gpus_per_switch);
        if (hw->pcie_gpus_per_switch > 1) {
            g_string_append(line, ", uplink ");
            ppsim_fmt_fixed(line, hw->pcie_uplink_bytes_per_s / 1e9, 0);
            g_string_append(line, " GB/s");
        }
        g_string_append(line, "), network ");
        ppsim_fmt_fixed(line, hw->network_bytes_per_s / 1e9, 0);
        g_string_append(line, " GB/s\n");
        fputs(line->str, stdout);
    }
}

static void
list_models(void)
{
    for (const PpsimModelPreset *const *p = ppsim_model_presets(); *p; p++) {
        const PpsimModel *m = &(*p)->model;
        g_autoptr(GString) line = g_string_new(NULL);
        g_string_append_printf(line, "%-16s %s\n%-16s %s, %d layers, hidden %d, ffn %d, %d heads, ",
                               (*p)->name, (*p)->summary, "",
                               m->mlp == PPSIM_MLP_SWIGLU ? "swiglu" : "gelu", m->layers, m->hidden,
                               m->ffn_hidden, m->heads);
        const PpsimMla *mla = &m->mla;
        if (mla->kv_lora_rank > 0)
            g_string_append_printf(line,
                                   "MLA (query rank %d, KV rank %d, query/key heads %d + %d "
                                   "rotary, value heads %d), ",
                                   mla->q_lora_rank, mla->kv_lora_rank, mla->qk_nope_head_dim,
                                   mla->qk_rope_head_dim, mla->v_head_dim);
        else
            g_string_append_printf(line, "%d KV heads, ", m->kv_heads);
        g_string_append_printf(line, "seq %d, vocab %d, ", m->seq_len, m->vocab);
        if (m->head_dim > 0)
            g_string_append_printf(line, "head_dim %d, ", m->head_dim);
        if (m->sliding_window > 0) {
            g_string_append_printf(line, "sliding window %d", m->sliding_window);
            if (m->full_attention_every > 0)
                g_string_append_printf(line, " (1 layer in %d full)", m->full_attention_every);
            g_string_append(line, ", ");
        }
        if (m->moe.experts > 0) { /* every expert, and what one token passes */
            const PpsimMoe *e = &m->moe;
            double total = 0, active = 0;
            ppsim_moe_model_params(m, &total, &active);
            g_string_append_printf(line,
                                   "MoE %d routed (top-%d) + %d shared experts of ffn %d, first "
                                   "%d layers dense, ",
                                   e->experts, e->top_k, e->shared_experts, e->expert_ffn_hidden,
                                   e->dense_layers);
            if (e->groups > 0)
                g_string_append_printf(line, "a token's experts in %d of %d groups, ",
                                       e->group_top_k, e->groups);
            ppsim_fmt_fixed(line, total / 1e9, 2);
            g_string_append(line, "B parameters, ");
            ppsim_fmt_fixed(line, active / 1e9, 2);
            g_string_append_printf(line, "B active (%s embeddings",
                                   m->tied_embeddings ? "tied" : "untied");
            if (m->mtp_layers > 0) /* outside the totals, as [DSV3] counts them */
                g_string_append_printf(line, "; %d multi-token-prediction depth%s beyond them",
                                       m->mtp_layers, m->mtp_layers > 1 ? "s" : "");
            g_string_append(line, ")\n");
        } else {
            ppsim_fmt_fixed(line, ppsim_par_model_params(m) / 1e9, 2);
            g_string_append_printf(line, "B parameters (%s embeddings)\n",
                                   m->tied_embeddings ? "tied" : "untied");
        }
        fputs(line->str, stdout);
    }
}

static void
list_frameworks(void)
{
    printf("%-14s %s\n", "none", "ppsim's defaults (scenarios/README.md); the default");
    for (int i = 1; ppsim_framework_nth(i) != NULL; i++) {
        const PpsimFramework *fw = ppsim_framework_nth(i);
        printf("%-14s %s\n%-14s source: %s\n", fw->name, fw->summary, "", fw->source);
        for (const PpsimFrameworkSetting *s = fw->settings; s->key; s++) {
            const char *when = ppsim_framework_when_text(s->when);
            printf("%-14s %s: %s%s%s%s\n", "", s->key, s->value, when ? " (" : "", when ? when : "",
                   when ? ")" : "");
        }
    }
}

int
ppsim_cmd_list(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("schedules|presets|models|frameworks - list what ppsim knows");
    g_option_context_set_description(ctx,
                                     "  schedules  schedule generators, their sources and options\n"
                                     "  presets    hardware presets, with their sources\n"
                                     "  models     model presets (model.preset)\n"
                                     "  frameworks training frameworks (framework) and the keys\n"
                                     "             each sets where a scenario leaves them out");
    if (!ppsim_cli_parse(ctx, &argc, &argv))
        return PPSIM_EXIT_USAGE;
    if (argc != 2)
        return ppsim_cli_usage(
            "expected 'schedules', 'presets', 'models' or 'frameworks' (see 'ppsim list --help')");
    if (strcmp(argv[1], "schedules") == 0)
        list_schedules();
    else if (strcmp(argv[1], "presets") == 0)
        list_presets();
    else if (strcmp(argv[1], "models") == 0)
        list_models();
    else if (strcmp(argv[1], "frameworks") == 0)
        list_frameworks();
    else {
        g_autofree char *q = ppsim_quote(argv[1]);
        return ppsim_cli_usage("unknown list '%s' (expected 'schedules', 'presets', 'models' or "
                               "'frameworks')",
                               q);
    }
    return PPSIM_EXIT_OK;
}
