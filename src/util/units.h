/* units.h: the quantity grammar of scenario files and --set values.
 *
 * The one place that parses units. A quantity is a decimal number, optional
 * whitespace, and a unit of the expected dimension. Everything is normalised to a base unit:
 * bytes, bytes/s, picoseconds, FLOP/s. Nothing else in ppsim parses a unit.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Simulation time: a count of picoseconds (about 106 days of range). */
typedef gint64 PpsimTime;

#define PPSIM_PS_PER_US G_GINT64_CONSTANT(1000000)
#define PPSIM_PS_PER_MS G_GINT64_CONSTANT(1000000000)
#define PPSIM_PS_PER_S G_GINT64_CONSTANT(1000000000000)

typedef enum {
    PPSIM_DIM_BYTES,     /* B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB */
    PPSIM_DIM_BANDWIDTH, /* B/s, KB/s, MB/s, GB/s, TB/s, KiB/s ... , Gbps/Gb/s (bits) */
    PPSIM_DIM_TIME,      /* ps, ns, us, ms, s */
    PPSIM_DIM_FLOPS,     /* FLOPS, KFLOPS ... TFLOPS, PFLOPS (also FLOP/s forms) */
    PPSIM_DIM_COUNT,     /* a plain number with an optional K/M/G suffix (params/s, ...) */
} PpsimDimension;

/* Parses @text as a quantity of dimension @dim and stores it in base units in @out. Each
 * dimension has a largest value, so that nothing derived from one can overflow: 1 EiB,
 * 1 PB/s, 10,000 s, 1e21 FLOP/s, 1e18.
 * @default_unit (nullable) is used when @text is a bare number, e.g. "ms" for explicit-cost
 * times; when NULL a bare number is an error for every dimension but PPSIM_DIM_COUNT.
 * Errors are PPSIM_SCENARIO_ERROR_UNIT, without a location prefix (the caller adds it).
 * Returns: TRUE on success. */
gboolean ppsim_units_parse(const char *text, PpsimDimension dim, const char *default_unit,
                           double *out, GError **error);

/* Largest time (picoseconds) or memory (bytes, or explicit units x 1000) one run may reach:
 * 2^60, about 13 days or 1 EiB. Sums of a few such values stay far from int64 overflow; the
 * cost model refuses scenarios that could pass it (ppsim_costs_new). */
#define PPSIM_COST_MAX G_GINT64_CONSTANT(1152921504606846976)

/* @v rounded to the nearest integer (half away from zero), clamped to
 * [-PPSIM_COST_MAX, PPSIM_COST_MAX]; NaN gives PPSIM_COST_MAX. Never undefined, whatever
 * @v: costs computed in double pass through it on their way to integers. */
gint64 ppsim_round_clamped(double v);

/* @a x @b for @a, @b >= 0, exact when it is at most PPSIM_COST_MAX, else PPSIM_COST_MAX. */
gint64 ppsim_mul_clamped(gint64 a, gint64 b);

/* Rounds a duration in seconds to picoseconds (round half away from zero), clamped as by
 * ppsim_round_clamped(). */
PpsimTime ppsim_time_from_seconds(double seconds);

/* Human name of a dimension, for messages ("a size", "a bandwidth", ...). */
const char *ppsim_units_dimension_name(PpsimDimension dim);

G_END_DECLS
