/* sweep-file.c: sweep files and `--grid` axes -> PpsimSweep; see sweep.h.
 *
 * Every axis value becomes the right-hand side of a `--set key.path=value` override, written
 * as YAML flow text, so the scenario parser checks it exactly as it checks a scenario file.
 * Each value is tried on the base at load time (values only: the rules relating several keys
 * are left to the points, which report them as rows), so typos fail before any point runs.
 */
#include "sweep/sweep-internal.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"
#include "util/read-file.h"
#include "util/suggest.h"
#include "util/yaml-depth.h"
#include "util/quote.h"

#include <math.h>
#include <string.h>
#include <yaml.h>

/* Most values one range axis may make. */
#define SWEEP_MAX_RANGE 1000000

/* ---- YAML helpers ------------------------------------------------------------------------- */

typedef struct {
    yaml_document_t doc;
    const char *display;
} Doc;

static yaml_node_t *
node_at(Doc *D, int id)
{
    return yaml_document_get_node(&D->doc, id);
}

static PpsimMark
node_mark(Doc *D, int id)
{
    yaml_node_t *n = node_at(D, id);
    PpsimMark m = {(int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
    return m;
}

static gboolean doc_fail(Doc *D, int id, GError **error, int code, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);

static gboolean
doc_fail(Doc *D, int id, GError **error, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    PpsimMark m = node_mark(D, id);
    g_set_error(error, PPSIM_SCENARIO_ERROR, code, "%s:%d:%d: %s", D->display, m.line, m.col, msg);
    return FALSE;
}

static const char *
scalar(Doc *D, int id)
{
    yaml_node_t *n = node_at(D, id);
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Longest text one sweep value or inline scenario may expand to. */
#define SWEEP_TEXT_MAX (16 << 20)

/* Appends node @id as YAML flow text (scalars quoted unless plainly safe); FALSE past
 * SWEEP_TEXT_MAX bytes or PPSIM_YAML_MAX_DEPTH levels. */
static gboolean
flow_text_at(GString *out, Doc *D, int id, int depth)
{
    /* aliases are expanded: a cycle, or a "billion laughs" of nested aliases, stops here */
    if (depth > PPSIM_YAML_MAX_DEPTH || out->len > SWEEP_TEXT_MAX)
        return FALSE;
    yaml_node_t *n = node_at(D, id);
    if (n->type == YAML_SCALAR_NODE) {
        const char *t = (const char *)n->data.scalar.value;
        gboolean plain = *t != '\0';
        for (const char *c = t; *c && plain; c++)
            plain = g_ascii_isalnum(*c) || strchr("_.+-/", *c) != NULL;
        if (plain) {
            g_string_append(out, t);
            return TRUE;
        }
        g_string_append_c(out, '"');
        for (const char *c = t; *c; c++) {
            if (*c == '"' || *c == '\\')
                g_string_append_c(out, '\\');
            g_string_append_c(out, *c);
        }
        g_string_append_c(out, '"');
    } else if (n->type == YAML_SEQUENCE_NODE) {
        g_string_append_c(out, '[');
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            if (it != n->data.sequence.items.start)
                g_string_append(out, ", ");
            if (!flow_text_at(out, D, *it, depth + 1))
                return FALSE;
        }
        g_string_append_c(out, ']');
    } else {
        g_string_append_c(out, '{');
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            if (p != n->data.mapping.pairs.start)
                g_string_append(out, ", ");
            if (!flow_text_at(out, D, p->key, depth + 1))
                return FALSE;
            g_string_append(out, ": ");
            if (!flow_text_at(out, D, p->value, depth + 1))
                return FALSE;
        }
        g_string_append_c(out, '}');
    }
    return TRUE;
}

/* Node @id as YAML flow text into @out; an error when it expands past SWEEP_TEXT_MAX bytes or
 * PPSIM_YAML_MAX_DEPTH levels. */
static gboolean
flow_text(GString *out, Doc *D, int id, GError **error)
{
    if (flow_text_at(out, D, id, 1))
        return TRUE;
    return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_VALUE,
                    "the value expands to more than %d MiB or %d levels (aliases are expanded)",
                    SWEEP_TEXT_MAX >> 20, PPSIM_YAML_MAX_DEPTH);
}

/* ---- axes --------------------------------------------------------------------------------- */

static void
number_text(GString *out, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)v);
    else
        ppsim_fmt_double(out, v);
}

