/* scenario-schedule.c: the `schedule` key (a name, a list, or {name: ..., <options>}) and
 * `memory.limit`, whose unit depends on the cost mode. */
#include "scenario/scenario-internal.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <string.h>

/* ---- schedule and memory.limit -------------------------------------------------------------- */

static char *
spec_label(const PpsimScheduleSpec *spec)
{
    if (spec->file != NULL) {
        g_autofree char *base = g_path_get_basename(spec->file);
        return g_strdup_printf("custom:%s", base);
    }
    if (spec->options->len == 0)
        return g_strdup(spec->name);
    GString *s = g_string_new(spec->name);
    for (guint i = 0; i < spec->options->len; i++) {
        const PpsimOptionValue *o = &g_array_index(spec->options, PpsimOptionValue, i);
        g_string_append_printf(s, "%c%s=%s", i ? ',' : '{', o->key, o->value);
    }
    g_string_append_c(s, '}');
    return g_string_free(s, FALSE);
}

/* An option value: a scalar, or a list of scalars joined with commas ([0, 2] -> "0,2"). */
static char *
option_text(Parser *P, int id)
{
    yaml_node_t *n = scn_node_at(P, id);
    if (n->type == YAML_SCALAR_NODE)
        return g_strdup(scn_scalar_text(n));
    if (n->type != YAML_SEQUENCE_NODE)
        return NULL;
    GString *s = g_string_new(NULL);
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    for (gsize i = 0; i < count; i++) {
        const char *t =
            scn_scalar_text(scn_node_at(P, scn_node_at(P, id)->data.sequence.items.start[i]));
        if (t == NULL) {
            g_string_free(s, TRUE);
            return NULL;
        }
        g_string_append_printf(s, "%s%s", i ? "," : "", t);
    }
    return g_string_free(s, FALSE);
}

static gboolean
schedule_mapping(Parser *P, int id, PpsimScheduleSpec *spec, GError **error)
{
    gsize count =
        scn_node_at(P, id)->data.mapping.pairs.top - scn_node_at(P, id)->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = scn_node_at(P, id)->data.mapping.pairs.start[i];
        const char *key = scn_scalar_text(scn_node_at(P, pair.key));
        g_autofree char *value = option_text(P, pair.value);
        if (key == NULL || value == NULL)
            return scn_fail(P, error, key ? pair.value : pair.key, PPSIM_SCENARIO_ERROR_PARSE,
                            "schedule options must be 'key: value' with plain values");
        for (gsize j = 0; j < i; j++) {
            const char *prev = scn_scalar_text(
                scn_node_at(P, scn_node_at(P, id)->data.mapping.pairs.start[j].key));
            if (prev && strcmp(prev, key) == 0) {
                g_autofree char *q = ppsim_quote(key);
                return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA,
                                "duplicate key '%s' in schedule", q);
            }
        }
        if (strcmp(key, "name") == 0) {
            g_free(spec->name);
            spec->name = g_ascii_strdown(value, -1); /* "1F1B" is 1f1b: names are lower case */
            spec->mark = scn_mark(P, pair.value);
        } else if (strcmp(key, "file") == 0) {
            spec->file = g_path_is_absolute(value) || P->basedir == NULL
                             ? g_steal_pointer(&value)
                             : g_build_filename(P->basedir, value, NULL);
        } else if (strcmp(key, "label") == 0) {
            spec->label = g_steal_pointer(&value);
        } else {
            PpsimOptionValue o = {g_strdup(key), g_steal_pointer(&value), scn_mark(P, pair.value)};
            g_array_append_val(spec->options, o);
        }
    }
    if (spec->name == NULL)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "missing key 'name' in schedule");
    return TRUE;
}

static gboolean
schedule_item(Parser *P, int id, GError **error)
{
    yaml_node_t *n = scn_node_at(P, id);
    g_autoptr(GPtrArray) holder =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    PpsimScheduleSpec *spec = ppsim_schedule_spec_new(NULL);
    g_ptr_array_add(holder, spec);
    g_free(spec->label);
    spec->label = NULL;
    if (n->type == YAML_SCALAR_NODE && *scn_scalar_text(n)) {
        spec->name = g_ascii_strdown(scn_scalar_text(n), -1); /* "1F1B" is 1f1b */
        spec->mark = scn_mark(P, id);
    } else if (n->type == YAML_MAPPING_NODE) {
        if (!schedule_mapping(P, id, spec, error))
            return FALSE;
    } else {
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_PARSE,
                        "a schedule is a name or a mapping {name: ..., <options>}");
    }
    if (strcmp(spec->name, "custom") == 0 && spec->file == NULL)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "schedule 'custom' needs a 'file' (a schedule CSV)");
    if (spec->label == NULL)
        spec->label = spec_label(spec);
    g_ptr_array_add(P->sc->schedules, g_ptr_array_steal_index(holder, 0));
    return TRUE;
}

static gboolean
scn_parse_schedule(Parser *P, int id, GError **error)
{
    g_ptr_array_set_size(P->sc->schedules, 0);
    yaml_node_t *n = scn_node_at(P, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return schedule_item(P, id, error);
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    if (count == 0)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE, "'schedule' lists no schedule");
    for (gsize i = 0; i < count; i++)
        if (!schedule_item(P, scn_node_at(P, id)->data.sequence.items.start[i], error))
            return FALSE;
    return TRUE;
}

gboolean
scn_parse_special(Parser *P, int id, const char *path, GError **error)
{
    if (strcmp(path, "schedule") == 0)
        return scn_parse_schedule(P, id, error);
    if (g_str_has_prefix(path, "variability."))
        return scn_parse_variability(P, id, path, error);
    g_assert(strcmp(path, "memory.limit") == 0);
    if (P->sc->costs.present) {
        SchemaKey k = {.min = 0};
        return scn_scalar_double(P, id, path, &k, &P->sc->memory_limit_units, error);
    }
    double q = 0;
    if (!scn_scalar_quantity(P, id, path, PPSIM_DIM_BYTES, NULL, &q, error))
        return FALSE;
    P->sc->memory_limit_bytes = (guint64)q;
    return TRUE;
}
