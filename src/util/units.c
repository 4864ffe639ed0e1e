/* units.c: the quantity grammar; see units.h.
 *
 * NUMBER [space] UNIT. Byte prefixes K M G T P are powers of 1000, Ki Mi Gi Ti Pi powers of
 * 1024. Case matters where it carries meaning: "GB/s" is bytes, "Gb/s" and "Gbps" are bits
 * (divided by 8); FLOP rates accept "TFLOPS", "TFLOP/s" and "TFLOPs". Negative, infinite and
 * NaN values are refused; zero is allowed (callers that need > 0 check it).
 */
#include "util/units.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <math.h>
#include <string.h>

typedef struct {
    const char *name;
    double factor;
} Unit;

static const Unit byte_units[] = {{"B", 1},
                                  {"KB", 1e3},
                                  {"MB", 1e6},
                                  {"GB", 1e9},
                                  {"TB", 1e12},
                                  {"PB", 1e15},
                                  {"KiB", 1024.0},
                                  {"MiB", 1048576.0},
                                  {"GiB", 1073741824.0},
                                  {"TiB", 1099511627776.0},
                                  {"PiB", 1125899906842624.0},
                                  {NULL, 0}};

static const Unit bit_rate_units[] = {{"bps", 1.0 / 8},   {"Kbps", 1e3 / 8},  {"Mbps", 1e6 / 8},
                                      {"Gbps", 1e9 / 8},  {"Tbps", 1e12 / 8}, {"b/s", 1.0 / 8},
                                      {"Kb/s", 1e3 / 8},  {"Mb/s", 1e6 / 8},  {"Gb/s", 1e9 / 8},
                                      {"Tb/s", 1e12 / 8}, {NULL, 0}};

static const Unit time_units[] = {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6},
                                  {"ms", 1e-3},  {"s", 1.0},   {NULL, 0}};

static const Unit flop_prefixes[] = {{"", 1},     {"K", 1e3},  {"M", 1e6}, {"G", 1e9},
                                     {"T", 1e12}, {"P", 1e15}, {NULL, 0}};

static const Unit count_units[] = {{"", 1},    {"K", 1e3},  {"M", 1e6},
                                   {"G", 1e9}, {"T", 1e12}, {NULL, 0}};

static gboolean
units_lookup(const Unit *table, const char *unit, double *factor)
{
    for (const Unit *u = table; u->name; u++)
        if (strcmp(u->name, unit) == 0) {
            *factor = u->factor;
            return TRUE;
        }
    return FALSE;
}

static gboolean
units_bandwidth(const char *unit, double *factor)
{
    gsize len = strlen(unit);
    if (units_lookup(bit_rate_units, unit, factor))
        return TRUE;
    if (len > 2 && strcmp(unit + len - 2, "/s") == 0) {
        g_autofree char *bytes = g_strndup(unit, len - 2);
        return units_lookup(byte_units, bytes, factor);
    }
    return FALSE;
}

static gboolean
units_flops(const char *unit, double *factor)
{
    static const char *const suffixes[] = {"FLOPS", "FLOP/s", "FLOPs", NULL};
    for (int i = 0; suffixes[i]; i++) {
        gsize ls = strlen(suffixes[i]), lu = strlen(unit);
        if (lu >= ls && strcmp(unit + lu - ls, suffixes[i]) == 0) {
            g_autofree char *prefix = g_strndup(unit, lu - ls);
            return units_lookup(flop_prefixes, prefix, factor);
        }
    }
    return FALSE;
}

static gboolean
units_factor(PpsimDimension dim, const char *unit, double *factor)
{
    switch (dim) {
    case PPSIM_DIM_BYTES:
        return units_lookup(byte_units, unit, factor);
    case PPSIM_DIM_BANDWIDTH:
        return units_bandwidth(unit, factor);
    case PPSIM_DIM_TIME:
        return units_lookup(time_units, unit, factor);
    case PPSIM_DIM_FLOPS:
        return units_flops(unit, factor);
    case PPSIM_DIM_COUNT:
        return units_lookup(count_units, unit, factor);
    }
    return FALSE;
}