/* {from: A, to: B, step: S} (A, A+S, ... <= B) or {from: A, to: B, times: F} (A, AF, ...). */
static gboolean
axis_range(PpsimSweep *s, PpsimSweepAxis *a, Doc *D, int id, GError **error)
{
    double v[3] = {NAN, NAN, NAN};
    gboolean geometric = FALSE;
    g_autofree char *qp = ppsim_quote(a->path);
    yaml_node_t *n = node_at(D, id);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const char *k = scalar(D, p->key), *t = scalar(D, p->value);
        static const char *const keys[] = {"from", "to", "step", "times", NULL};
        int which = -1;
        for (int i = 0; k && keys[i]; i++)
            if (strcmp(k, keys[i]) == 0)
                which = i;
        if (which < 0) {
            const char *hint = k ? ppsim_suggest(k, keys) : NULL;
            g_autofree char *qk = k ? ppsim_quote(k) : g_strdup("?");
            return doc_fail(D, p->key, error, PPSIM_SCENARIO_ERROR_SCHEMA,
                            "axis '%s': a range takes from, to and step or times, got '%s'%s%s%s",
                            qp, qk, hint ? " (did you mean '" : "", hint ? hint : "",
                            hint ? "'?)" : "");
        }
        char *end = NULL;
        double x = t ? g_ascii_strtod(t, &end) : NAN;
        if (t == NULL || end == t || *end != '\0' || !isfinite(x)) {
            yaml_node_t *vn = node_at(D, p->value);
            g_autofree char *q = t != NULL ? ppsim_quote(t) : NULL;
            g_autofree char *given = t != NULL                        ? g_strdup_printf("'%s'", q)
                                     : vn->type == YAML_SEQUENCE_NODE ? g_strdup("a list")
                                                                      : g_strdup("a mapping");
            return doc_fail(D, p->value, error, PPSIM_SCENARIO_ERROR_VALUE,
                            "axis '%s': '%s' must be a finite number, got %s", qp, k, given);
        }
        geometric |= which == 3;
        v[which == 3 ? 2 : which] = x;
    }
    if (isnan(v[0]) || isnan(v[1]) || isnan(v[2]))
        return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "axis '%s': a range needs from, to and step (or times)", qp);
    if ((geometric && !(v[2] > 1 && v[0] > 0)) || (!geometric && !(v[2] > 0)))
        return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_VALUE,
                        geometric ? "axis '%s': times must be > 1 and from > 0"
                                  : "axis '%s': step must be > 0",
                        qp);
    PpsimMark m = node_mark(D, id);
    g_autofree char *where = g_strdup_printf("%s:%d:%d", D->display, m.line, m.col);
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (double x = v[0]; x <= v[1] * (1 + 1e-12); x = geometric ? x * v[2] : x + v[2]) {
        if ((int)texts->len >= SWEEP_MAX_RANGE)
            return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_VALUE,
                            "axis '%s': the range makes more than %d values", qp, SWEEP_MAX_RANGE);
        GString *t = g_string_new(NULL);
        number_text(t, x);
        g_ptr_array_add(texts, g_string_free(t, FALSE));
    }
    /* A value check is an interval and, for integer keys, integrality. An arithmetic range
     * is monotone and its values are integers when the first two are, so trying the first
     * two and the last tries them all (a long range then loads in constant time); a
     * geometric one is short and tried value by value. */
    for (guint i = 0; i < texts->len; i++) {
        const char *t = g_ptr_array_index(texts, i);
        gboolean trial = geometric || i < 2 || i + 1 == texts->len;
        if (!ppsim_sweep_axis_add(s, a, t, t, trial ? where : NULL, error))
            return FALSE;
    }
    return TRUE;
}

