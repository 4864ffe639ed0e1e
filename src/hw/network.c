/* network.c: max-min fair flows over directed links; see network.h.
 *
 * Progressive filling: repeatedly take the link whose remaining capacity per unfrozen flow is
 * smallest, give that share to its unfrozen flows, freeze them and charge the other links
 * they cross. Remaining bytes are doubles; completion times are rounded up to whole
 * picoseconds, so a flow is never reported done early and results stay deterministic.
 */
#include "hw/network.h"

#include <math.h>

enum { NET_EV_TICK = 1 };

typedef struct {
    int links[4];
    int n_links;
    double remaining; /* bytes */
    double rate;      /* bytes/s */
    PpsimTime latency_ps;
    PpsimTime start_ps;
    gint64 cookie;
    int src, dst;
    guint64 bytes;
    gboolean frozen;
} Flow;

struct PpsimNetwork {
    const PpsimTopology *topo;
    guint32 entity;
    PpsimFlowDoneFunc done;
    gpointer user_data;
    GArray *flows;     /* Flow, active only; order = start order (deterministic) */
    PpsimTime last_ps; /* time remaining/rates were last brought up to date */
    gint64 generation; /* of the armed tick */
    double *link_cap;  /* scratch, per link */
    int *link_count;   /* scratch, per link; all 0 between fills */
    int *active;       /* scratch: links carrying a flow */
    GArray *records;   /* borrowed, nullable */
};

static void network_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine);

static const PpsimEntityClass network_class = {
    .name = "network",
    .handle = network_handle,
};

PpsimNetwork *
ppsim_network_new(const PpsimTopology *topo, PpsimEngine *engine, PpsimFlowDoneFunc done,
                  gpointer user_data)
{
    PpsimNetwork *net = g_new0(PpsimNetwork, 1);
    net->topo = topo;
    net->done = done;
    net->user_data = user_data;
    net->flows = g_array_new(FALSE, FALSE, sizeof(Flow));
    guint n_links = topo ? topo->links->len : 0;
    net->link_cap = g_new0(double, n_links + 1);
    net->link_count = g_new0(int, n_links + 1);
    net->active = g_new0(int, n_links + 1);
    net->entity = ppsim_engine_add_entity(engine, &network_class, net);
    return net;
}

void
ppsim_network_free(PpsimNetwork *net)
{
    if (net == NULL)
        return;
    g_array_free(net->flows, TRUE);
    g_free(net->link_cap);
    g_free(net->link_count);
    g_free(net->active);
    g_free(net);
}

void
ppsim_network_set_records(PpsimNetwork *net, GArray *records)
{
    net->records = records;
}

/* Brings every flow's remaining bytes up to @now. */
static void
network_advance(PpsimNetwork *net, PpsimTime now)
{
    double dt = (double)(now - net->last_ps) / (double)PPSIM_PS_PER_S;
    if (dt > 0)
        for (guint i = 0; i < net->flows->len; i++) {
            Flow *f = &g_array_index(net->flows, Flow, i);
            f->remaining -= f->rate * dt;
        }
    net->last_ps = now;
}

/* Progressive filling over the links that carry at least one active flow: O(A x (A + F))
 * for A active links and F flows, independent of the topology's size. */