static const char *
units_example(PpsimDimension dim)
{
    static const char *const examples[] = {[PPSIM_DIM_BYTES] = "'80GiB'",
                                           [PPSIM_DIM_BANDWIDTH] = "'25GB/s'",
                                           [PPSIM_DIM_TIME] = "'2us'",
                                           [PPSIM_DIM_FLOPS] = "'312TFLOPS'",
                                           [PPSIM_DIM_COUNT] = "'1.4G'"};
    return examples[dim];
}

const char *
ppsim_units_dimension_name(PpsimDimension dim)
{
    static const char *const names[] = {[PPSIM_DIM_BYTES] = "a size",
                                        [PPSIM_DIM_BANDWIDTH] = "a bandwidth",
                                        [PPSIM_DIM_TIME] = "a time",
                                        [PPSIM_DIM_FLOPS] = "a FLOP rate",
                                        [PPSIM_DIM_COUNT] = "a number"};
    return names[dim];
}

gboolean
ppsim_units_parse(const char *text, PpsimDimension dim, const char *default_unit, double *out,
                  GError **error)
{
    const char *what = ppsim_units_dimension_name(dim);
    g_autofree char *q_text = ppsim_quote(text);
    char *end = NULL;
    double value = g_ascii_strtod(text, &end);
    if (end == text || !isfinite(value) || value < 0 || g_ascii_isspace(*text)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_UNIT,
                    "expected %s like %s, got '%s'", what, units_example(dim), q_text);
        return FALSE;
    }
    while (*end == ' ')
        end++;
    const char *unit = *end ? end : default_unit;
    if (unit == NULL && dim != PPSIM_DIM_COUNT) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_UNIT,
                    "missing unit in '%s' (expected %s like %s)", q_text, what, units_example(dim));
        return FALSE;
    }
    double factor = 1;
    if (unit != NULL && !units_factor(dim, unit, &factor)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_UNIT,
                    "expected %s like %s, got '%s'", what, units_example(dim), q_text);
        return FALSE;
    }
    double q = value * factor;
    static const double largest[] = {
        [PPSIM_DIM_BYTES] = 1152921504606846976.0, /* 1 EiB */
        [PPSIM_DIM_BANDWIDTH] = 1e15,              /* 1 PB/s */
        [PPSIM_DIM_TIME] = 1e4,                    /* 10,000 s for one quantity */
        [PPSIM_DIM_FLOPS] = 1e21,                  /* 1 ZFLOPS */
        [PPSIM_DIM_COUNT] = 1e18,
    };
    static const char *const largest_text[] = {[PPSIM_DIM_BYTES] = "1EiB",
                                               [PPSIM_DIM_BANDWIDTH] = "1PB/s",
                                               [PPSIM_DIM_TIME] = "10000s",
                                               [PPSIM_DIM_FLOPS] = "1000000PFLOPS",
                                               [PPSIM_DIM_COUNT] = "1e18"};
    if (!(q <= largest[dim])) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_UNIT,
                    "'%s' is more than %s, the largest %s ppsim takes", q_text, largest_text[dim],
                    what);
        return FALSE;
    }
    *out = q;
    return TRUE;
}

gint64
ppsim_round_clamped(double v)
{
    if (!(v < (double)PPSIM_COST_MAX)) /* NaN too */
        return PPSIM_COST_MAX;
    if (v < -(double)PPSIM_COST_MAX)
        return -PPSIM_COST_MAX;
    return (gint64)llround(v);
}

gint64
ppsim_mul_clamped(gint64 a, gint64 b)
{
    g_return_val_if_fail(a >= 0 && b >= 0, 0);
    if (a != 0 && b > PPSIM_COST_MAX / a)
        return PPSIM_COST_MAX;
    return a * b;
}

PpsimTime
ppsim_time_from_seconds(double seconds)
{
    return ppsim_round_clamped(seconds * (double)PPSIM_PS_PER_S);
}
