/* scenario-internal.h: the YAML walker's shared state and helpers (src/scenario only).
 *
 * Layering, bottom up: scenario-yaml.c (node helpers) <- scenario-overrides.c (--set) and
 * scenario-schedule.c (`schedule`, `memory.limit`) <- scenario-parse.c (the walk). Each file
 * calls only the ones below it. */
#pragma once

#include "scenario/scenario-schema.h"

#include <yaml.h>

/* The largest integer and plain number a scenario key takes unless its table says less:
 * counts beyond these would only exhaust memory or overflow what is derived from them. */
#define PPSIM_SCENARIO_INT_MAX 16777216.0 /* 2^24 */
#define PPSIM_SCENARIO_DOUBLE_MAX 1e12

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
    gboolean values_only; /* skip the checks that relate several keys (sweep axis checks) */
} Parser;

/* ---- scenario-yaml.c -------------------------------------------------------------- */

yaml_node_t *scn_node_at(Parser *P, int id);
/* "file:line:col" or "--set key.path" for messages about node @id. */
char *scn_where(Parser *P, int id);
/* "--set key.path" (the path quoted when it needs it) for messages about what an override
 * wrote. (transfer full) */
char *scn_set_where(const char *path);
PpsimMark scn_mark(Parser *P, int id);
gboolean scn_fail(Parser *P, GError **error, int id, int code, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
const char *scn_scalar_text(yaml_node_t *n);
/* What node @n holds, for "got ..." in messages: its text quoted and capped ('x', at most
 * about 100 characters, control characters escaped: util/quote.h), or "a list", "a mapping".
 * (transfer full) */
char *scn_given(yaml_node_t *n);
/* The value node of @key in mapping @map (0 when absent), and the pair's index. */
int scn_mapping_find(Parser *P, int map, const char *key, gsize *pair_index);
gboolean scn_scalar_double(Parser *P, int id, const char *path, const SchemaKey *k, double *dst,
                           GError **error);
gboolean scn_scalar_quantity(Parser *P, int id, const char *path, PpsimDimension dim,
                             const char *def_unit, double *out, GError **error);

/* scenario-overrides.c: grafts one "key.path=value" into the document. */
gboolean scn_apply_override(Parser *P, const char *text, GError **error);
/* scenario-schedule.c: `schedule` and `memory.limit`. */
gboolean scn_parse_special(Parser *P, int id, const char *path, GError **error);

/* scenario-variability.c: `variability.devices`, `.links` and `.events`, and the checks
 * that need the pipeline's size (run after the walk; errors name the entry). */
gboolean scn_parse_variability(Parser *P, int id, const char *path, GError **error);
gboolean scn_check_variability(const PpsimScenario *sc, GError **error);
