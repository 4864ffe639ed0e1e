/* scenario-overrides.c: --set key.path=value, grafted into the YAML document before the
 * walk, as if written in the file; the nodes it adds are remembered so errors about them
 * name "--set key.path" instead of a file position. */
#include "scenario/scenario-internal.h"
#include "util/ppsim-error.h"
#include "util/quote.h"
#include "util/read-file.h"
#include "util/yaml-depth.h"

#include <string.h>

/* Most nodes one --set value may add: a command line (128 KiB per argument on Linux) cannot
 * spell out more without aliases, and aliases are expanded by the copy below, so a
 * "billion laughs" value (each level listing the previous one many times) must stop here. */
#define OVERRIDE_MAX_NODES 65536
/* Longest key path of a --set (the longest real one has about 40 characters). */
#define OVERRIDE_MAX_PATH 256

typedef struct {
    yaml_document_t *dst, *src;
    int copied; /* nodes added so far */
} NodeCopy;

/* Copies node @id of the value's document, aliases expanded; 0 when the copy would pass
 * OVERRIDE_MAX_NODES nodes or PPSIM_YAML_MAX_DEPTH levels (an alias cycle passes both). */
static int
copy_node(NodeCopy *c, int id, int depth)
{
    if (++c->copied > OVERRIDE_MAX_NODES || depth > PPSIM_YAML_MAX_DEPTH)
        return 0;
    yaml_node_t *n = yaml_document_get_node(c->src, id);
    if (n->type == YAML_SCALAR_NODE)
        return yaml_document_add_scalar(c->dst, NULL, n->data.scalar.value,
                                        (int)n->data.scalar.length, n->data.scalar.style);
    if (n->type == YAML_SEQUENCE_NODE) {
        int seq = yaml_document_add_sequence(c->dst, NULL, YAML_FLOW_SEQUENCE_STYLE);
        gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
        for (gsize i = 0; i < count; i++) {
            int item = yaml_document_get_node(c->src, id)->data.sequence.items.start[i];
            int copy = copy_node(c, item, depth + 1);
            if (copy == 0)
                return 0;
            yaml_document_append_sequence_item(c->dst, seq, copy);
        }
        return seq;
    }
    int map = yaml_document_add_mapping(c->dst, NULL, YAML_FLOW_MAPPING_STYLE);
    gsize count = n->data.mapping.pairs.top - n->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = yaml_document_get_node(c->src, id)->data.mapping.pairs.start[i];
        int k = copy_node(c, pair.key, depth + 1);
        int v = k ? copy_node(c, pair.value, depth + 1) : 0;
        if (v == 0)
            return 0;
        yaml_document_append_mapping_pair(c->dst, map, k, v);
    }
    return map;
}

/* Sets @parts (a key path) of mapping @map to node @value, creating mappings on the way. */
static void
graft(Parser *P, int map, char **parts, int value)
{
    gsize idx = 0;
    int child = scn_mapping_find(P, map, parts[0], &idx);
    if (parts[1] == NULL) {
        if (child != 0) {
            scn_node_at(P, map)->data.mapping.pairs.start[idx].value = value;
        } else {
            int k = yaml_document_add_scalar(&P->doc, NULL, (yaml_char_t *)parts[0], -1,
                                             YAML_PLAIN_SCALAR_STYLE);
            yaml_document_append_mapping_pair(&P->doc, map, k, value);
        }
        return;
    }
    if (child == 0 || scn_node_at(P, child)->type != YAML_MAPPING_NODE) {
        int fresh = yaml_document_add_mapping(&P->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
        if (child != 0) {
            scn_node_at(P, map)->data.mapping.pairs.start[idx].value = fresh;
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

gboolean
scn_apply_override(Parser *P, const char *text, GError **error)
{
    const char *eq = strchr(text, '=');
    g_autofree char *path = eq ? g_strstrip(g_strndup(text, eq - text)) : NULL;
    /* libyaml refuses (and then asserts on) key scalars that are not UTF-8 */
    if (eq == NULL || *path == '\0' || strstr(path, "..") || path[0] == '.' ||
        g_str_has_suffix(path, ".") || !g_utf8_validate(path, -1, NULL)) {
        g_autofree char *q = ppsim_quote(text);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--set '%s': expected KEY.PATH=VALUE, e.g. training.pp=4%s", q,
                    eq != NULL && !g_utf8_validate(path, -1, NULL)
                        ? " (the key path is not UTF-8 text)"
                        : "");
        return FALSE;
    }
    if (strlen(path) > OVERRIDE_MAX_PATH) {
        g_autofree char *q = ppsim_quote(path);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--set '%s': a key path of more than %d characters (no key has one)", q,
                    OVERRIDE_MAX_PATH);
        return FALSE;
    }
    const char *value = eq + 1;
    gsize value_len = strlen(value);
    if (value_len > PPSIM_SET_MAX_BYTES) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--set %s: the value has %" G_GSIZE_FORMAT
                    " bytes, more than the %" G_GSIZE_FORMAT " MiB one value may have",
                    path, value_len, PPSIM_SET_MAX_BYTES >> 20);
        return FALSE;
    }
    if (!g_utf8_validate(value, (gssize)value_len, NULL)) {
        const char *bad = NULL;
        g_utf8_validate(value, (gssize)value_len, &bad);
        g_autofree char *q = ppsim_quote(value);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "--set %s: the value '%s' is not UTF-8 text (byte %" G_GSIZE_FORMAT
                    "); scenario values are UTF-8",
                    path, q, (gsize)(bad - value) + 1);
        return FALSE;
    }
    yaml_mark_t deep;
    if (!ppsim_yaml_check_depth(value, strlen(value), &deep)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "--set %s: value nested more than %d levels deep (column %zu)", path,
                    PPSIM_YAML_MAX_DEPTH, deep.column + 1);
        return FALSE;
    }
    yaml_parser_t parser;
    yaml_document_t value_doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)value, strlen(value));
    gboolean ok = yaml_parser_load(&parser, &value_doc);
    if (!ok) {
        g_autofree char *q = ppsim_quote(value);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "--set %s: bad value '%s': %s", path, q,
                    parser.problem ? parser.problem : "not YAML");
        yaml_parser_delete(&parser);
        return FALSE;
    }
    yaml_parser_delete(&parser);
    OverrideSpan span = {.first = doc_node_count(&P->doc) + 1, .path = g_strdup(path)};
    int root = yaml_document_get_root_node(&P->doc) ? 1 : 0;
    if (root == 0)
        root = yaml_document_add_mapping(&P->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    NodeCopy c = {.dst = &P->doc, .src = &value_doc};
    int copied = yaml_document_get_root_node(&value_doc)
                     ? copy_node(&c, 1, 1)
                     : yaml_document_add_scalar(&P->doc, NULL, (yaml_char_t *)"", 0,
                                                YAML_PLAIN_SCALAR_STYLE);
    yaml_document_delete(&value_doc);
    if (copied == 0) {
        g_free(span.path);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "--set %s: the value expands to more than %d YAML nodes or %d levels "
                    "(aliases are expanded)",
                    path, OVERRIDE_MAX_NODES, PPSIM_YAML_MAX_DEPTH);
        return FALSE;
    }
    if (scn_node_at(P, root)->type != YAML_MAPPING_NODE) {
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
