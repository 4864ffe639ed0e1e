/* check-network.c: max-min fair flows (src/hw/network.c) against a plain reference: every
 * event advances every flow, refills every link at once and scans every flow for the next
 * completion and for the flows done. The network refills only the touched components and
 * looks only at the flows a heap says may be due; with the same arithmetic per flow, the
 * completions must match the reference to the picosecond, in the same order. */
#include "ppsim-test.h"
#include "engine/engine.h"
#include "hw/network.h"
#include "hw/topology.h"

#include <math.h>

typedef struct {
    PpsimTime start;
    int src, dst;
    guint64 bytes;
} FlowSpec;

/* A completion: which flow, when its last byte left. */
typedef struct {
    int flow;
    PpsimTime end;
} Done;

/* ---- the reference ------------------------------------------------------------------- */

typedef struct {
    int id, links[4], n_links;
    double remaining, rate;
    gboolean frozen;
} RefFlow;

static void
ref_fill(const PpsimTopology *topo, GArray *active)
{
    guint n_links = topo->links->len;
    g_autofree double *cap = g_new0(double, n_links);
    g_autofree int *count = g_new0(int, n_links);
    for (guint i = 0; i < active->len; i++) {
        RefFlow *f = &g_array_index(active, RefFlow, i);
        f->frozen = FALSE;
        for (int k = 0; k < f->n_links; k++)
            count[f->links[k]]++;
    }
    for (guint l = 0; l < n_links; l++) {
        const PpsimLink *link = &g_array_index(topo->links, PpsimLink, l);
        cap[l] = link->bytes_per_s * (count[l] >= 2 ? link->shared_efficiency : 1.0);
    }
    for (guint left = active->len; left > 0;) {
        int best = -1;
        double best_share = 0;
        for (guint l = 0; l < n_links; l++) {
            if (count[l] == 0)
                continue;
            double share = cap[l] / count[l];
            if (best < 0 || share < best_share) {
                best = (int)l;
                best_share = share;
            }
        }
        ck_assert_int_ge(best, 0);
        for (guint i = 0; i < active->len; i++) {
            RefFlow *f = &g_array_index(active, RefFlow, i);
            gboolean crosses = FALSE;
            for (int k = 0; k < f->n_links; k++)
                crosses |= f->links[k] == best;
            if (!crosses || f->frozen)
                continue;
            f->frozen = TRUE;
            f->rate = best_share;
            left--;
            for (int k = 0; k < f->n_links; k++) {
                cap[f->links[k]] = MAX(0.0, cap[f->links[k]] - best_share);
                count[f->links[k]]--;
            }
        }
    }
}

static void
ref_advance(GArray *active, PpsimTime *last, PpsimTime now)
{
    double dt = (double)(now - *last) / (double)PPSIM_PS_PER_S;
    if (dt > 0)
        for (guint i = 0; i < active->len; i++) {
            RefFlow *f = &g_array_index(active, RefFlow, i);
            f->remaining -= f->rate * dt;
        }
    *last = now;
}

/* Completions of @specs (sorted by start) in the order the reference reports them. */
static GArray *
ref_run(const PpsimTopology *topo, const FlowSpec *specs, int n)
{
    GArray *done = g_array_new(FALSE, FALSE, sizeof(Done));
    g_autoptr(GArray) active = g_array_new(FALSE, FALSE, sizeof(RefFlow));
    PpsimTime last = 0, tick = -1; /* -1: none armed */
    int next = 0;
    while (next < n || tick >= 0) {
        PpsimTime now;
        if (next < n && (tick < 0 || specs[next].start <= tick)) { /* starts first on ties */
            const FlowSpec *s = &specs[next];
            now = s->start;
            RefFlow f = {.id = next++, .remaining = (double)s->bytes};
            PpsimTime lat;
            f.n_links = ppsim_topology_route(topo, s->src, s->dst, f.links, &lat);
            if (f.n_links == 0 || s->bytes == 0) {
                Done d = {f.id, now};
                g_array_append_val(done, d);
                continue;
            }
            ref_advance(active, &last, now);
            g_array_append_val(active, f);
        } else {
            now = tick;
            ref_advance(active, &last, now);
            guint kept = 0;
            for (guint i = 0; i < active->len; i++) {
                RefFlow *f = &g_array_index(active, RefFlow, i);
                if (f->remaining <= f->rate * 1e-12 + 1e-9) {
                    Done d = {f->id, now};
                    g_array_append_val(done, d);
                } else {
                    g_array_index(active, RefFlow, kept++) = *f;
                }
            }
            g_array_set_size(active, kept);
        }
        tick = -1;
        if (active->len == 0)
            continue;
        ref_fill(topo, active);
        PpsimTime dt = G_MAXINT64;
        for (guint i = 0; i < active->len; i++) {
            const RefFlow *f = &g_array_index(active, RefFlow, i);
            double secs = MAX(0.0, f->remaining) / f->rate;
            dt = MIN(dt, (PpsimTime)ceil(secs * (double)PPSIM_PS_PER_S));
        }
        tick = now + dt;
    }
    return done;
}

