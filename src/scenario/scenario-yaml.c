/* scenario-yaml.c: the YAML node helpers below the scenario walk: node look-up, positions
 * for messages ("file:line:col", or "--set key.path" for nodes an override added), errors,
 * scalars, quantities and mapping look-ups. scenario-parse.c, scenario-overrides.c and
 * scenario-schedule.c all build on these; this file calls none of them.
 */
#include "scenario/scenario-internal.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <string.h>

yaml_node_t *
scn_node_at(Parser *P, int id)
{
    return yaml_document_get_node(&P->doc, id);
}

char *
scn_set_where(const char *path)
{
    g_autofree char *q = ppsim_quote(path);
    return g_strdup_printf("--set %s", q);
}

/* "file:line:col" or "--set key.path" for messages about node @id. */
char *
scn_where(Parser *P, int id)
{
    for (guint i = 0; i < P->spans->len; i++) {
        OverrideSpan *s = &g_array_index(P->spans, OverrideSpan, i);
        if (id >= s->first && id <= s->last)
            return scn_set_where(s->path);
    }
    yaml_node_t *n = id > 0 ? scn_node_at(P, id) : NULL;
    if (n == NULL)
        return g_strdup_printf("%s:1:1", P->display);
    return g_strdup_printf("%s:%zu:%zu", P->display, n->start_mark.line + 1,
                           n->start_mark.column + 1);
}

PpsimMark
scn_mark(Parser *P, int id)
{
    yaml_node_t *n = id > 0 ? scn_node_at(P, id) : NULL;
    PpsimMark m = {0, 0};
    if (n != NULL && n->start_mark.line + n->start_mark.column > 0) {
        m.line = (int)n->start_mark.line + 1;
        m.col = (int)n->start_mark.column + 1;
    } else if (n != NULL) {
        m.line = m.col = 1;
    }
    return m;
}

gboolean
scn_fail(Parser *P, GError **error, int id, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *where = scn_where(P, id);
    g_set_error(error, PPSIM_SCENARIO_ERROR, code, "%s: %s", where, msg);
    return FALSE;
}

const char *
scn_scalar_text(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

char *
scn_given(yaml_node_t *n)
{
    if (n == NULL)
        return g_strdup("nothing");
    if (n->type == YAML_SEQUENCE_NODE)
        return g_strdup("a list");
    if (n->type == YAML_MAPPING_NODE)
        return g_strdup("a mapping");
    g_autofree char *q =
        ppsim_quote_len((const char *)n->data.scalar.value, (gssize)n->data.scalar.length);
    return g_strdup_printf("'%s'", q);
}

/* The value node of @key in mapping @map, and the pair's index (-1 when absent). */
int
scn_mapping_find(Parser *P, int map, const char *key, gsize *pair_index)
{
    yaml_node_t *m = scn_node_at(P, map);
    gsize count = m->data.mapping.pairs.top - m->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        const char *k = scn_scalar_text(scn_node_at(P, m->data.mapping.pairs.start[i].key));
        if (k && strcmp(k, key) == 0) {
            *pair_index = i;
            return m->data.mapping.pairs.start[i].value;
        }
    }
    return 0;
}

gboolean
scn_scalar_double(Parser *P, int id, const char *path, const SchemaKey *k, double *dst,
                  GError **error)
{
    const char *text = scn_scalar_text(scn_node_at(P, id));
    char *end = NULL;
    double v = text ? g_ascii_strtod(text, &end) : 0;
    gboolean ok = text && *text && end && *end == '\0' && v == v && v >= k->min &&
                  (k->max == 0 || v <= k->max) && v <= PPSIM_SCENARIO_DOUBLE_MAX;
    if (!ok) {
        g_autofree char *given = scn_given(scn_node_at(P, id));
        const char *inf = text && end && *end == '\0' && (v == v) && (v > 1e308 || v < -1e308)
                              ? " (infinity is not a value here)"
                              : "";
        if (k->max > 0)
            return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be a number in %s0, %g], got %s%s", path,
                            k->min > 0 ? "(" : "[", k->max, given, inf);
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                        "'%s' must be a number from 0 to %g, got %s%s", path,
                        PPSIM_SCENARIO_DOUBLE_MAX, given, inf);
    }
    *dst = v;
    return TRUE;
}

gboolean
scn_scalar_quantity(Parser *P, int id, const char *path, PpsimDimension dim, const char *def_unit,
                    double *out, GError **error)
{
    const char *text = scn_scalar_text(scn_node_at(P, id));
    GError *local = NULL;
    if (text == NULL) {
        g_autofree char *given = scn_given(scn_node_at(P, id));
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_UNIT, "'%s' must be %s, got %s", path,
                        ppsim_units_dimension_name(dim), given);
    }
    if (!ppsim_units_parse(text, dim, def_unit, out, &local)) {
        scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_UNIT, "'%s': %s", path, local->message);
        g_error_free(local);
        return FALSE;
    }
    return TRUE;
}
