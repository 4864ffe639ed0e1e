/* scenario-parse.c: YAML bytes -> PpsimScenario, pure (scenarios/README.md).
 *
 * libyaml's document API gives every node its start mark, so each error reads
 * "file:line:col: ...". --set overrides are grafted into the document before the walk, as if
 * written in the file; nodes they add are recognised by index and reported as "--set key".
 * The key tables and defaults live in scenario-schema.c.
 */
#include "scenario/scenario-internal.h"
#include "util/ppsim-error.h"
#include "util/quote.h"
#include "util/suggest.h"
#include "util/yaml-depth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the walk ----------------------------------------------------------------------------- */

static void
mark_seen(Parser *P, const char *path, int key_id)
{
    PpsimMark *m = g_new(PpsimMark, 1);
    *m = scn_mark(P, key_id);
    g_hash_table_insert(P->seen, g_strdup(path), m);
}

static PpsimMark
seen_mark(const char *path, gpointer data)
{
    Parser *P = data;
    PpsimMark *m = g_hash_table_lookup(P->seen, path);
    PpsimMark none = {1, 1};
    return m ? *m : none;
}

/* Where @path was written, for the cross-field checks' messages (scenario-schema.h). */
static char *
seen_where(const char *path, gpointer data)
{
    Parser *P = data;
    for (guint i = P->spans->len; i-- > 0;) { /* the last --set of a key wins */
        OverrideSpan *s = &g_array_index(P->spans, OverrideSpan, i);
        if (strcmp(s->path, path) == 0)
            return scn_set_where(s->path);
    }
    PpsimMark m = seen_mark(path, data);
    return g_strdup_printf("%s:%d:%d", P->display, m.line, m.col);
}

static gboolean
scalar_int(Parser *P, int id, const char *path, const SchemaKey *k, void *dst, GError **error)
{
    const char *text = scn_scalar_text(scn_node_at(P, id));
    char *end = NULL;
    errno = 0;
    gint64 v = text ? g_ascii_strtoll(text, &end, 10) : 0;
    double max = k->max > 0 ? k->max : PPSIM_SCENARIO_INT_MAX;
    gboolean ok = text && *text && *end == '\0' && errno == 0 && v >= k->min && v <= max;
    if (!ok) {
        const char *want = k->min >= 1 ? "a positive integer" : "a non-negative integer";
        g_autofree char *given = scn_given(scn_node_at(P, id));
        if (k->max > 0 || (text && v > max))
            return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be an integer from %.0f to %.0f, got %s", path, k->min, max,
                            given);
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE, "'%s' must be %s, got %s", path,
                        want, given);
    }
    *(int *)dst = (int)v;
    return TRUE;
}

static gboolean
parse_list(Parser *P, int id, const char *path, gboolean ints, GArray **dst, GError **error)
{
    yaml_node_t *n = scn_node_at(P, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE, "'%s' must be a list", path);
    GArray *list = g_array_new(FALSE, FALSE, ints ? sizeof(int) : sizeof(double));
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    SchemaKey item_key = {.min = 0};
    for (gsize i = 0; i < count; i++) {
        int item = scn_node_at(P, id)->data.sequence.items.start[i];
        int iv = 0;
        double dv = 0;
        gboolean ok = ints ? scalar_int(P, item, path, &item_key, &iv, error)
                           : scn_scalar_double(P, item, path, &item_key, &dv, error);
        if (!ok) {
            g_array_free(list, TRUE);
            return FALSE;
        }
        if (ints)
            g_array_append_val(list, iv);
        else
            g_array_append_val(list, dv);
    }
    if (*dst)
        g_array_free(*dst, TRUE);
    *dst = list;
    return TRUE;
}

static gboolean
parse_recompute(Parser *P, int id, const char *path, PpsimRecompute *dst, GError **error)
{
    const char *const *names = ppsim_recompute_names;
    const char *text = scn_scalar_text(scn_node_at(P, id));
    for (int i = 0; text && names[i]; i++)
        if (strcmp(text, names[i]) == 0) {
            *dst = (PpsimRecompute)i;
            return TRUE;
        }
    const char *hint = text ? ppsim_suggest(text, names) : NULL;
    g_autofree char *given = scn_given(scn_node_at(P, id));
    return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                    "'%s' must be none, selective, full, light, moe or mla_up_proj, got %s%s%s%s",
                    path, given, hint ? " (did you mean '" : "", hint ? hint : "",
                    hint ? "'?)" : "");
}

