/* scenario-variability.c: the `variability:` section's lists (scenarios/README.md "Variability"):
 * `devices: {ID: factor}`, `links: {"A-B": factor}` and `events: [{device, from, to,
 * factor}]`. The cv keys are plain numbers of the schema table. Device ids are checked
 * against the pipeline's size after the walk (training.pp may come later in the file).
 */
#include "scenario/scenario-internal.h"
#include "util/ppsim-error.h"

#include <stdlib.h>
#include <string.h>

double
ppsim_variability_cv(const PpsimVariability *v, PpsimNoiseKind kind)
{
    return v->cv_kind[kind] >= 0 ? v->cv_kind[kind] : v->cv;
}

static void
slowdowns_free(GArray *list, gboolean events)
{
    if (list == NULL)
        return;
    for (guint i = 0; i < list->len; i++)
        g_free(events ? g_array_index(list, PpsimSlowEvent, i).where
                      : g_array_index(list, PpsimSlowdown, i).where);
    g_array_free(list, TRUE);
}

void
ppsim_variability_clear(PpsimVariability *v)
{
    slowdowns_free(v->devices, FALSE);
    slowdowns_free(v->links, FALSE);
    slowdowns_free(v->events, TRUE);
    v->devices = v->links = v->events = NULL;
}

/* A device id: a non-negative integer (its range is checked after the walk). */
static gboolean
parse_device_id(const char *text, int *out)
{
    char *end = NULL;
    if (text == NULL || !g_ascii_isdigit(*text))
        return FALSE;
    gint64 v = g_ascii_strtoll(text, &end, 10);
    if (*end != '\0' || v > G_MAXINT32)
        return FALSE;
    *out = (int)v;
    return TRUE;
}

/* A slowdown factor: a number greater than 0 (1 = no slowdown, 2 = twice as slow). */
static gboolean
parse_factor(Parser *P, int id, const char *path, double *out, GError **error)
{
    const char *text = scn_scalar_text(scn_node_at(P, id));
    char *end = NULL;
    double v = text ? g_ascii_strtod(text, &end) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || !(v > 0) || v > 1e6)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                        "'%s' must be a slowdown factor greater than 0 (at most 1e6), got '%s'",
                        path, text ? text : "a collection");
    *out = v;
    return TRUE;
}

/* devices: {ID: factor} or links: {"A-B": factor}. */
static gboolean
parse_slowdowns(Parser *P, int id, const char *path, gboolean links, GError **error)
{
    yaml_node_t *n = scn_node_at(P, id);
    if (n->type != YAML_MAPPING_NODE)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                        links ? "'%s' must be a mapping {\"A-B\": factor} (devices A and B)"
                              : "'%s' must be a mapping {device: factor}",
                        path);
    GArray **dst = links ? &P->sc->variability.links : &P->sc->variability.devices;
    slowdowns_free(*dst, FALSE);
    *dst = g_array_new(FALSE, FALSE, sizeof(PpsimSlowdown));
    gsize count = n->data.mapping.pairs.top - n->data.mapping.pairs.start;
    for (gsize i = 0; i < count; i++) {
        yaml_node_pair_t pair = scn_node_at(P, id)->data.mapping.pairs.start[i];
        const char *key = scn_scalar_text(scn_node_at(P, pair.key));
        g_autofree char *item = g_strdup_printf("%s.%s", path, key ? key : "?");
        PpsimSlowdown s = {.b = -1};
        gboolean ok;
        if (links) {
            g_auto(GStrv) ends = key ? g_strsplit(key, "-", 2) : NULL;
            ok = ends != NULL && g_strv_length(ends) == 2 && parse_device_id(ends[0], &s.a) &&
                 parse_device_id(ends[1], &s.b) && s.a != s.b;
            if (!ok)
                return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_VALUE,
                                "'%s': a link is named by its two devices, e.g. \"0-1\", got '%s'",
                                path, key ? key : "a collection");
        } else if (!parse_device_id(key, &s.a)) {
            return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s': a device is a non-negative integer id, got '%s'", path,
                            key ? key : "a collection");
        }
        for (guint k = 0; k < (*dst)->len; k++) {
            const PpsimSlowdown *o = &g_array_index(*dst, PpsimSlowdown, k);
            if (MIN(o->a, o->b == -1 ? o->a : o->b) == MIN(s.a, s.b == -1 ? s.a : s.b) &&
                MAX(o->a, o->b) == MAX(s.a, s.b))
                return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA,
                                "duplicate key '%s'", item);
        }
        if (!parse_factor(P, pair.value, item, &s.factor, error))
            return FALSE;
        s.where = scn_where(P, pair.key);
        g_array_append_val(*dst, s);
    }
    return TRUE;
}

