/* scenario-parse.c: YAML bytes -> PpsimScenario, pure (DESIGN 5).
 *
 * libyaml's document API gives every node its start mark, so each error reads
 * "file:line:col: ...". --set overrides are grafted into the document before the walk, as if
 * written in the file; nodes they add are recognised by index and reported as "--set key".
 * The key tables and defaults live in scenario-schema.c.
 */
#include "scenario/scenario-schema.h"
#include "util/ppsim-error.h"
#include "util/suggest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct {
    int first, last; /* node ids [first, last] added by this override */
    char *path;
} OverrideSpan;

typedef struct {
    yaml_document_t doc;
    gboolean have_doc;
    const char *display;
    const char *basedir;
    GArray *spans;    /* OverrideSpan */
    GHashTable *seen; /* dotted path -> PpsimMark* of its key */
    PpsimScenario *sc;
} Parser;

static yaml_node_t *
node_at(Parser *P, int id)
{
    return yaml_document_get_node(&P->doc, id);
}

/* "file:line:col" or "--set key.path" for messages about node @id. */
static char *
parser_where(Parser *P, int id)
{
    for (guint i = 0; i < P->spans->len; i++) {
        OverrideSpan *s = &g_array_index(P->spans, OverrideSpan, i);
        if (id >= s->first && id <= s->last)
            return g_strdup_printf("--set %s", s->path);
    }
    yaml_node_t *n = id > 0 ? node_at(P, id) : NULL;
    if (n == NULL)
        return g_strdup_printf("%s:1:1", P->display);
    return g_strdup_printf("%s:%zu:%zu", P->display, n->start_mark.line + 1,
                           n->start_mark.column + 1);
}

static PpsimMark
parser_mark(Parser *P, int id)
{
    yaml_node_t *n = id > 0 ? node_at(P, id) : NULL;
    PpsimMark m = {0, 0};
    if (n != NULL && n->start_mark.line + n->start_mark.column > 0) {
        m.line = (int)n->start_mark.line + 1;
        m.col = (int)n->start_mark.column + 1;
    } else if (n != NULL) {
        m.line = m.col = 1;
    }
    return m;
}

static gboolean G_GNUC_PRINTF(5, 6)
    parser_fail(Parser *P, GError **error, int id, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *where = parser_where(P, id);
    g_set_error(error, PPSIM_SCENARIO_ERROR, code, "%s: %s", where, msg);
    return FALSE;
}

static const char *
scalar_text(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* ---- overrides ---------------------------------------------------------------------------- */

static int
copy_node(yaml_document_t *dst, yaml_document_t *src, int id)
{
    yaml_node_t *n = yaml_document_get_node(src, id);
    if (n->type == YAML_SCALAR_NODE)
        return yaml_document_add_scalar(dst, NULL, n->data.scalar.value, (int)n->data.scalar.length,
                                        n->data.scalar.style);
    if (n->type == YAML_SEQUENCE_NODE) {
        int seq = yaml_document_add_sequence(dst, NULL, YAML_FLOW_SEQUENCE_STYLE);
        gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
        for (gsize i = 0; i < count; i++) {
            int item = yaml_document_get_node(src, id)->data.sequence.items.start[i];
            yaml_document_append_sequence_item(dst, seq, copy_node(dst, src, item));
        }
        return seq;
    }
    int map = yaml_document_add_mapping(dst, NULL, YAML_FLOW_MAPPING_STYLE);
    gsize count = n->data.mapping.pairs.top - n->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = yaml_document_get_node(src, id)->data.mapping.pairs.start[i];
        int k = copy_node(dst, src, pair.key);
        int v = copy_node(dst, src, pair.value);
        yaml_document_append_mapping_pair(dst, map, k, v);
    }
    return map;
}

/* The value node of @key in mapping @map, and the pair's index (-1 when absent). */
static int
mapping_find(Parser *P, int map, const char *key, gsize *pair_index)
{
    yaml_node_t *m = node_at(P, map);
    gsize count = m->data.mapping.pairs.top - m->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        const char *k = scalar_text(node_at(P, m->data.mapping.pairs.start[i].key));
        if (k && strcmp(k, key) == 0) {
            *pair_index = i;
            return m->data.mapping.pairs.start[i].value;
        }
    }
    return 0;
}