/* One item of model.stage_recompute: a mode (the whole stage), or a mapping {mode: k}, k
 * of the stage's layers in that mode and the rest as model.recompute says (*@count = -1
 * for the whole stage). */
static gboolean
parse_recompute_item(Parser *P, int item, const char *path, int *mode, int *count, GError **error)
{
    yaml_node_t *n = scn_node_at(P, item);
    PpsimRecompute r = PPSIM_RECOMPUTE_NONE;
    *count = -1;
    if (n->type == YAML_MAPPING_NODE) {
        if (n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
            return scn_fail(P, error, item, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' takes a mode or {mode: layers} per stage, e.g. {full: 3}", path);
        yaml_node_pair_t pair = n->data.mapping.pairs.start[0];
        SchemaKey count_key = {.min = 0};
        if (!parse_recompute(P, pair.key, path, &r, error) ||
            !scalar_int(P, pair.value, path, &count_key, count, error))
            return FALSE;
    } else if (!parse_recompute(P, item, path, &r, error)) {
        return FALSE;
    }
    *mode = (int)r;
    return TRUE;
}

/* model.stage_recompute: a list with one mode (or {mode: layers}) per stage. */
static gboolean
parse_recompute_list(Parser *P, int id, const char *path, GArray **dst, GError **error)
{
    yaml_node_t *n = scn_node_at(P, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                        "'%s' must be a list of none, selective, full, light, moe or mla_up_proj",
                        path);
    g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) counts = g_array_new(FALSE, FALSE, sizeof(int));
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    for (gsize i = 0; i < count; i++) {
        int item = scn_node_at(P, id)->data.sequence.items.start[i];
        int mode = 0, layers = -1;
        if (!parse_recompute_item(P, item, path, &mode, &layers, error))
            return FALSE;
        g_array_append_val(list, mode);
        g_array_append_val(counts, layers);
    }
    if (*dst)
        g_array_free(*dst, TRUE);
    *dst = g_steal_pointer(&list);
    if (dst == &P->sc->model.stage_recompute) {
        P->sc->model.stage_recompute_mark = scn_mark(P, id);
        if (P->sc->model.stage_recompute_layers)
            g_array_free(P->sc->model.stage_recompute_layers, TRUE);
        P->sc->model.stage_recompute_layers = g_steal_pointer(&counts);
    }
    return TRUE;
}

static gboolean
parse_enum(Parser *P, int id, const char *path, const char *const *names, int *dst, GError **error)
{
    const char *text = scn_scalar_text(scn_node_at(P, id));
    for (int i = 0; text && names[i]; i++)
        if (strcmp(text, names[i]) == 0) {
            *dst = i;
            return TRUE;
        }
    g_autofree char *all = g_strjoinv(", ", (char **)names);
    const char *hint = text ? ppsim_suggest(text, names) : NULL;
    g_autofree char *given = scn_given(scn_node_at(P, id));
    return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                    "'%s' must be one of %s, got %s%s%s%s", path, all, given,
                    hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

static gboolean parse_section(Parser *P, int id, const SchemaKey *table, const char *prefix,
                              GError **error);

static gboolean
parse_value(Parser *P, int id, const SchemaKey *k, const char *path, GError **error)
{
    char *base = (char *)P->sc;
    void *dst = base + k->offset;
    double q = 0;
    switch (k->type) {
    case KEY_SECTION:
        return parse_section(P, id, k->section, path, error);
    case KEY_SPECIAL:
        return scn_parse_special(P, id, path, error);
    case KEY_STRING: {
        const char *text = scn_scalar_text(scn_node_at(P, id));
        if (text == NULL || *text == '\0')
            return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be a non-empty string", path);
        g_free(*(char **)dst);
        *(char **)dst = g_strdup(text);
        return TRUE;
    }
    case KEY_INT:
        return scalar_int(P, id, path, k, dst, error);
    case KEY_DOUBLE:
        return scn_scalar_double(P, id, path, k, dst, error);
    case KEY_BOOL: {
        const char *t = scn_scalar_text(scn_node_at(P, id));
        gboolean yes = t && (!strcmp(t, "true") || !strcmp(t, "yes") || !strcmp(t, "on"));
        gboolean no = t && (!strcmp(t, "false") || !strcmp(t, "no") || !strcmp(t, "off"));
        if (!yes && !no) {
            g_autofree char *given = scn_given(scn_node_at(P, id));
            return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be true or false, got %s", path, given);
        }
        *(gboolean *)dst = yes;
        return TRUE;
    }
    case KEY_BYTES:
        if (!scn_scalar_quantity(P, id, path, PPSIM_DIM_BYTES, NULL, &q, error))
            return FALSE;
        *(guint64 *)dst = (guint64)q;
        return TRUE;
    case KEY_BANDWIDTH:
    case KEY_FLOPS:
    case KEY_COUNT: {
        PpsimDimension dim = k->type == KEY_BANDWIDTH ? PPSIM_DIM_BANDWIDTH
                             : k->type == KEY_FLOPS   ? PPSIM_DIM_FLOPS
                                                      : PPSIM_DIM_COUNT;
        if (!scn_scalar_quantity(P, id, path, dim, NULL, &q, error))
            return FALSE;
        if (q <= 0)
            return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be greater than zero", path);
        *(double *)dst = q;
        return TRUE;
    }
    case KEY_TIME:
    case KEY_TIME_MS:
        if (!scn_scalar_quantity(P, id, path, PPSIM_DIM_TIME, k->type == KEY_TIME_MS ? "ms" : NULL,
                                 &q, error))
            return FALSE;
        *(PpsimTime *)dst = ppsim_time_from_seconds(q);
        return TRUE;
    case KEY_RECOMPUTE:
        return parse_recompute(P, id, path, dst, error);
    case KEY_ENUM:
        return parse_enum(P, id, path, k->names, dst, error);
    case KEY_INT_LIST:
    case KEY_DOUBLE_LIST:
        if (dst == (void *)&P->sc->model.stage_layers)
            P->sc->model.stage_layers_mark = scn_mark(P, id);
        return parse_list(P, id, path, k->type == KEY_INT_LIST, dst, error);
    case KEY_RECOMPUTE_LIST:
        return parse_recompute_list(P, id, path, dst, error);
    }
    return FALSE;
}

static const SchemaKey *
schema_find(const SchemaKey *table, const char *name)
{
    for (const SchemaKey *k = table; k->name; k++)
        if (strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

static gboolean
unknown_key(Parser *P, int key_id, const SchemaKey *table, const char *prefix, const char *name,
            GError **error)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (const SchemaKey *k = table; k->name; k++)
        g_ptr_array_add(names, (gpointer)k->name);
    g_ptr_array_add(names, NULL);
    const char *hint = ppsim_suggest(name, (const char *const *)names->pdata);
    g_autofree char *qname = ppsim_quote(name);
    g_autofree char *full = *prefix ? g_strdup_printf("%s.%s", prefix, qname) : g_strdup(qname);
    if (hint)
        return scn_fail(P, error, key_id, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "unknown key '%s' (did you mean '%s'?)", full, hint);
    g_autoptr(GString) all = g_string_new(NULL);
    for (guint i = 0; i + 1 < names->len; i++)
        g_string_append_printf(all, "%s%s", i ? ", " : "", (char *)names->pdata[i]);
    return scn_fail(P, error, key_id, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "unknown key '%s' (expected one of: %s)", full, all->str);
}

/* The `preset` key of section @map: its index in @names (NULL-terminated), or -1 when the
 * section has none; an unknown name fails with a did-you-mean, or a pointer to @listing. */
static gboolean
find_preset(Parser *P, int map, const char *what, const char *listing, GPtrArray *names, int *index,
            GError **error)
{
    gsize idx;
    *index = -1;
    int v = scn_mapping_find(P, map, "preset", &idx);
    if (v == 0)
        return TRUE;
    const char *name = scn_scalar_text(scn_node_at(P, v));
    g_ptr_array_add(names, NULL);
    for (guint i = 0; name != NULL && i + 1 < names->len; i++)
        if (strcmp(name, g_ptr_array_index(names, i)) == 0)
            *index = (int)i;
    if (*index >= 0)
        return TRUE;
    if (name == NULL) {
        g_autofree char *given = scn_given(scn_node_at(P, v));
        return scn_fail(P, error, v, PPSIM_SCENARIO_ERROR_VALUE,
                        "'%s.preset' must be a preset name (a string), got %s (%s)", what, given,
                        listing);
    }
    const char *hint = ppsim_suggest(name, (const char *const *)names->pdata);
    g_autofree char *q = ppsim_quote(name);
    return scn_fail(P, error, v, PPSIM_SCENARIO_ERROR_VALUE, "unknown %s preset '%s' (%s%s%s)",
                    what, q, hint ? "did you mean '" : listing, hint ? hint : "", hint ? "'?" : "");
}

/* A preset is applied before the other keys of `hardware`, whatever their order. */
static gboolean
apply_preset(Parser *P, int map, GError **error)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (const PpsimPreset *const *p = ppsim_presets(); *p; p++)
        g_ptr_array_add(names, (gpointer)(*p)->name);
    int i;
    if (!find_preset(P, map, "hardware", "see 'ppsim list presets'", names, &i, error))
        return FALSE;
    if (i < 0)
        return TRUE;
    const PpsimPreset *preset = ppsim_presets()[i];
    g_free(P->sc->hardware.preset);
    P->sc->hardware = preset->hw;
    P->sc->hardware.preset = g_strdup(preset->name);
    return TRUE;
}

/* A model preset, like a hardware preset, is applied before the section's other keys. */
static gboolean
apply_model_preset(Parser *P, int map, GError **error)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (const PpsimModelPreset *const *p = ppsim_model_presets(); *p; p++)
        g_ptr_array_add(names, (gpointer)(*p)->name);
    int i;
    if (!find_preset(P, map, "model", "see 'ppsim list models'", names, &i, error))
        return FALSE;
    if (i < 0)
        return TRUE;
    const PpsimModelPreset *preset = ppsim_model_presets()[i];
    PpsimModel *m = &P->sc->model;
    const PpsimModel *src = &preset->model;
    m->mlp = src->mlp;
    m->layers = src->layers;
    m->hidden = src->hidden;
    m->ffn_hidden = src->ffn_hidden;
    m->heads = src->heads;
    m->kv_heads = src->kv_heads;
    m->head_dim = src->head_dim;
    m->seq_len = src->seq_len;
    m->vocab = src->vocab;
    m->sliding_window = src->sliding_window;
    m->full_attention_every = src->full_attention_every;
    m->moe = src->moe;
    m->mla = src->mla;
    m->dropout = src->dropout;
    m->rotary = src->rotary;
    m->tied_embeddings = src->tied_embeddings;
    m->mtp_layers = src->mtp_layers;
    g_free(m->preset);
    m->preset = g_strdup(preset->name);
    return TRUE;
}

static gboolean
parse_section(Parser *P, int id, const SchemaKey *table, const char *prefix, GError **error)
{
    if (scn_node_at(P, id)->type != YAML_MAPPING_NODE)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_PARSE,
                        *prefix ? "'%s' must be a mapping of keys"
                                : "%sthe scenario must be "
                                  "a mapping of keys",
                        prefix);
    if (strcmp(prefix, "hardware") == 0 && !apply_preset(P, id, error))
        return FALSE;
    if (strcmp(prefix, "model") == 0 && !apply_model_preset(P, id, error))
        return FALSE;
    gsize count =
        scn_node_at(P, id)->data.mapping.pairs.top - scn_node_at(P, id)->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = scn_node_at(P, id)->data.mapping.pairs.start[i];
        const char *name = scn_scalar_text(scn_node_at(P, pair.key));
        if (name == NULL)
            return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_PARSE,
                            "keys must be plain words");
        g_autofree char *path = *prefix ? g_strdup_printf("%s.%s", prefix, name) : g_strdup(name);
        const SchemaKey *k = schema_find(table, name);
        if (k == NULL)
            return unknown_key(P, pair.key, table, prefix, name, error);
        if (g_hash_table_contains(P->seen, path))
            return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA, "duplicate key '%s'",
                            path);
        mark_seen(P, path, pair.key);
        if (strcmp(path, "hardware.preset") == 0 || strcmp(path, "model.preset") == 0)
            continue; /* applied above */
        if (!parse_value(P, pair.value, k, path, error))
            return FALSE;
    }
    return TRUE;
}