/* One field of an event: device (int), from and to (times, bare = ms), factor. */
static gboolean
parse_event_field(Parser *P, yaml_node_pair_t pair, const char *path, PpsimSlowEvent *e,
                  unsigned *seen, GError **error)
{
    static const char *const fields[] = {"device", "from", "to", "factor", NULL};
    const char *key = scn_scalar_text(scn_node_at(P, pair.key));
    int f = 0;
    while (fields[f] && (key == NULL || strcmp(key, fields[f]) != 0))
        f++;
    if (fields[f] == NULL)
        return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "unknown key '%s.%s' (expected one of: device, from, to, factor)", path,
                        key ? key : "?");
    if (*seen & (1u << f))
        return scn_fail(P, error, pair.key, PPSIM_SCENARIO_ERROR_SCHEMA, "duplicate key '%s.%s'",
                        path, key);
    *seen |= 1u << f;
    g_autofree char *item = g_strdup_printf("%s.%s", path, key);
    if (f == 0) {
        if (!parse_device_id(scn_scalar_text(scn_node_at(P, pair.value)), &e->device))
            return scn_fail(P, error, pair.value, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be a device id (a non-negative integer)", item);
        return TRUE;
    }
    if (f == 3)
        return parse_factor(P, pair.value, item, &e->factor, error);
    double q = 0;
    if (!scn_scalar_quantity(P, pair.value, item, PPSIM_DIM_TIME, "ms", &q, error))
        return FALSE;
    if (q < 0)
        return scn_fail(P, error, pair.value, PPSIM_SCENARIO_ERROR_VALUE,
                        "'%s' must be a time of at least 0", item);
    *(f == 1 ? &e->from_ps : &e->to_ps) = ppsim_time_from_seconds(q);
    return TRUE;
}

/* events: [{device: D, from: T0, to: T1, factor: K}, ...]. */
static gboolean
parse_events(Parser *P, int id, const char *path, GError **error)
{
    yaml_node_t *n = scn_node_at(P, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return scn_fail(P, error, id, PPSIM_SCENARIO_ERROR_VALUE,
                        "'%s' must be a list of {device, from, to, factor}", path);
    GArray **dst = &P->sc->variability.events;
    slowdowns_free(*dst, TRUE);
    *dst = g_array_new(FALSE, FALSE, sizeof(PpsimSlowEvent));
    gsize count = n->data.sequence.items.top - n->data.sequence.items.start;
    for (gsize i = 0; i < count; i++) {
        int item = scn_node_at(P, id)->data.sequence.items.start[i];
        yaml_node_t *m = scn_node_at(P, item);
        g_autofree char *name = g_strdup_printf("%s[%zu]", path, i);
        if (m->type != YAML_MAPPING_NODE)
            return scn_fail(P, error, item, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s' must be a mapping {device, from, to, factor}", name);
        PpsimSlowEvent e = {0};
        unsigned seen = 0;
        gsize pairs = m->data.mapping.pairs.top - m->data.mapping.pairs.start;
        for (gsize k = 0; k < pairs; k++)
            if (!parse_event_field(P, scn_node_at(P, item)->data.mapping.pairs.start[k], name, &e,
                                   &seen, error))
                return FALSE;
        if (seen != 15u)
            return scn_fail(P, error, item, PPSIM_SCENARIO_ERROR_SCHEMA,
                            "'%s' needs device, from, to and factor", name);
        if (e.from_ps > e.to_ps) {
            gsize at;
            int from = scn_mapping_find(P, item, "from", &at);
            return scn_fail(P, error, from, PPSIM_SCENARIO_ERROR_VALUE,
                            "'%s': the window ends before it starts (from > to)", name);
        }
        e.where = scn_where(P, item);
        g_array_append_val(*dst, e);
    }
    return TRUE;
}

gboolean
scn_parse_variability(Parser *P, int id, const char *path, GError **error)
{
    if (strcmp(path, "variability.events") == 0)
        return parse_events(P, id, path, error);
    g_assert(strcmp(path, "variability.devices") == 0 || strcmp(path, "variability.links") == 0);
    return parse_slowdowns(P, id, path, strcmp(path, "variability.links") == 0, error);
}

/* @device of the entry at @where: one of the pipeline's training.pp devices. */
static gboolean
check_device(const PpsimScenario *sc, int device, const char *where, const char *what,
             GError **error)
{
    if (device < sc->training.pp)
        return TRUE;
    g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                "%s: 'variability.%s': no device %d (the pipeline has devices 0 to %d)", where,
                what, device, sc->training.pp - 1);
    return FALSE;
}

gboolean
scn_check_variability(const PpsimScenario *sc, GError **error)
{
    const PpsimVariability *v = &sc->variability;
    for (guint i = 0; v->devices && i < v->devices->len; i++) {
        const PpsimSlowdown *s = &g_array_index(v->devices, PpsimSlowdown, i);
        if (!check_device(sc, s->a, s->where, "devices", error))
            return FALSE;
    }
    for (guint i = 0; v->links && i < v->links->len; i++) {
        const PpsimSlowdown *s = &g_array_index(v->links, PpsimSlowdown, i);
        if (!check_device(sc, MAX(s->a, s->b), s->where, "links", error))
            return FALSE;
    }
    for (guint i = 0; v->events && i < v->events->len; i++) {
        const PpsimSlowEvent *e = &g_array_index(v->events, PpsimSlowEvent, i);
        if (!check_device(sc, e->device, e->where, "events", error))
            return FALSE;
    }
    return TRUE;
}
