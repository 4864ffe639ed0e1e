/* scenario.c: the scenario and schedule-spec objects: constructors and destructors (the
 * parser that fills them is scenario-parse.c). */
#include "scenario/scenario-schema.h"

const char *const ppsim_recompute_names[] = {"none", "selective",   "full", "light",
                                             "moe",  "mla_up_proj", NULL};

const char *
ppsim_recompute_name(PpsimRecompute r)
{
    return (int)r >= 0 && (int)r <= PPSIM_RECOMPUTE_MLA_UP ? ppsim_recompute_names[r] : "?";
}

const char *
ppsim_recompute_mark(PpsimRecompute r)
{
    static const char *const marks[] = {"", "s", "f", "l", "m", "u"};
    return (int)r >= 0 && (int)r <= PPSIM_RECOMPUTE_MLA_UP ? marks[r] : "?";
}

PpsimScheduleSpec *
ppsim_schedule_spec_new(const char *name)
{
    PpsimScheduleSpec *spec = g_new0(PpsimScheduleSpec, 1);
    spec->name = name ? g_ascii_strdown(name, -1) : NULL; /* generator names are lower case */
    spec->label = g_strdup(spec->name);
    spec->options = g_array_new(FALSE, FALSE, sizeof(PpsimOptionValue));
    return spec;
}

void
ppsim_schedule_spec_free(PpsimScheduleSpec *spec)
{
    if (spec == NULL)
        return;
    for (guint i = 0; i < spec->options->len; i++) {
        PpsimOptionValue *o = &g_array_index(spec->options, PpsimOptionValue, i);
        g_free(o->key);
        g_free(o->value);
    }
    g_array_free(spec->options, TRUE);
    g_free(spec->name);
    g_free(spec->file);
    g_free(spec->label);
    g_free(spec->origin);
    g_free(spec);
}

void
ppsim_scenario_free(PpsimScenario *sc)
{
    if (sc == NULL)
        return;
    g_free(sc->name);
    g_free(sc->path);
    g_free(sc->basedir);
    g_free(sc->hardware.preset);
    g_free(sc->model.preset);
    if (sc->model.stage_layers)
        g_array_free(sc->model.stage_layers, TRUE);
    if (sc->model.stage_recompute)
        g_array_free(sc->model.stage_recompute, TRUE);
    if (sc->model.stage_recompute_layers)
        g_array_free(sc->model.stage_recompute_layers, TRUE);
    GArray *lists[] = {sc->costs.stage_forward, sc->costs.stage_backward_input,
                       sc->costs.stage_backward_weight, sc->costs.stage_activation};
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++)
        if (lists[i])
            g_array_free(lists[i], TRUE);
    if (sc->schedules)
        g_ptr_array_unref(sc->schedules);
    ppsim_variability_clear(&sc->variability);
    if (sc->where)
        g_hash_table_unref(sc->where);
    g_free(sc);
}

char *
ppsim_scenario_where(const PpsimScenario *sc, const char *path)
{
    const char *w = sc->where ? g_hash_table_lookup(sc->where, path) : NULL;
    return g_strdup(w ? w : sc->path ? sc->path : "<scenario>");
}

char *
ppsim_scenario_where_mark(const PpsimScenario *sc, const char *path, PpsimMark mark)
{
    const char *w = sc->where ? g_hash_table_lookup(sc->where, path) : NULL;
    if (w && g_str_has_prefix(w, "--set "))
        return g_strdup(w);
    return g_strdup_printf("%s:%d:%d", sc->path ? sc->path : "<scenario>", mark.line, mark.col);
}

PpsimScenario *
ppsim_scenario_new_explicit(int pp, int chunks, int microbatches, const char *schedule_name)
{
    PpsimScenario *sc = g_new0(PpsimScenario, 1);
    sc->schedules = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    ppsim_scenario_set_defaults(sc);
    sc->name = g_strdup("explicit");
    sc->path = g_strdup("<explicit>");
    sc->basedir = g_strdup(".");
    sc->training.pp = pp;
    sc->training.chunks = chunks;
    sc->training.microbatches = microbatches;
    sc->costs.present = TRUE;
    sc->costs.recompute_ps = sc->costs.forward_ps;
    sc->costs.weight_activation = sc->costs.activation;
    sc->hardware.nodes = (pp + sc->hardware.gpus_per_node - 1) / sc->hardware.gpus_per_node;
    g_ptr_array_add(sc->schedules, ppsim_schedule_spec_new(schedule_name));
    return sc;
}