/* ---- entry points -------------------------------------------------------------------------- */

static gboolean
check_required(Parser *P, const SchemaKey *table, const char *prefix, GError **error)
{
    for (const SchemaKey *k = table; k->name; k++) {
        g_autofree char *path = g_strdup_printf("%s.%s", prefix, k->name);
        if (k->required && !g_hash_table_contains(P->seen, path) &&
            !ppsim_scenario_key_implied(path, P->seen)) {
            PpsimMark m = seen_mark(prefix, P);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "%s:%d:%d: missing required key '%s'", P->display, m.line, m.col, path);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
parser_load(Parser *P, const char *bytes, gsize len, GError **error)
{
    yaml_mark_t deep;
    if (!ppsim_yaml_check_depth(bytes, len, &deep)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "%s:%zu:%zu: YAML nested more than %d levels deep", P->display, deep.line + 1,
                    deep.column + 1, PPSIM_YAML_MAX_DEPTH);
        return FALSE;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
    gboolean ok = yaml_parser_load(&parser, &P->doc);
    if (!ok) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE, "%s:%zu:%zu: %s%s%s",
                    P->display, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                    parser.problem ? parser.problem : "bad YAML", parser.context ? " " : "",
                    parser.context ? parser.context : "");
    } else if (yaml_document_get_root_node(&P->doc) != NULL) {
        /* a second document would be ignored: refuse it */
        yaml_document_t next;
        if (yaml_parser_load(&parser, &next)) {
            yaml_node_t *root = yaml_document_get_root_node(&next);
            if (root != NULL) {
                g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                            "%s:%zu:%zu: a second YAML document ('---'); a scenario is one "
                            "document",
                            P->display, root->start_mark.line + 1, root->start_mark.column + 1);
                ok = FALSE;
            }
            yaml_document_delete(&next);
        } else {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE, "%s:%zu:%zu: %s",
                        P->display, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                        parser.problem ? parser.problem : "bad YAML after the document");
            ok = FALSE;
        }
        if (!ok)
            yaml_document_delete(&P->doc);
    } else if (yaml_document_get_root_node(&P->doc) == NULL) {
        /* an empty file: start from an empty mapping so overrides can still apply */
        yaml_document_delete(&P->doc);
        yaml_document_initialize(&P->doc, NULL, NULL, NULL, 1, 1);
        yaml_document_add_mapping(&P->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    }
    yaml_parser_delete(&parser);
    P->have_doc = ok;
    return ok;
}