/* Sets @parts (a key path) of mapping @map to node @value, creating mappings on the way. */
static void
graft(Parser *P, int map, char **parts, int value)
{
    gsize idx = 0;
    int child = mapping_find(P, map, parts[0], &idx);
    if (parts[1] == NULL) {
        if (child != 0) {
            node_at(P, map)->data.mapping.pairs.start[idx].value = value;
        } else {
            int k = yaml_document_add_scalar(&P->doc, NULL, (yaml_char_t *)parts[0], -1,
                                             YAML_PLAIN_SCALAR_STYLE);
            yaml_document_append_mapping_pair(&P->doc, map, k, value);
        }
        return;
    }
    if (child == 0 || node_at(P, child)->type != YAML_MAPPING_NODE) {
        int fresh = yaml_document_add_mapping(&P->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
        if (child != 0) {
            node_at(P, map)->data.mapping.pairs.start[idx].value = fresh;
        } else {
            int k = yaml_document_add_scalar(&P->doc, NULL, (yaml_char_t *)parts[0], -1,
                                             YAML_PLAIN_SCALAR_STYLE);
            yaml_document_append_mapping_pair(&P->doc, map, k, fresh);
        }
        child = fresh;
    }
    graft(P, child, parts + 1, value);
}

static int
doc_node_count(yaml_document_t *doc)
{
    return (int)(doc->nodes.top - doc->nodes.start);
}

static gboolean
apply_override(Parser *P, const char *text, GError **error)
{
    const char *eq = strchr(text, '=');
    g_autofree char *path = eq ? g_strstrip(g_strndup(text, eq - text)) : NULL;
    if (eq == NULL || *path == '\0' || strstr(path, "..") || path[0] == '.' ||
        g_str_has_suffix(path, ".")) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--set '%s': expected KEY.PATH=VALUE, e.g. training.pp=4", text);
        return FALSE;
    }
    yaml_parser_t parser;
    yaml_document_t value_doc;
    yaml_parser_initialize(&parser);
    const char *value = eq + 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)value, strlen(value));
    gboolean ok = yaml_parser_load(&parser, &value_doc);
    if (!ok) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "--set %s: bad value '%s': %s", path, value,
                    parser.problem ? parser.problem : "not YAML");
        yaml_parser_delete(&parser);
        return FALSE;
    }
    yaml_parser_delete(&parser);
    OverrideSpan span = {.first = doc_node_count(&P->doc) + 1, .path = g_strdup(path)};
    int root = yaml_document_get_root_node(&P->doc) ? 1 : 0;
    if (root == 0)
        root = yaml_document_add_mapping(&P->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    int copied = yaml_document_get_root_node(&value_doc)
                     ? copy_node(&P->doc, &value_doc, 1)
                     : yaml_document_add_scalar(&P->doc, NULL, (yaml_char_t *)"", 0,
                                                YAML_PLAIN_SCALAR_STYLE);
    yaml_document_delete(&value_doc);
    if (node_at(P, root)->type != YAML_MAPPING_NODE) {
        g_free(span.path);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "--set %s: the scenario is not a mapping", path);
        return FALSE;
    }
    g_auto(GStrv) parts = g_strsplit(path, ".", -1);
    graft(P, root, parts, copied);
    span.last = doc_node_count(&P->doc);
    /* the copied value's node ids also belong to this override */
    span.first = MIN(span.first, copied);
    g_array_append_val(P->spans, span);
    return TRUE;
}

/* ---- the walk ----------------------------------------------------------------------------- */

