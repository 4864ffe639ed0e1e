/* network.c: max-min fair flows over directed links; see network.h.
 *
 * Progressive filling: repeatedly take the link whose remaining capacity per unfrozen flow is
 * smallest, give that share to its unfrozen flows, freeze them and charge the other links
 * they cross. Remaining bytes are doubles; completion times are rounded up to whole
 * picoseconds, so a flow is never reported done early and results stay deterministic.
 *
 * A flow's max-min rate depends only on the flows and links of its connected component (links
 * joined by the flows crossing them), and filling a component alone takes the same steps in
 * the same order as filling every flow at once: the globally smallest share is also its
 * component's smallest, ties go to the lower link id in both. So a start or an end refills
 * only the component(s) around the links it touches (breadth-first over per-link flow lists);
 * every other rate is already what a global fill would give, bit for bit.
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
    guint64 visit; /* stamp of the last component walk that reached it */
    gboolean frozen;
} Flow;

struct PpsimNetwork {
    const PpsimTopology *topo;
    guint32 entity;
    PpsimFlowDoneFunc done;
    gpointer user_data;
    GArray *pool; /* Flow, by slot; a finished flow's slot goes to @free_slots */
    GArray *free_slots;
    GArray *order;       /* int slot of every active flow, in start order (deterministic) */
    GArray **on_link;    /* per link: int slots of the active flows crossing it, start order */
    PpsimTime last_ps;   /* time remaining/rates were last brought up to date */
    gint64 generation;   /* of the armed tick */
    double *link_cap;    /* scratch, per link */
    int *link_count;     /* scratch, per link: unfrozen flows while filling */
    guint64 *link_visit; /* per link: stamp of the last component walk that reached it */
    guint64 visit;
    GArray *dirty;    /* int links touched since the last fill; then the walk's queue */
    GArray *finished; /* Flow, scratch of network_handle */
    guint n_links;
    GArray *records; /* borrowed, nullable */
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
    net->pool = g_array_new(FALSE, FALSE, sizeof(Flow));
    net->free_slots = g_array_new(FALSE, FALSE, sizeof(int));
    net->order = g_array_new(FALSE, FALSE, sizeof(int));
    net->dirty = g_array_new(FALSE, FALSE, sizeof(int));
    net->finished = g_array_new(FALSE, FALSE, sizeof(Flow));
    net->n_links = topo ? topo->links->len : 0;
    net->on_link = g_new0(GArray *, net->n_links + 1);
    for (guint l = 0; l < net->n_links; l++)
        net->on_link[l] = g_array_new(FALSE, FALSE, sizeof(int));
    net->link_cap = g_new0(double, net->n_links + 1);
    net->link_count = g_new0(int, net->n_links + 1);
    net->link_visit = g_new0(guint64, net->n_links + 1);
    net->entity = ppsim_engine_add_entity(engine, &network_class, net);
    return net;
}

void
ppsim_network_free(PpsimNetwork *net)
{
    if (net == NULL)
        return;
    for (guint l = 0; l < net->n_links; l++)
        g_array_free(net->on_link[l], TRUE);
    g_free(net->on_link);
    g_array_free(net->pool, TRUE);
    g_array_free(net->free_slots, TRUE);
    g_array_free(net->order, TRUE);
    g_array_free(net->dirty, TRUE);
    g_array_free(net->finished, TRUE);
    g_free(net->link_cap);
    g_free(net->link_count);
    g_free(net->link_visit);
    g_free(net);
}

void
ppsim_network_set_records(PpsimNetwork *net, GArray *records)
{
    net->records = records;
}

static inline Flow *
flow_at(const PpsimNetwork *net, int slot)
{
    return &g_array_index(net->pool, Flow, slot);
}

/* Brings every flow's remaining bytes up to @now. */
static void
network_advance(PpsimNetwork *net, PpsimTime now)
{
    double dt = (double)(now - net->last_ps) / (double)PPSIM_PS_PER_S;
    if (dt > 0)
        for (guint i = 0; i < net->order->len; i++) {
            Flow *f = flow_at(net, g_array_index(net->order, int, i));
            f->remaining -= f->rate * dt;
        }
    net->last_ps = now;
}

/* Gathers the components around the dirty links: on return @net->dirty holds every link they
 * span (each once) and their flows are unfrozen. Returns the number of flows. */
static guint
network_walk(PpsimNetwork *net)
{
    guint64 visit = ++net->visit;
    GArray *queue = net->dirty;
    guint n = 0, head = 0;
    for (guint i = 0; i < queue->len;) { /* dedupe the dirty links */
        int l = g_array_index(queue, int, i);
        if (net->link_visit[l] == visit) {
            g_array_remove_index_fast(queue, i);
        } else {
            net->link_visit[l] = visit;
            i++;
        }
    }
    while (head < queue->len) {
        GArray *on = net->on_link[g_array_index(queue, int, head++)];
        for (guint j = 0; j < on->len; j++) {
            Flow *f = flow_at(net, g_array_index(on, int, j));
            if (f->visit == visit)
                continue;
            f->visit = visit;
            f->frozen = FALSE;
            n++;
            for (int k = 0; k < f->n_links; k++)
                if (net->link_visit[f->links[k]] != visit) {
                    net->link_visit[f->links[k]] = visit;
                    g_array_append_val(queue, f->links[k]);
                }
        }
    }
    return n;
}

