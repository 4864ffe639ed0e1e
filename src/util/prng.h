/* prng.h: a portable pseudo-random generator for the Monte-Carlo replays (README
 * "Variability"): xoshiro256** [XOSHIRO] seeded through splitmix64 [SPLITMIX], both written
 * here from their published definitions, so a seed gives the same stream on every platform
 * and compiler. Plain value state: one generator per sample and replica, no locking.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    guint64 s[4];
    double spare; /* the second normal of the last polar pair */
    gboolean has_spare;
} PpsimPrng;

/* splitmix64: advances *@state by the golden gamma and returns the mixed value. */
guint64 ppsim_splitmix64(guint64 *state);

/* Seeds @g for stream (@a, @b) of @seed (e.g. a sample and a replica): the three words are
 * mixed by splitmix64 into one key, whose splitmix64 stream fills the state. */
void ppsim_prng_init(PpsimPrng *g, guint64 seed, guint64 a, guint64 b);

/* xoshiro256**: the next 64 random bits. */
static inline guint64
ppsim_prng_next(PpsimPrng *g)
{
    guint64 *s = g->s;
    guint64 x = s[1] * 5;
    guint64 result = ((x << 7) | (x >> 57)) * 9;
    guint64 t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* A uniform double in the open interval (0, 1): the top 53 bits, offset by half a step. */
static inline double
ppsim_prng_uniform(PpsimPrng *g)
{
    return ((double)(ppsim_prng_next(g) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* A standard normal (Marsaglia's polar method: pairs, the second kept for the next call). */
double ppsim_prng_normal(PpsimPrng *g);

/* A standard normal by the ziggurat method [ZIG00], about three times faster than the polar
 * method; its tables are built by the first ppsim_lognormal_params() call (thread-safe),
 * which must come before. */
double ppsim_prng_normal_zig(PpsimPrng *g);

/* Parameters of the lognormal factor with mean 1 and coefficient of variation @cv:
 * sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2 (then E[exp(mu + sigma Z)] = exp(mu + sigma^2/2)
 * = 1 and Var = exp(sigma^2) - 1 = cv^2). */
void ppsim_lognormal_params(double cv, double *mu, double *sigma);

G_END_DECLS