static void
mark_seen(Parser *P, const char *path, int key_id)
{
    PpsimMark *m = g_new(PpsimMark, 1);
    *m = parser_mark(P, key_id);
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

static gboolean
scalar_int(Parser *P, int id, const char *path, const SchemaKey *k, void *dst, GError **error)
{
    const char *text = scalar_text(node_at(P, id));
    char *end = NULL;
    errno = 0;
    gint64 v = text ? g_ascii_strtoll(text, &end, 10) : 0;
    gboolean ok = text && *text && *end == '\0' && errno == 0 && v >= k->min &&
                  (k->max == 0 || v <= k->max) && v <= G_MAXINT32;
    if (!ok) {
        const char *want = k->min >= 1 ? "a positive integer" : "a non-negative integer";
        if (k->max > 0)
            return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                               "'%s' must be an integer from %g to %g, got '%s'", path, k->min,
                               k->max, text ? text : "a collection");
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE, "'%s' must be %s, got '%s'",
                           path, want, text ? text : "a collection");
    }
    *(int *)dst = (int)v;
    return TRUE;
}

static gboolean
scalar_double(Parser *P, int id, const char *path, const SchemaKey *k, double *dst, GError **error)
{
    const char *text = scalar_text(node_at(P, id));
    char *end = NULL;
    double v = text ? g_ascii_strtod(text, &end) : 0;
    gboolean ok = text && *text && end && *end == '\0' && v == v && v >= k->min &&
                  (k->max == 0 || v <= k->max) && v < 1e300;
    if (!ok) {
        if (k->max > 0)
            return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                               "'%s' must be a number in (0, %g], got '%s'", path, k->max,
                               text ? text : "a collection");
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                           "'%s' must be a non-negative number, got '%s'", path,
                           text ? text : "a collection");
    }
    *dst = v;
    return TRUE;
}

static gboolean
scalar_quantity(Parser *P, int id, const char *path, PpsimDimension dim, const char *def_unit,
                double *out, GError **error)
{
    const char *text = scalar_text(node_at(P, id));
    GError *local = NULL;
    if (text == NULL)
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_UNIT, "'%s' must be %s", path,
                           ppsim_units_dimension_name(dim));
    if (!ppsim_units_parse(text, dim, def_unit, out, &local)) {
        parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_UNIT, "'%s': %s", path, local->message);
        g_error_free(local);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_list(Parser *P, int id, const char *path, gboolean ints, GArray **dst, GError **error)
{
    yaml_node_t *n = node_at(P, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE, "'%s' must be a list", path);
    GArray *list = g_array_new(FALSE, FALSE, ints ? sizeof(int) : sizeof(double));
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    SchemaKey item_key = {.min = 0};
    for (gsize i = 0; i < count; i++) {
        int item = node_at(P, id)->data.sequence.items.start[i];
        int iv = 0;
        double dv = 0;
        gboolean ok = ints ? scalar_int(P, item, path, &item_key, &iv, error)
                           : scalar_double(P, item, path, &item_key, &dv, error);
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
    static const char *const names[] = {"none", "selective", "full", NULL};
    const char *text = scalar_text(node_at(P, id));
    for (int i = 0; text && names[i]; i++)
        if (strcmp(text, names[i]) == 0) {
            *dst = (PpsimRecompute)i;
            return TRUE;
        }
    const char *hint = text ? ppsim_suggest(text, names) : NULL;
    return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                       "'%s' must be none, selective or full, got '%s'%s%s%s", path,
                       text ? text : "a collection", hint ? " (did you mean '" : "",
                       hint ? hint : "", hint ? "'?)" : "");
}

static gboolean parse_section(Parser *P, int id, const SchemaKey *table, const char *prefix,
                              GError **error);
