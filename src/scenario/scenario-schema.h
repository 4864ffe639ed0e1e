/* scenario-schema.h: the key tables of scenario files (internal to src/scenario). */
#pragma once

#include "scenario/scenario.h"

typedef enum {
    KEY_SECTION,
    KEY_STRING,
    KEY_INT, /* positive int unless min says 0 */
    KEY_DOUBLE,
    KEY_BOOL,
    KEY_BYTES, /* guint64 */
    KEY_BANDWIDTH,
    KEY_TIME,    /* PpsimTime; bare numbers refused */
    KEY_TIME_MS, /* PpsimTime; bare numbers are milliseconds (explicit costs) */
    KEY_FLOPS,
    KEY_COUNT,
    KEY_RECOMPUTE,
    KEY_INT_LIST,
    KEY_RECOMPUTE_LIST, /* GArray of int (PpsimRecompute) */
    KEY_DOUBLE_LIST,
    KEY_ENUM,    /* int index into names */
    KEY_SPECIAL, /* handled by the parser: schedule, memory.limit, hardware.preset */
} KeyType;

typedef struct SchemaKey SchemaKey;
struct SchemaKey {
    const char *name;
    KeyType type;
    gsize offset;             /* into PpsimScenario */
    const SchemaKey *section; /* KEY_SECTION: its keys, closed by {NULL} */
    gboolean required;
    double min;               /* numbers: smallest allowed value */
    double max;               /* numbers: largest allowed value; 0 = none */
    const char *const *names; /* KEY_ENUM: the accepted words, NULL-terminated */
};

/* Most ops one iteration may have (2^23: p = 64, v = 2, m = 8192 fits; beyond it the slower
 * generators take minutes). */
#define PPSIM_SCENARIO_MAX_OPS 8388608.0

/* The root table. */
extern const SchemaKey ppsim_scenario_schema[];

/* Fills @sc with every default (hardware from the default preset). */
void ppsim_scenario_set_defaults(PpsimScenario *sc);

/* Defaults that depend on other values, applied after parsing; @seen holds the dotted
 * paths written in the file. */
void ppsim_scenario_finish_defaults(PpsimScenario *sc, GHashTable *seen);

/* TRUE when @path, a required key, may be left out because another key in @seen stands
 * for it (training.pp with parallel.pp, training.microbatches with training.global_batch,
 * model shape keys with model.preset). */
gboolean ppsim_scenario_key_implied(const char *path, GHashTable *seen);

/* Cross-field checks; @where_of returns where a dotted path was written, for messages:
 * "file:line:col", or "--set key.path" when an override set it (transfer full).
 * Errors are PPSIM_SCENARIO_ERROR_VALUE, prefixed with that place and ": ". */
typedef char *(*WhereOfFunc)(const char *path, gpointer data);
gboolean ppsim_scenario_check(const PpsimScenario *sc, GHashTable *seen, WhereOfFunc where_of,
                              gpointer data, GError **error);