static void
network_fill(PpsimNetwork *net)
{
    GArray *links = net->topo->links;
    int n_active = 0;
    for (guint i = 0; i < net->flows->len; i++) {
        Flow *f = &g_array_index(net->flows, Flow, i);
        f->frozen = FALSE;
        for (int k = 0; k < f->n_links; k++) {
            int l = f->links[k];
            if (net->link_count[l]++ == 0) {
                net->link_cap[l] = g_array_index(links, PpsimLink, l).bytes_per_s;
                net->active[n_active++] = l;
            }
        }
    }
    /* A link crossed by two or more flows delivers only its shared efficiency (PCIe switch
     * uplinks, [PO] App. D: GPUs on one switch "potentially interfere"; 1 = ideal sharing).
     * The flows of one uplink direction normally come from different GPUs, since a GPU's
     * transfers of one direction queue on its copy stream. */
    for (int a = 0; a < n_active; a++) {
        int l = net->active[a];
        if (net->link_count[l] >= 2)
            net->link_cap[l] *= g_array_index(links, PpsimLink, l).shared_efficiency;
    }
    guint unfrozen = net->flows->len;
    while (unfrozen > 0) {
        int best = -1;
        double best_share = 0;
        for (int a = 0; a < n_active; a++) {
            int l = net->active[a];
            if (net->link_count[l] == 0)
                continue;
            double share = net->link_cap[l] / net->link_count[l];
            if (best < 0 || share < best_share || (share == best_share && l < best)) {
                best = l;
                best_share = share;
            }
        }
        g_assert(best >= 0);
        for (guint i = 0; i < net->flows->len; i++) {
            Flow *f = &g_array_index(net->flows, Flow, i);
            gboolean crosses = FALSE;
            for (int k = 0; k < f->n_links && !f->frozen; k++)
                crosses |= f->links[k] == best;
            if (!crosses)
                continue;
            f->frozen = TRUE;
            f->rate = best_share;
            unfrozen--;
            for (int k = 0; k < f->n_links; k++) {
                net->link_cap[f->links[k]] = MAX(0.0, net->link_cap[f->links[k]] - best_share);
                net->link_count[f->links[k]]--;
            }
        }
    }
    /* every count is back to 0 for the next fill */
}

/* Re-computes rates and arms a tick at the earliest completion. */
static void
network_rearm(PpsimNetwork *net, PpsimEngine *engine)
{
    net->generation++;
    if (net->flows->len == 0)
        return;
    network_fill(net);
    PpsimTime next = G_MAXINT64;
    for (guint i = 0; i < net->flows->len; i++) {
        Flow *f = &g_array_index(net->flows, Flow, i);
        double secs = MAX(0.0, f->remaining) / f->rate;
        PpsimTime dt = (PpsimTime)ceil(secs * (double)PPSIM_PS_PER_S);
        next = MIN(next, dt);
    }
    ppsim_engine_post(engine, next, net->entity, NET_EV_TICK, net->generation, 0);
}

static void
network_complete(PpsimNetwork *net, const Flow *f, PpsimEngine *engine)
{
    if (net->records != NULL) {
        PpsimFlowRecord rec = {.start_ps = f->start_ps,
                               .end_ps = ppsim_engine_now(engine),
                               .src = f->src,
                               .dst = f->dst,
                               .bytes = f->bytes,
                               .from = (PpsimTaskId)f->cookie,
                               .to = 0};
        g_array_append_val(net->records, rec);
    }
    net->done(net->user_data, f->cookie, f->latency_ps, engine);
}

static void
network_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    PpsimNetwork *net = state;
    if (ev->a != net->generation)
        return; /* stale: rates changed since it was armed */
    network_advance(net, ppsim_engine_now(engine));
    /* Complete every flow that has (up to rounding) no byte left, in start order. */
    GArray *done = g_array_new(FALSE, FALSE, sizeof(Flow));
    for (guint i = 0; i < net->flows->len;) {
        Flow *f = &g_array_index(net->flows, Flow, i);
        if (f->remaining <= f->rate * 1e-12 + 1e-9) {
            g_array_append_val(done, *f);
            g_array_remove_index(net->flows, i);
        } else {
            i++;
        }
    }
    network_rearm(net, engine);
    for (guint i = 0; i < done->len; i++)
        network_complete(net, &g_array_index(done, Flow, i), engine);
    g_array_free(done, TRUE);
}

void
ppsim_network_start(PpsimNetwork *net, PpsimEngine *engine, int src, int dst, guint64 bytes,
                    gint64 cookie)
{
    Flow f = {.cookie = cookie,
              .src = src,
              .dst = dst,
              .bytes = bytes,
              .start_ps = ppsim_engine_now(engine),
              .remaining = (double)bytes};
    f.n_links = ppsim_topology_route(net->topo, src, dst, f.links, &f.latency_ps);
    if (f.n_links == 0 || bytes == 0) {
        network_complete(net, &f, engine);
        return;
    }
    network_advance(net, ppsim_engine_now(engine));
    g_array_append_val(net->flows, f);
    network_rearm(net, engine);
}