/* Axis @path from node @id: a list, a range or one scalar. */
static gboolean
axis_parse(PpsimSweep *s, Doc *D, const char *path, int key_id, int id, int group, GError **error)
{
    g_autofree char *qpath = ppsim_quote(path);
    for (guint i = 0; i < s->axes->len; i++)
        if (strcmp(((PpsimSweepAxis *)g_ptr_array_index(s->axes, i))->path, path) == 0)
            return doc_fail(D, key_id, error, PPSIM_SCENARIO_ERROR_SCHEMA,
                            "axis '%s' is given twice", qpath);
    PpsimSweepAxis *a = ppsim_sweep_axis_new(path, node_mark(D, key_id), group);
    g_ptr_array_add(s->axes, a);
    yaml_node_t *n = node_at(D, id);
    if (n->type == YAML_MAPPING_NODE && strcmp(path, "schedule") != 0)
        return axis_range(s, a, D, id, error);
    int one[1] = {id};
    int *items = one, count = 1;
    if (n->type == YAML_SEQUENCE_NODE) {
        items = n->data.sequence.items.start;
        count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    }
    if (count == 0 || (n->type == YAML_SCALAR_NODE && *scalar(D, id) == '\0'))
        return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_VALUE, "axis '%s' is empty", qpath);
    for (int i = 0; i < count; i++) {
        g_autoptr(GString) t = g_string_new(NULL);
        if (!flow_text(t, D, items[i], error))
            return FALSE;
        const char *label = scalar(D, items[i]) ? scalar(D, items[i]) : t->str;
        PpsimMark m = node_mark(D, items[i]);
        g_autofree char *where = g_strdup_printf("%s:%d:%d", D->display, m.line, m.col);
        if (!ppsim_sweep_axis_add(s, a, t->str, label, where, error))
            return FALSE;
    }
    return TRUE;
}

/* ---- the sweep file ------------------------------------------------------------------------- */

static gboolean
sweep_scenario(PpsimSweep *s, Doc *D, int id, const char *dir, GError **error)
{
    const char *path = scalar(D, id);
    if (path != NULL) {
        s->scenario_path =
            g_path_is_absolute(path) ? g_strdup(path) : g_build_filename(dir, path, NULL);
        s->basedir = g_path_get_dirname(s->scenario_path);
        GError *local = NULL;
        gsize len = 0;
        if (!ppsim_read_file(s->scenario_path, PPSIM_SCENARIO_MAX_BYTES, "a scenario file",
                             &s->base, &len, &local)) {
            doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_VALUE, "scenario: %s", local->message);
            g_error_free(local);
            return FALSE;
        }
        return TRUE;
    }
    if (node_at(D, id)->type != YAML_MAPPING_NODE)
        return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_PARSE,
                        "'scenario' is a file name or an inline scenario mapping");
    g_autoptr(GString) t = g_string_new(NULL);
    if (!flow_text(t, D, id, error))
        return FALSE;
    s->base = g_string_free(g_steal_pointer(&t), FALSE);
    s->scenario_path = g_strdup_printf("%s (scenario)", D->display);
    s->basedir = g_strdup(dir);
    return TRUE;
}

