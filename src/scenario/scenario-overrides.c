/* scenario-overrides.c: --set key.path=value, grafted into the YAML document before the
 * walk, as if written in the file; the nodes it adds are remembered so errors about them
 * name "--set key.path" instead of a file position. */
#include "scenario/scenario-internal.h"
#include "util/ppsim-error.h"

#include <string.h>

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