static gboolean parse_special(Parser *P, int id, const char *path, GError **error);

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
        return parse_special(P, id, path, error);
    case KEY_STRING: {
        const char *text = scalar_text(node_at(P, id));
        if (text == NULL || *text == '\0')
            return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                               "'%s' must be a non-empty string", path);
        g_free(*(char **)dst);
        *(char **)dst = g_strdup(text);
        return TRUE;
    }
    case KEY_INT:
        return scalar_int(P, id, path, k, dst, error);
    case KEY_DOUBLE:
        return scalar_double(P, id, path, k, dst, error);
    case KEY_BOOL: {
        const char *t = scalar_text(node_at(P, id));
        gboolean yes = t && (!strcmp(t, "true") || !strcmp(t, "yes") || !strcmp(t, "on"));
        gboolean no = t && (!strcmp(t, "false") || !strcmp(t, "no") || !strcmp(t, "off"));
        if (!yes && !no)
            return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                               "'%s' must be true or false, got '%s'", path, t ? t : "?");
        *(gboolean *)dst = yes;
        return TRUE;
    }
    case KEY_BYTES:
        if (!scalar_quantity(P, id, path, PPSIM_DIM_BYTES, NULL, &q, error))
            return FALSE;
        *(guint64 *)dst = (guint64)q;
        return TRUE;
    case KEY_BANDWIDTH:
    case KEY_FLOPS:
    case KEY_COUNT: {
        PpsimDimension dim = k->type == KEY_BANDWIDTH ? PPSIM_DIM_BANDWIDTH
                             : k->type == KEY_FLOPS   ? PPSIM_DIM_FLOPS
                                                      : PPSIM_DIM_COUNT;
        if (!scalar_quantity(P, id, path, dim, NULL, &q, error))
            return FALSE;
        if (q <= 0)
            return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                               "'%s' must be greater than zero", path);
        *(double *)dst = q;
        return TRUE;
    }
    case KEY_TIME:
    case KEY_TIME_MS:
        if (!scalar_quantity(P, id, path, PPSIM_DIM_TIME, k->type == KEY_TIME_MS ? "ms" : NULL, &q,
                             error))
            return FALSE;
        *(PpsimTime *)dst = ppsim_time_from_seconds(q);
        return TRUE;
    case KEY_RECOMPUTE:
        return parse_recompute(P, id, path, dst, error);
    case KEY_INT_LIST:
    case KEY_DOUBLE_LIST:
        return parse_list(P, id, path, k->type == KEY_INT_LIST, dst, error);
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
    g_autofree char *full = *prefix ? g_strdup_printf("%s.%s", prefix, name) : g_strdup(name);
    if (hint)
        return parser_fail(P, error, key_id, PPSIM_SCENARIO_ERROR_SCHEMA,
                           "unknown key '%s' (did you mean '%s'?)", full, hint);
    g_autoptr(GString) all = g_string_new(NULL);
    for (guint i = 0; i + 1 < names->len; i++)
        g_string_append_printf(all, "%s%s", i ? ", " : "", (char *)names->pdata[i]);
    return parser_fail(P, error, key_id, PPSIM_SCENARIO_ERROR_SCHEMA,
                       "unknown key '%s' (expected one of: %s)", full, all->str);
}

/* A preset is applied before the other keys of `hardware`, whatever their order. */
static gboolean
apply_preset(Parser *P, int map, GError **error)
{
    gsize idx;
    int v = mapping_find(P, map, "preset", &idx);
    if (v == 0)
        return TRUE;
    const char *name = scalar_text(node_at(P, v));
    const PpsimPreset *preset = name ? ppsim_preset_lookup(name) : NULL;
    if (preset == NULL) {
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        for (const PpsimPreset *const *p = ppsim_presets(); *p; p++)
            g_ptr_array_add(names, (gpointer)(*p)->name);
        g_ptr_array_add(names, NULL);
        const char *hint = name ? ppsim_suggest(name, (const char *const *)names->pdata) : NULL;
        return parser_fail(P, error, v, PPSIM_SCENARIO_ERROR_VALUE,
                           "unknown hardware preset '%s' (%s%s%s)", name ? name : "?",
                           hint ? "did you mean '" : "see 'ppsim list presets'", hint ? hint : "",
                           hint ? "'?" : "");
    }
    g_free(P->sc->hardware.preset);
    P->sc->hardware = preset->hw;
    P->sc->hardware.preset = g_strdup(preset->name);
    return TRUE;
}