static gboolean
sweep_map_each(PpsimSweep *s, Doc *D, int id, const char *what, int group, GError **error)
{
    yaml_node_t *n = node_at(D, id);
    if (n->type != YAML_MAPPING_NODE)
        return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_PARSE, "'%s' must be a mapping", what);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const char *key = scalar(D, p->key);
        if (key == NULL || *key == '\0')
            return doc_fail(D, p->key, error, PPSIM_SCENARIO_ERROR_PARSE,
                            "'%s' keys are key paths such as training.microbatches", what);
        if (strcmp(what, "set") == 0) {
            g_autoptr(GString) t = g_string_new(NULL);
            if (!flow_text(t, D, p->value, error))
                return FALSE;
            PpsimMark m = node_mark(D, p->value);
            g_autofree char *where = g_strdup_printf("%s:%d:%d", D->display, m.line, m.col);
            if (strcmp(key, "schedule") == 0 &&
                !ppsim_sweep_check_schedules(s, t->str, where, error))
                return FALSE;
            g_ptr_array_add(s->sets, g_strdup_printf("%s=%s", key, t->str));
        } else if (!axis_parse(s, D, key, p->key, p->value, group, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
sweep_list(Doc *D, int id, const char *what, GError **error)
{
    yaml_node_t *n = node_at(D, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return doc_fail(D, id, error, PPSIM_SCENARIO_ERROR_PARSE, "'%s' must be a list", what);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
        if (strcmp(what, "zip") != 0 && scalar(D, *it) == NULL)
            return doc_fail(D, *it, error, PPSIM_SCENARIO_ERROR_PARSE, "'%s' lists plain strings",
                            what);
    return TRUE;
}

static gboolean
sweep_columns(PpsimSweep *s, Doc *D, int id, GError **error)
{
    yaml_node_t *n = node_at(D, id);
    const char *const *metric_names = ppsim_sweep_metric_names();
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const char *c = scalar(D, *it);
        int k = 0;
        while (metric_names[k] && strcmp(metric_names[k], c) != 0)
            k++;
        if (metric_names[k] == NULL) {
            const char *hint = ppsim_suggest(c, metric_names);
            g_autofree char *all = g_strjoinv(", ", (char **)metric_names);
            g_autofree char *qc = ppsim_quote(c);
            return doc_fail(D, *it, error, PPSIM_SCENARIO_ERROR_SCHEMA,
                            "unknown column '%s'%s%s%s (columns: %s)", qc,
                            hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "",
                            all);
        }
        g_ptr_array_add(s->metrics, (gpointer)metric_names[k]);
    }
    return TRUE;
}

static gboolean
sweep_walk(PpsimSweep *s, Doc *D, const char *dir, GError **error)
{
    yaml_node_t *root = yaml_document_get_root_node(&D->doc);
    if (root == NULL || root->type != YAML_MAPPING_NODE) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "%s:1:1: a sweep file is a mapping with scenario, axes, ...", D->display);
        return FALSE;
    }
    static const char *const keys[] = {"scenario", "set",         "axes", "zip",
                                       "columns",  "constraints", NULL};
    int at[G_N_ELEMENTS(keys)] = {0};
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(D, p->key);
        int i = 0;
        while (keys[i] && (k == NULL || strcmp(k, keys[i]) != 0))
            i++;
        if (keys[i] == NULL) {
            const char *hint = k ? ppsim_suggest(k, keys) : NULL;
            g_autofree char *qk = k ? ppsim_quote(k) : g_strdup("?");
            return doc_fail(D, p->key, error, PPSIM_SCENARIO_ERROR_SCHEMA,
                            "unknown key '%s'%s%s%s (keys: scenario, set, axes, zip, columns, "
                            "constraints)",
                            qk, hint ? " (did you mean '" : "", hint ? hint : "",
                            hint ? "'?)" : "");
        }
        if (at[i] != 0)
            return doc_fail(D, p->key, error, PPSIM_SCENARIO_ERROR_SCHEMA, "duplicate key '%s'", k);
        at[i] = p->value;
    }
    if (at[0] == 0) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "%s:1:1: missing key 'scenario' (the base scenario file)", D->display);
        return FALSE;
    }
    if (!sweep_scenario(s, D, at[0], dir, error))
        return FALSE;
    if (at[1] != 0 && !sweep_map_each(s, D, at[1], "set", 0, error))
        return FALSE;
    if (!ppsim_sweep_base(s, error))
        return FALSE;
    int group = 0;
    if (at[2] != 0) {
        yaml_node_t *axes = node_at(D, at[2]);
        if (axes->type != YAML_MAPPING_NODE)
            return doc_fail(D, at[2], error, PPSIM_SCENARIO_ERROR_PARSE,
                            "'axes' must be a mapping");
        for (yaml_node_pair_t *p = axes->data.mapping.pairs.start; p < axes->data.mapping.pairs.top;
             p++) {
            const char *key = scalar(D, p->key);
            if (key == NULL || !axis_parse(s, D, key, p->key, p->value, group++, error))
                return key ? FALSE
                           : doc_fail(D, p->key, error, PPSIM_SCENARIO_ERROR_PARSE,
                                      "axis names are key paths");
        }
    }
    if (at[3] != 0) {
        if (!sweep_list(D, at[3], "zip", error))
            return FALSE;
        yaml_node_t *z = node_at(D, at[3]);
        for (yaml_node_item_t *it = z->data.sequence.items.start; it < z->data.sequence.items.top;
             it++)
            if (!sweep_map_each(s, D, *it, "zip", group++, error))
                return FALSE;
    }
    if (!ppsim_sweep_base_on_points(s, error))
        return FALSE;
    if (at[4] != 0 &&
        (!sweep_list(D, at[4], "columns", error) || !sweep_columns(s, D, at[4], error)))
        return FALSE;
    if (at[5] != 0) {
        if (!sweep_list(D, at[5], "constraints", error))
            return FALSE;
        yaml_node_t *c = node_at(D, at[5]);
        for (yaml_node_item_t *it = c->data.sequence.items.start; it < c->data.sequence.items.top;
             it++) {
            PpsimMark m = node_mark(D, *it);
            g_autofree char *where = g_strdup_printf("%s:%d:%d", D->display, m.line, m.col);
            if (!ppsim_sweep_add_constraint(s, scalar(D, *it), where, error))
                return FALSE;
        }
    }
    return ppsim_sweep_finish(s, error);
}

