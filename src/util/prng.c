/* prng.c: splitmix64 seeding and normal variates for the xoshiro256** generator (prng.h). */
#include "util/prng.h"

#include <math.h>

guint64
ppsim_splitmix64(guint64 *state)
{
    guint64 z = (*state += G_GUINT64_CONSTANT(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void
ppsim_prng_init(PpsimPrng *g, guint64 seed, guint64 a, guint64 b)
{
    guint64 k = seed;
    guint64 key = ppsim_splitmix64(&k);
    k = key ^ a;
    key = ppsim_splitmix64(&k);
    k = key ^ b;
    key = ppsim_splitmix64(&k);
    for (int i = 0; i < 4; i++)
        g->s[i] = ppsim_splitmix64(&key);
    g->has_spare = FALSE;
    g->spare = 0;
}

double
ppsim_prng_normal(PpsimPrng *g)
{
    if (g->has_spare) {
        g->has_spare = FALSE;
        return g->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * ppsim_prng_uniform(g) - 1.0;
        v = 2.0 * ppsim_prng_uniform(g) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    g->spare = v * f;
    g->has_spare = TRUE;
    return u * f;
}

void
ppsim_lognormal_params(double cv, double *mu, double *sigma)
{
    double s2 = log1p(cv * cv);
    *sigma = sqrt(s2);
    *mu = -0.5 * s2;
}