static gboolean
parser_run(Parser *P, const char *const *overrides, GError **error)
{
    for (int i = 0; overrides && overrides[i]; i++)
        if (!scn_apply_override(P, overrides[i], error))
            return FALSE;
    gsize idx;
    if (scn_node_at(P, 1)->type == YAML_MAPPING_NODE && scn_mapping_find(P, 1, "costs", &idx) != 0)
        P->sc->costs.present = TRUE;
    if (!parse_section(P, 1, ppsim_scenario_schema, "", error))
        return FALSE;
    if (!g_hash_table_contains(P->seen, "training")) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "%s:1:1: missing required key 'training'", P->display);
        return FALSE;
    }
    if (!check_required(P, ppsim_scenario_schema[3].section, "training", error))
        return FALSE;
    if (g_hash_table_contains(P->seen, "model") &&
        !check_required(P, ppsim_scenario_schema[2].section, "model", error))
        return FALSE;
    /* a written section of model (moe, mla) with its own required keys */
    for (const SchemaKey *k = ppsim_scenario_schema[2].section; k->name; k++) {
        if (k->type != KEY_SECTION)
            continue;
        g_autofree char *path = g_strdup_printf("model.%s", k->name);
        if (g_hash_table_contains(P->seen, path) && !check_required(P, k->section, path, error))
            return FALSE;
    }
    ppsim_scenario_finish_defaults(P->sc, P->seen);
    if (P->values_only)
        return TRUE;
    if (!ppsim_scenario_check(P->sc, P->seen, seen_where, P, error))
        return FALSE;
    return scn_check_variability(P->sc, error);
}