PpsimSweep *
ppsim_sweep_load_file(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!ppsim_read_file(path, PPSIM_SCENARIO_MAX_BYTES, "a sweep file", &text, &len, error))
        return NULL;
    Doc D = {.display = path};
    if (!ppsim_yaml_load_checked(text, len, path, &D.doc, PPSIM_SCENARIO_ERROR,
                                 PPSIM_SCENARIO_ERROR_PARSE, error))
        return NULL;
    g_autoptr(PpsimSweep) s = ppsim_sweep_new_empty(path);
    g_autofree char *dir = g_path_get_dirname(path);
    gboolean ok = sweep_walk(s, &D, dir, error);
    yaml_document_delete(&D.doc);
    return ok ? g_steal_pointer(&s) : NULL;
}

/* ---- --grid -------------------------------------------------------------------------------- */

PpsimSweep *
ppsim_sweep_new_grid(const char *scenario_path, char **sets, char **grid, GError **error)
{
    g_autoptr(PpsimSweep) s = ppsim_sweep_new_empty("--grid");
    s->scenario_path = g_strdup(scenario_path);
    s->basedir = g_path_get_dirname(scenario_path);
    gsize base_len = 0;
    if (!ppsim_read_file(scenario_path, PPSIM_SCENARIO_MAX_BYTES, "a scenario file", &s->base,
                         &base_len, error))
        return NULL;
    for (char **set = sets; set && *set; set++)
        g_ptr_array_add(s->sets, g_strdup(*set));
    if (!ppsim_sweep_base(s, error))
        return NULL;
    for (char **g = grid; g && *g; g++) {
        const char *eq = strchr(*g, '=');
        if (eq == NULL || eq == *g) {
            g_autofree char *qg = ppsim_quote(*g);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                        "--grid '%s': expected KEY.PATH=V1,V2,...", qg);
            return NULL;
        }
        g_autofree char *path = g_strndup(*g, eq - *g);
        g_autofree char *qpath = ppsim_quote(path);
        g_autofree char *where = g_strdup_printf("--grid %s", qpath);
        PpsimSweepAxis *a = ppsim_sweep_axis_new(path, (PpsimMark){0, 0}, (int)s->axes->len);
        g_ptr_array_add(s->axes, a);
        if (eq[1] == '[') { /* a YAML list: parse it to split the items */
            Doc D = {.display = where};
            if (!ppsim_yaml_check_depth(eq + 1, strlen(eq + 1), NULL)) {
                g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                            "%s: YAML nested more than %d levels deep", where,
                            PPSIM_YAML_MAX_DEPTH);
                return NULL;
            }
            yaml_parser_t parser;
            yaml_parser_initialize(&parser);
            yaml_parser_set_input_string(&parser, (const unsigned char *)(eq + 1), strlen(eq + 1));
            gboolean loaded = yaml_parser_load(&parser, &D.doc);
            yaml_parser_delete(&parser);
            yaml_node_t *root = loaded ? yaml_document_get_root_node(&D.doc) : NULL;
            gboolean ok = root != NULL && root->type == YAML_SEQUENCE_NODE;
            for (yaml_node_item_t *it = ok ? root->data.sequence.items.start : NULL;
                 ok && it < root->data.sequence.items.top; it++) {
                g_autoptr(GString) t = g_string_new(NULL);
                ok = flow_text(t, &D, *it, error) &&
                     ppsim_sweep_axis_add(s, a, t->str, scalar(&D, *it) ? scalar(&D, *it) : t->str,
                                          where, error);
            }
            if (loaded)
                yaml_document_delete(&D.doc);
            if (!ok) {
                if (error != NULL && *error == NULL)
                    g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                                "%s: not a YAML list", where);
                return NULL;
            }
        } else {
            g_auto(GStrv) items = g_strsplit(eq + 1, ",", -1);
            for (char **it = items; *it; it++) {
                const char *v = g_strstrip(*it);
                if (*v != '\0' && !ppsim_sweep_axis_add(s, a, v, v, where, error))
                    return NULL;
            }
        }
        if (a->values->len == 0) {
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s: the axis is empty", where);
            return NULL;
        }
    }
    if (!ppsim_sweep_base_on_points(s, error) || !ppsim_sweep_finish(s, error))
        return NULL;
    return g_steal_pointer(&s);
}