/* Progressive filling of the components around the dirty links: O(A x (A + F)) for their A
 * links and F flows, independent of the rest of the cluster. */
static void
network_fill(PpsimNetwork *net)
{
    GArray *links = net->topo->links;
    guint unfrozen = network_walk(net);
    int *span = (int *)(void *)net->dirty->data;
    guint n_span = net->dirty->len;
    /* A link crossed by two or more flows delivers only its shared efficiency (PCIe switch
     * uplinks, [PO] App. D: GPUs on one switch "potentially interfere"; 1 = ideal sharing).
     * The flows of one uplink direction normally come from different GPUs, since a GPU's
     * transfers of one direction queue on its copy stream. */
    for (guint a = 0; a < n_span; a++) {
        int l = span[a];
        const PpsimLink *link = &g_array_index(links, PpsimLink, l);
        net->link_count[l] = (int)net->on_link[l]->len;
        net->link_cap[l] = link->bytes_per_s;
        if (net->link_count[l] >= 2)
            net->link_cap[l] *= link->shared_efficiency;
    }
    while (unfrozen > 0) {
        int best = -1;
        double best_share = 0;
        for (guint a = 0; a < n_span; a++) {
            int l = span[a];
            if (net->link_count[l] == 0)
                continue;
            double share = net->link_cap[l] / net->link_count[l];
            if (best < 0 || share < best_share || (share == best_share && l < best)) {
                best = l;
                best_share = share;
            }
        }
        g_assert(best >= 0);
        GArray *on = net->on_link[best];
        for (guint j = 0; j < on->len; j++) {
            Flow *f = flow_at(net, g_array_index(on, int, j));
            if (f->frozen)
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
    g_array_set_size(net->dirty, 0);
}

/* Re-computes the rates a change touched and arms a tick at the earliest completion. */
static void
network_rearm(PpsimNetwork *net, PpsimEngine *engine)
{
    net->generation++;
    if (net->order->len == 0) {
        g_array_set_size(net->dirty, 0);
        return;
    }
    network_fill(net);
    PpsimTime next = G_MAXINT64;
    for (guint i = 0; i < net->order->len; i++) {
        const Flow *f = flow_at(net, g_array_index(net->order, int, i));
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

/* Takes the flow in @slot off its links (their lists keep start order) and frees the slot;
 * its links become dirty. */
static void
network_remove(PpsimNetwork *net, int slot)
{
    const Flow *f = flow_at(net, slot);
    for (int k = 0; k < f->n_links; k++) {
        GArray *on = net->on_link[f->links[k]];
        guint j = 0;
        while (g_array_index(on, int, j) != slot)
            j++;
        g_array_remove_index(on, j);
        g_array_append_val(net->dirty, f->links[k]);
    }
    g_array_append_val(net->free_slots, slot);
}

static void
network_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    PpsimNetwork *net = state;
    if (ev->a != net->generation)
        return; /* stale: rates changed since it was armed */
    network_advance(net, ppsim_engine_now(engine));
    /* Complete every flow that has (up to rounding) no byte left, in start order. */
    GArray *done = net->finished;
    g_array_set_size(done, 0);
    guint kept = 0;
    for (guint i = 0; i < net->order->len; i++) {
        int slot = g_array_index(net->order, int, i);
        Flow *f = flow_at(net, slot);
        if (f->remaining <= f->rate * 1e-12 + 1e-9) {
            g_array_append_val(done, *f);
            network_remove(net, slot);
        } else {
            g_array_index(net->order, int, kept++) = slot;
        }
    }
    g_array_set_size(net->order, kept);
    network_rearm(net, engine);
    /* The callbacks may start flows (never re-enter this handler), so @done stays intact. */
    for (guint i = 0; i < done->len; i++)
        network_complete(net, &g_array_index(done, Flow, i), engine);
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
    int slot;
    if (net->free_slots->len > 0) {
        slot = g_array_index(net->free_slots, int, net->free_slots->len - 1);
        g_array_set_size(net->free_slots, net->free_slots->len - 1);
        g_array_index(net->pool, Flow, slot) = f;
    } else {
        slot = (int)net->pool->len;
        g_array_append_val(net->pool, f);
    }
    g_array_append_val(net->order, slot);
    for (int k = 0; k < f.n_links; k++) {
        g_array_append_val(net->on_link[f.links[k]], slot);
        g_array_append_val(net->dirty, f.links[k]);
    }
    network_rearm(net, engine);
}