static gboolean
parse_section(Parser *P, int id, const SchemaKey *table, const char *prefix, GError **error)
{
    if (node_at(P, id)->type != YAML_MAPPING_NODE)
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_PARSE,
                           *prefix ? "'%s' must be a mapping of keys"
                                   : "%sthe scenario must be "
                                     "a mapping of keys",
                           prefix);
    if (strcmp(prefix, "hardware") == 0 && !apply_preset(P, id, error))
        return FALSE;
    gsize count = node_at(P, id)->data.mapping.pairs.top - node_at(P, id)->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = node_at(P, id)->data.mapping.pairs.start[i];
        const char *name = scalar_text(node_at(P, pair.key));
        if (name == NULL)
            return parser_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_PARSE,
                               "keys must be plain words");
        g_autofree char *path = *prefix ? g_strdup_printf("%s.%s", prefix, name) : g_strdup(name);
        const SchemaKey *k = schema_find(table, name);
        if (k == NULL)
            return unknown_key(P, pair.key, table, prefix, name, error);
        if (g_hash_table_contains(P->seen, path))
            return parser_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA,
                               "duplicate key '%s'", path);
        mark_seen(P, path, pair.key);
        if (strcmp(path, "hardware.preset") == 0)
            continue; /* applied above */
        if (!parse_value(P, pair.value, k, path, error))
            return FALSE;
    }
    return TRUE;
}

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
    yaml_node_t *n = node_at(P, id);
    if (n->type == YAML_SCALAR_NODE)
        return g_strdup(scalar_text(n));
    if (n->type != YAML_SEQUENCE_NODE)
        return NULL;
    GString *s = g_string_new(NULL);
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    for (gsize i = 0; i < count; i++) {
        const char *t = scalar_text(node_at(P, node_at(P, id)->data.sequence.items.start[i]));
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
    gsize count = node_at(P, id)->data.mapping.pairs.top - node_at(P, id)->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = node_at(P, id)->data.mapping.pairs.start[i];
        const char *key = scalar_text(node_at(P, pair.key));
        g_autofree char *value = option_text(P, pair.value);
        if (key == NULL || value == NULL)
            return parser_fail(P, error, key ? pair.value : pair.key, PPSIM_SCENARIO_ERROR_PARSE,
                               "schedule options must be 'key: value' with plain values");
        for (gsize j = 0; j < i; j++) {
            const char *prev =
                scalar_text(node_at(P, node_at(P, id)->data.mapping.pairs.start[j].key));
            if (prev && strcmp(prev, key) == 0)
                return parser_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA,
                                   "duplicate key '%s' in schedule", key);
        }
        if (strcmp(key, "name") == 0) {
            g_free(spec->name);
            spec->name = g_steal_pointer(&value);
            spec->mark = parser_mark(P, pair.value);
        } else if (strcmp(key, "file") == 0) {
            spec->file = g_path_is_absolute(value) || P->basedir == NULL
                             ? g_steal_pointer(&value)
                             : g_build_filename(P->basedir, value, NULL);
        } else if (strcmp(key, "label") == 0) {
            spec->label = g_steal_pointer(&value);
        } else {
            PpsimOptionValue o = {g_strdup(key), g_steal_pointer(&value),
                                  parser_mark(P, pair.value)};
            g_array_append_val(spec->options, o);
        }
    }
    if (spec->name == NULL)
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_SCHEMA,
                           "missing key 'name' in schedule");
    return TRUE;
}

static gboolean
schedule_item(Parser *P, int id, GError **error)
{
    yaml_node_t *n = node_at(P, id);
    g_autoptr(GPtrArray) holder =
        g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    PpsimScheduleSpec *spec = ppsim_schedule_spec_new(NULL);
    g_ptr_array_add(holder, spec);
    g_free(spec->label);
    spec->label = NULL;
    if (n->type == YAML_SCALAR_NODE && *scalar_text(n)) {
        spec->name = g_strdup(scalar_text(n));
        spec->mark = parser_mark(P, id);
    } else if (n->type == YAML_MAPPING_NODE) {
        if (!schedule_mapping(P, id, spec, error))
            return FALSE;
    } else {
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_PARSE,
                           "a schedule is a name or a mapping {name: ..., <options>}");
    }
    if (strcmp(spec->name, "custom") == 0 && spec->file == NULL)
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_SCHEMA,
                           "schedule 'custom' needs a 'file' (a schedule CSV)");
    if (spec->label == NULL)
        spec->label = spec_label(spec);
    g_ptr_array_add(P->sc->schedules, g_ptr_array_steal_index(holder, 0));
    return TRUE;
}