/* ---- the network, driven by the engine ------------------------------------------------- */

typedef struct {
    const FlowSpec *specs;
    PpsimNetwork *net;
    GArray *done;
} Driver;

static void
driver_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    Driver *d = state;
    const FlowSpec *s = &d->specs[ev->a];
    ppsim_network_start(d->net, engine, s->src, s->dst, s->bytes, ev->a);
}

static void
driver_done(gpointer user_data, gint64 cookie, PpsimTime latency_ps, PpsimEngine *engine)
{
    (void)latency_ps;
    Driver *d = user_data;
    Done x = {(int)cookie, ppsim_engine_now(engine)};
    g_array_append_val(d->done, x);
}

static const PpsimEntityClass driver_class = {.name = "driver", .handle = driver_handle};

static GArray *
net_run(const PpsimTopology *topo, const FlowSpec *specs, int n)
{
    g_autoptr(PpsimEngine) engine = ppsim_engine_new();
    Driver d = {specs, NULL, g_array_new(FALSE, FALSE, sizeof(Done))};
    guint32 me = ppsim_engine_add_entity(engine, &driver_class, &d);
    d.net = ppsim_network_new(topo, engine, driver_done, &d);
    for (int i = 0; i < n; i++)
        ppsim_engine_post(engine, specs[i].start, me, 1, i, 0);
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_engine_run(engine, 0, &error));
    ppsim_assert_no_error(error);
    ppsim_network_free(d.net);
    return d.done;
}

static int
spec_cmp(gconstpointer a, gconstpointer b)
{
    const FlowSpec *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Random flows between the 16 GPUs and 2 hosts of two DGX-like nodes (NVLink, PCIe behind
 * shared switches, NIC), bytes from 0 to 10 GB on a log scale, starts clustered on a coarse
 * grid (many at once) or spread over up to a second: the same completions as the reference,
 * picosecond for picosecond, in the same order. */
START_TEST(test_network_vs_reference)
{
    GRand *rng = g_rand_new_with_seed(29);
    for (int rep = 0; rep < 60; rep++) {
        PpsimHardware hw = {.gpus_per_node = 8,
                            .pcie_gpus_per_switch = 2,
                            .pcie_bytes_per_s = 25e9,
                            .pcie_uplink_bytes_per_s = 30e9,
                            .pcie_shared_efficiency = rep % 2 ? 0.6 : 1.0,
                            .nvlink_bytes_per_s = 300e9,
                            .network_bytes_per_s = 25e9};
        g_autoptr(PpsimTopology) topo = ppsim_topology_new(&hw, 16);
        int n = g_rand_int_range(rng, 1, 300), endpoints = 18;
        PpsimTime span = (PpsimTime)1 << g_rand_int_range(rng, 10, 41);
        gint64 grid = g_rand_boolean(rng) ? span / 8 + 1 : 1;
        g_autofree FlowSpec *specs = g_new(FlowSpec, n);
        for (int i = 0; i < n; i++) {
            specs[i].start = (PpsimTime)g_rand_double_range(rng, 0, (double)span) / grid * grid;
            specs[i].src = g_rand_int_range(rng, 0, endpoints);
            specs[i].dst = g_rand_int_range(rng, 0, endpoints);
            if (specs[i].src >= 16 && specs[i].dst >= 16)
                specs[i].dst = g_rand_int_range(rng, 0, 16); /* no host-to-host route */
            double lg = g_rand_double_range(rng, -1, 10);
            specs[i].bytes = lg < 0 ? 0 : (guint64)pow(10, lg);
        }
        qsort(specs, n, sizeof(FlowSpec), spec_cmp);
        g_autoptr(GArray) want = ref_run(topo, specs, n);
        g_autoptr(GArray) got = net_run(topo, specs, n);
        ck_assert_uint_eq(got->len, (guint)n);
        ck_assert_uint_eq(want->len, (guint)n);
        for (int i = 0; i < n; i++) {
            const Done *a = &g_array_index(got, Done, i), *b = &g_array_index(want, Done, i);
            ck_assert_msg(a->flow == b->flow && a->end == b->end,
                          "rep %d, completion %d: flow %d at %" G_GINT64_FORMAT
                          " ps, the reference flow %d at %" G_GINT64_FORMAT " ps",
                          rep, i, a->flow, a->end, b->flow, b->end);
        }
    }
    g_rand_free(rng);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("flows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_network_vs_reference);
    suite_add_tcase(s, tc);
    return s;
}