static PpsimScenario *scenario_parse(const char *bytes, gsize len, const char *display_name,
                                     const char *basedir, const char *const *overrides,
                                     gboolean values_only, GError **error);

PpsimScenario *
ppsim_scenario_parse(const char *bytes, gsize len, const char *display_name, const char *basedir,
                     const char *const *overrides, GError **error)
{
    return scenario_parse(bytes, len, display_name, basedir, overrides, FALSE, error);
}

gboolean
ppsim_scenario_check_values(const char *bytes, gsize len, const char *display_name,
                            const char *basedir, const char *const *overrides, GError **error)
{
    g_autoptr(PpsimScenario) sc =
        scenario_parse(bytes, len, display_name, basedir, overrides, TRUE, error);
    return sc != NULL;
}

static PpsimScenario *
scenario_parse(const char *bytes, gsize len, const char *display_name, const char *basedir,
               const char *const *overrides, gboolean values_only, GError **error)
{
    g_autoptr(PpsimScenario) sc = g_new0(PpsimScenario, 1);
    sc->schedules = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    ppsim_scenario_set_defaults(sc);
    Parser P = {.display = display_name ? display_name : "<scenario>",
                .basedir = basedir,
                .spans = g_array_new(FALSE, FALSE, sizeof(OverrideSpan)),
                .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                .sc = sc,
                .values_only = values_only};
    gboolean ok = parser_load(&P, bytes, len, error) && parser_run(&P, overrides, error);
    if (ok) {
        sc->where = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, P.seen);
        while (g_hash_table_iter_next(&it, &key, NULL))
            g_hash_table_insert(sc->where, g_strdup(key), seen_where(key, &P));
    }
    if (P.have_doc)
        yaml_document_delete(&P.doc);
    for (guint i = 0; i < P.spans->len; i++)
        g_free(g_array_index(P.spans, OverrideSpan, i).path);
    g_array_free(P.spans, TRUE);
    g_hash_table_unref(P.seen);
    if (!ok)
        return NULL;
    if (sc->schedules->len == 0)
        g_ptr_array_add(sc->schedules, ppsim_schedule_spec_new("1f1b"));
    if (sc->name == NULL) {
        g_autofree char *base = g_path_get_basename(P.display);
        char *dot = strrchr(base, '.');
        if (dot && dot != base)
            *dot = '\0';
        sc->name = g_strdup(base);
    }
    sc->path = g_strdup(P.display);
    sc->basedir = g_strdup(basedir ? basedir : ".");
    return g_steal_pointer(&sc);
}

GPtrArray *
ppsim_schedule_specs_parse(const char *text, const char *origin, const char *basedir,
                           GError **error)
{
    g_autoptr(PpsimScenario) sc = g_new0(PpsimScenario, 1);
    sc->schedules = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    Parser P = {.display = origin,
                .basedir = basedir,
                .spans = g_array_new(FALSE, FALSE, sizeof(OverrideSpan)),
                .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                .sc = sc};
    gboolean ok =
        parser_load(&P, text, strlen(text), error) && scn_parse_special(&P, 1, "schedule", error);
    if (P.have_doc)
        yaml_document_delete(&P.doc);
    g_array_free(P.spans, TRUE);
    g_hash_table_unref(P.seen);
    if (!ok)
        return NULL;
    for (guint i = 0; i < sc->schedules->len; i++) {
        PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
        spec->origin = g_strdup(origin);
    }
    return g_steal_pointer(&sc->schedules);
}
