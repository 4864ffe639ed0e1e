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

/* Marsaglia and Tsang's ziggurat [ZIG00] with 128 layers: tables for |x| under layer i
 * (kn, integer bound on the 31-bit magnitude; wn, scale; fn, the density at the layer's
 * edge). Built once; read-only after. */
#define ZIG_R 3.442619855899
#define ZIG_V 9.91256303526217e-3
static guint32 zig_kn[128];
static double zig_wn[128], zig_fn[128];

static void
zig_init(void)
{
    const double m1 = 2147483648.0;
    double dn = ZIG_R, tn = dn;
    double q = ZIG_V / exp(-0.5 * dn * dn);
    zig_kn[0] = (guint32)((dn / q) * m1);
    zig_kn[1] = 0;
    zig_wn[0] = q / m1;
    zig_wn[127] = dn / m1;
    zig_fn[0] = 1.0;
    zig_fn[127] = exp(-0.5 * dn * dn);
    for (int i = 126; i >= 1; i--) {
        dn = sqrt(-2.0 * log(ZIG_V / dn + exp(-0.5 * dn * dn)));
        zig_kn[i + 1] = (guint32)((dn / tn) * m1);
        tn = dn;
        zig_fn[i] = exp(-0.5 * dn * dn);
        zig_wn[i] = dn / m1;
    }
}

static void
zig_ensure(void)
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        zig_init();
        g_once_init_leave(&done, 1);
    }
}

double
ppsim_prng_normal_zig(PpsimPrng *g)
{
    for (;;) {
        /* the layer from the low 7 bits, the signed value from the high 32: independent
         * bits (the original drew both from one 32-bit word) */
        guint64 u = ppsim_prng_next(g);
        int iz = (int)(u & 127);
        gint32 hz = (gint32)(guint32)(u >> 32);
        guint32 mag = hz < 0 ? (guint32)(-(gint64)hz) : (guint32)hz;
        double x = hz * zig_wn[iz];
        if (mag < zig_kn[iz])
            return x;
        if (iz == 0) { /* the tail beyond R, by Marsaglia's method */
            double a, b;
            do {
                a = -log(ppsim_prng_uniform(g)) / ZIG_R;
                b = -log(ppsim_prng_uniform(g));
            } while (b + b < a * a);
            return hz > 0 ? ZIG_R + a : -ZIG_R - a;
        }
        if (zig_fn[iz] + ppsim_prng_uniform(g) * (zig_fn[iz - 1] - zig_fn[iz]) < exp(-0.5 * x * x))
            return x;
    }
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
    zig_ensure();
    double s2 = log1p(cv * cv);
    *sigma = sqrt(s2);
    *mu = -0.5 * s2;
}
