/* scenario-load.c: the I/O edge of scenario loading: read the file, parse the bytes. */
#include "scenario/scenario.h"
#include "util/ppsim-error.h"
#include "util/read-file.h"
#include "util/yaml-depth.h"

#include <yaml.h>

/* Most nodes a fragment may expand to, aliases included (as for one --set value). */
#define FRAGMENT_MAX_NODES 65536

PpsimScenario *
ppsim_scenario_load_file(const char *path, const char *const *overrides, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!ppsim_read_file(path, PPSIM_SCENARIO_MAX_BYTES, "a scenario file", &text, &len, error))
        return NULL;
    g_autofree char *dir = g_path_get_dirname(path);
    return ppsim_scenario_parse(text, len, path, dir, overrides, error);
}

/* Appends scalar @n, or a mapping of scalars as "{k: v, ...}"; FALSE on anything else. */
static gboolean
fragment_flow(yaml_document_t *doc, yaml_node_t *n, GString *out)
{
    if (n->type == YAML_SCALAR_NODE) {
        g_string_append_len(out, (const char *)n->data.scalar.value, (gssize)n->data.scalar.length);
        return TRUE;
    }
    if (n->type != YAML_MAPPING_NODE)
        return FALSE;
    g_string_append_c(out, '{');
    for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
         pair++) {
        yaml_node_t *k = yaml_document_get_node(doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(doc, pair->value);
        if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
            return FALSE;
        g_string_append_printf(out, "%s%.*s: %.*s", pair == n->data.mapping.pairs.start ? "" : ", ",
                               (int)k->data.scalar.length, (const char *)k->data.scalar.value,
                               (int)v->data.scalar.length, (const char *)v->data.scalar.value);
    }
    g_string_append_c(out, '}');
    return TRUE;
}

/* Appends "a.b=value" for every leaf under mapping node @id of @doc; sequences of scalars
 * (or of flat mappings, {full: 3}) become flow lists "[x, {k: v}]". FALSE on anything
 * deeper. */
static gboolean
fragment_walk(yaml_document_t *doc, int id, const char *prefix, GPtrArray *out, int depth,
              int *budget)
{
    /* aliases are expanded: a cycle or a "billion laughs" stops here */
    if (depth > PPSIM_YAML_MAX_DEPTH || --*budget < 0)
        return FALSE;
    yaml_node_t *n = yaml_document_get_node(doc, id);
    if (n->type == YAML_SCALAR_NODE) {
        g_ptr_array_add(out, g_strdup_printf("%s=%.*s", prefix, (int)n->data.scalar.length,
                                             (const char *)n->data.scalar.value));
        return TRUE;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        g_autoptr(GString) s = g_string_new(prefix);
        g_string_append(s, "=[");
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *item = yaml_document_get_node(doc, *it);
            g_string_append(s, it == n->data.sequence.items.start ? "" : ", ");
            if (--*budget < 0 || !fragment_flow(doc, item, s))
                return FALSE;
        }
        g_string_append_c(s, ']');
        g_ptr_array_add(out, g_string_free(g_steal_pointer(&s), FALSE));
        return TRUE;
    }
    for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
         pair++) {
        yaml_node_t *key = yaml_document_get_node(doc, pair->key);
        if (key->type != YAML_SCALAR_NODE)
            return FALSE;
        g_autofree char *path =
            *prefix ? g_strdup_printf("%s.%.*s", prefix, (int)key->data.scalar.length,
                                      (const char *)key->data.scalar.value)
                    : g_strndup((const char *)key->data.scalar.value, key->data.scalar.length);
        if (!fragment_walk(doc, pair->value, path, out, depth + 1, budget))
            return FALSE;
    }
    return TRUE;
}

char **
ppsim_scenario_fragment_overrides(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!ppsim_read_file(path, PPSIM_SCENARIO_MAX_BYTES, "a scenario fragment", &text, &len, error))
        return NULL;
    yaml_document_t doc;
    if (!ppsim_yaml_load_checked(text, len, path, &doc, PPSIM_SCENARIO_ERROR,
                                 PPSIM_SCENARIO_ERROR_PARSE, error))
        return NULL;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
    int budget = FRAGMENT_MAX_NODES;
    gboolean ok = root != NULL && root->type == YAML_MAPPING_NODE &&
                  fragment_walk(&doc, 1, "", out, 1, &budget);
    yaml_document_delete(&doc);
    if (!ok && budget < 0) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: the fragment expands to more than %d YAML nodes (aliases are expanded)",
                    path, FRAGMENT_MAX_NODES);
        return NULL;
    }
    if (!ok) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "%s: a scenario fragment must be a YAML mapping of keys to values or lists "
                    "of values",
                    path);
        return NULL;
    }
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}