static gboolean
parse_schedule(Parser *P, int id, GError **error)
{
    g_ptr_array_set_size(P->sc->schedules, 0);
    yaml_node_t *n = node_at(P, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return schedule_item(P, id, error);
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    if (count == 0)
        return parser_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                           "'schedule' lists no schedule");
    for (gsize i = 0; i < count; i++)
        if (!schedule_item(P, node_at(P, id)->data.sequence.items.start[i], error))
            return FALSE;
    return TRUE;
}

static gboolean
parse_special(Parser *P, int id, const char *path, GError **error)
{
    if (strcmp(path, "schedule") == 0)
        return parse_schedule(P, id, error);
    g_assert(strcmp(path, "memory.limit") == 0);
    if (P->sc->costs.present) {
        SchemaKey k = {.min = 0};
        return scalar_double(P, id, path, &k, &P->sc->memory_limit_units, error);
    }
    double q = 0;
    if (!scalar_quantity(P, id, path, PPSIM_DIM_BYTES, NULL, &q, error))
        return FALSE;
    P->sc->memory_limit_bytes = (guint64)q;
    return TRUE;
}

/* ---- entry points -------------------------------------------------------------------------- */

static gboolean
check_required(Parser *P, const SchemaKey *table, const char *prefix, GError **error)
{
    for (const SchemaKey *k = table; k->name; k++) {
        g_autofree char *path = g_strdup_printf("%s.%s", prefix, k->name);
        if (k->required && !g_hash_table_contains(P->seen, path)) {
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
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
    gboolean ok = yaml_parser_load(&parser, &P->doc);
    if (!ok) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE, "%s:%zu:%zu: %s%s%s",
                    P->display, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                    parser.problem ? parser.problem : "bad YAML", parser.context ? " " : "",
                    parser.context ? parser.context : "");
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
        if (!apply_override(P, overrides[i], error))
            return FALSE;
    gsize idx;
    if (node_at(P, 1)->type == YAML_MAPPING_NODE && mapping_find(P, 1, "costs", &idx) != 0)
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
    ppsim_scenario_finish_defaults(P->sc, P->seen);
    if (!ppsim_scenario_check(P->sc, P->seen, seen_mark, P, error)) {
        g_prefix_error(error, "%s:", P->display);
        return FALSE;
    }
    return TRUE;
}

PpsimScenario *
ppsim_scenario_parse(const char *bytes, gsize len, const char *display_name, const char *basedir,
                     const char *const *overrides, GError **error)
{
    g_autoptr(PpsimScenario) sc = g_new0(PpsimScenario, 1);
    sc->schedules = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_spec_free);
    ppsim_scenario_set_defaults(sc);
    Parser P = {.display = display_name ? display_name : "<scenario>",
                .basedir = basedir,
                .spans = g_array_new(FALSE, FALSE, sizeof(OverrideSpan)),
                .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                .sc = sc};
    gboolean ok = parser_load(&P, bytes, len, error) && parser_run(&P, overrides, error);
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

PpsimScheduleSpec *
ppsim_schedule_spec_new(const char *name)
{
    PpsimScheduleSpec *spec = g_new0(PpsimScheduleSpec, 1);
    spec->name = g_strdup(name);
    spec->label = g_strdup(name);
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
    if (sc->model.stage_layers)
        g_array_free(sc->model.stage_layers, TRUE);
    GArray *lists[] = {sc->costs.stage_forward, sc->costs.stage_backward_input,
                       sc->costs.stage_backward_weight, sc->costs.stage_activation};
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++)
        if (lists[i])
            g_array_free(lists[i], TRUE);
    if (sc->schedules)
        g_ptr_array_unref(sc->schedules);
    g_free(sc);
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
