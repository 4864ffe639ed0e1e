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
 *
 * Every network event still brings every flow's remaining bytes up to date, in one pass
 * over dense arrays (the same subtraction per flow and event as ever, so the same bits), but
 * neither the next completion nor the flows done at a tick need a look at every flow: each
 * flow sits in a min-heap by when it will be done, estimated when its rate was last set.
 * Rounding moves a flow's true completion away from that estimate by at most a few
 * picoseconds (network_slack), so only the flows whose estimate lies within that distance
 * of the answer are evaluated exactly, with the same arithmetic as a scan of all of them
 * would use: the same ticks, the same flows done at each, bit for bit.
 */
#include "hw/network.h"

#include <math.h>

enum { NET_EV_TICK = 1 };

typedef struct {
    int links[4];
    int n_links;
    int pos;    /* index into the dense per-flow arrays (order, remaining, rate) */
    int heap;   /* index into the heap */
    double due; /* estimated time (ps, absolute) from which it may count as done */
    PpsimTime latency_ps;
    PpsimTime start_ps;
    guint64 seq; /* start order */
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
    GArray *order;     /* int slot of every active flow, at its flow's pos */
    GArray *remaining; /* double bytes left of every active flow, at its pos */
    GArray *rate;      /* double bytes/s of every active flow, at its pos */
    GArray *heap;      /* int slots of the active flows, a min-heap by Flow.due */
    GArray *found;     /* int, scratch: a component's flows (slots); the heap walk's stack */
    GArray *ended;     /* int slots, scratch: the flows done at a tick */
    GArray **on_link;  /* per link: int slots of the active flows crossing it, start order */
    PpsimTime last_ps; /* time remaining/rates were last brought up to date */
    guint64 steps;     /* times remaining bytes were brought forward */
    guint64 next_seq;
    double longest;      /* the longest time left (ps) of any flow when its rate was set */
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
    net->remaining = g_array_new(FALSE, FALSE, sizeof(double));
    net->rate = g_array_new(FALSE, FALSE, sizeof(double));
    net->heap = g_array_new(FALSE, FALSE, sizeof(int));
    net->found = g_array_new(FALSE, FALSE, sizeof(int));
    net->ended = g_array_new(FALSE, FALSE, sizeof(int));
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
    g_array_free(net->remaining, TRUE);
    g_array_free(net->rate, TRUE);
    g_array_free(net->heap, TRUE);
    g_array_free(net->found, TRUE);
    g_array_free(net->ended, TRUE);
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

static inline double *
rem_of(const PpsimNetwork *net, const Flow *f)
{
    return &g_array_index(net->remaining, double, f->pos);
}

static inline double
rate_of(const PpsimNetwork *net, const Flow *f)
{
    return g_array_index(net->rate, double, f->pos);
}

/* Brings every flow's remaining bytes up to @now. */
static void
network_advance(PpsimNetwork *net, PpsimTime now)
{
    double dt = (double)(now - net->last_ps) / (double)PPSIM_PS_PER_S;
    if (dt > 0) {
        double *rem = (double *)(void *)net->remaining->data;
        const double *rate = (const double *)(const void *)net->rate->data;
        for (guint i = 0; i < net->remaining->len; i++)
            rem[i] -= rate[i] * dt;
        net->steps++;
    }
    net->last_ps = now;
}

/* ---- the heap of flows by due time ---------------------------------------------------- */

static inline double
due_at(const PpsimNetwork *net, guint i)
{
    return flow_at(net, g_array_index(net->heap, int, i))->due;
}

static inline void
heap_put(PpsimNetwork *net, guint i, int slot)
{
    g_array_index(net->heap, int, i) = slot;
    flow_at(net, slot)->heap = (int)i;
}

/* Restores the heap order around the flow at @i after its due time changed. */
static void
heap_fix(PpsimNetwork *net, guint i)
{
    int slot = g_array_index(net->heap, int, i);
    double due = flow_at(net, slot)->due;
    while (i > 0 && due_at(net, (i - 1) / 2) > due) {
        heap_put(net, i, g_array_index(net->heap, int, (i - 1) / 2));
        i = (i - 1) / 2;
    }
    guint n = net->heap->len;
    for (;;) {
        guint c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && due_at(net, c + 1) < due_at(net, c))
            c++;
        if (due_at(net, c) >= due)
            break;
        heap_put(net, i, g_array_index(net->heap, int, c));
        i = c;
    }
    heap_put(net, i, slot);
}

static void
heap_remove(PpsimNetwork *net, const Flow *f)
{
    guint i = (guint)f->heap, last = net->heap->len - 1;
    int moved = g_array_index(net->heap, int, last);
    g_array_set_size(net->heap, last);
    if (i < last) {
        heap_put(net, i, moved);
        heap_fix(net, i);
    }
}

/* How far (ps) rounding can have moved any flow's completion, and its test for being done,
 * from its due time: the remaining bytes lose at most a few ulps per step (relative to the
 * time the flow has left, over its lifetime: the steps times the longest such time), and
 * its due time as many relative to the clock; 4 ps more for the roundings up to whole
 * picoseconds. With a million steps and 0.1 s left this is about 4.1 ps. */
static double
network_slack(const PpsimNetwork *net, PpsimTime now)
{
    return 4.0 + 1e-15 * ((double)net->steps + 16.0) * (2.0 * net->longest + 1.0) +
           1e-15 * ((double)now + net->longest);
}

/* Sets @f's due time from its remaining bytes and rate (both current at @now): when its
 * completion falls due, less the tolerance of the test for being done. */
static void
flow_set_due(PpsimNetwork *net, Flow *f, PpsimTime now)
{
    double rate = rate_of(net, f);
    g_assert(rate > 0);
    double left = MAX(0.0, *rem_of(net, f)) / rate * (double)PPSIM_PS_PER_S;
    net->longest = MAX(net->longest, left);
    /* done when remaining <= rate x 1e-12 + 1e-9: a picosecond's bytes and 1e-9 more */
    f->due = (double)now + left - (1.0 + 1e-9 / rate * (double)PPSIM_PS_PER_S);
    heap_fix(net, (guint)f->heap);
}

/* Picoseconds from now until @f completes, as a scan of every flow computes it. */
static inline PpsimTime
flow_time_left(const PpsimNetwork *net, const Flow *f)
{
    double secs = MAX(0.0, *rem_of(net, f)) / rate_of(net, f);
    return (PpsimTime)ceil(secs * (double)PPSIM_PS_PER_S);
}

/* Gathers the components around the dirty links: on return @net->dirty holds every link they
 * span (each once), @net->found their flows, unfrozen. Returns the number of flows. */
static guint
network_walk(PpsimNetwork *net)
{
    guint64 visit = ++net->visit;
    GArray *queue = net->dirty;
    g_array_set_size(net->found, 0);
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
            g_array_append_val(net->found, g_array_index(on, int, j));
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
 * links and F flows, independent of the rest of the cluster; then their due times. */
static void
network_fill(PpsimNetwork *net, PpsimTime now)
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
            g_array_index(net->rate, double, f->pos) = best_share;
            unfrozen--;
            for (int k = 0; k < f->n_links; k++) {
                net->link_cap[f->links[k]] = MAX(0.0, net->link_cap[f->links[k]] - best_share);
                net->link_count[f->links[k]]--;
            }
        }
    }
    g_array_set_size(net->dirty, 0);
    for (guint i = 0; i < net->found->len; i++)
        flow_set_due(net, flow_at(net, g_array_index(net->found, int, i)), now);
}

/* Re-computes the rates a change touched and arms a tick at the earliest completion: the
 * smallest time left of any flow, found among those due no later than it plus the slack
 * (a walk of the heap that skips every subtree due later). */
static void
network_rearm(PpsimNetwork *net, PpsimEngine *engine)
{
    net->generation++;
    if (net->order->len == 0) {
        g_array_set_size(net->dirty, 0);
        return;
    }
    PpsimTime now = ppsim_engine_now(engine);
    network_fill(net, now);
    double slack = network_slack(net, now);
    PpsimTime next = G_MAXINT64;
    GArray *stack = net->found;
    g_array_set_size(stack, 0);
    guint root = 0;
    g_array_append_val(stack, root);
    while (stack->len > 0) {
        guint i = g_array_index(stack, guint, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        const Flow *f = flow_at(net, g_array_index(net->heap, int, i));
        if (next != G_MAXINT64 && f->due - slack > (double)now + (double)next)
            continue;
        next = MIN(next, flow_time_left(net, f));
        for (guint c = 2 * i + 1; c <= 2 * i + 2 && c < net->heap->len; c++)
            g_array_append_val(stack, c);
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

/* Takes the flow in @slot off its links (their lists keep start order), the heap and the
 * dense arrays, and frees the slot; its links become dirty. */
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
    heap_remove(net, f);
    guint last = net->order->len - 1;
    if ((guint)f->pos < last) { /* the last flow moves into its place */
        int moved = g_array_index(net->order, int, last);
        g_array_index(net->order, int, f->pos) = moved;
        g_array_index(net->remaining, double, f->pos) = g_array_index(net->remaining, double, last);
        g_array_index(net->rate, double, f->pos) = g_array_index(net->rate, double, last);
        flow_at(net, moved)->pos = f->pos;
    }
    g_array_set_size(net->order, last);
    g_array_set_size(net->remaining, last);
    g_array_set_size(net->rate, last);
    g_array_append_val(net->free_slots, slot);
}

static gint
flow_cmp_seq(gconstpointer a, gconstpointer b, gpointer data)
{
    const PpsimNetwork *net = data;
    guint64 x = flow_at(net, *(const int *)a)->seq, y = flow_at(net, *(const int *)b)->seq;
    return x < y ? -1 : x > y;
}

static void
network_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    PpsimNetwork *net = state;
    if (ev->a != net->generation)
        return; /* stale: rates changed since it was armed */
    PpsimTime now = ppsim_engine_now(engine);
    network_advance(net, now);
    /* Complete every flow that has (up to rounding) no byte left, in start order: only
     * flows due by now plus the slack can have, so the walk skips every subtree due later. */
    double bound = (double)now + network_slack(net, now);
    GArray *stack = net->found;
    g_array_set_size(stack, 0);
    GArray *ended = net->ended;
    g_array_set_size(ended, 0);
    guint root = 0;
    if (net->heap->len > 0)
        g_array_append_val(stack, root);
    while (stack->len > 0) {
        guint i = g_array_index(stack, guint, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        int slot = g_array_index(net->heap, int, i);
        const Flow *f = flow_at(net, slot);
        if (f->due > bound)
            continue;
        if (*rem_of(net, f) <= rate_of(net, f) * 1e-12 + 1e-9)
            g_array_append_val(ended, slot);
        for (guint c = 2 * i + 1; c <= 2 * i + 2 && c < net->heap->len; c++)
            g_array_append_val(stack, c);
    }
    g_array_sort_with_data(ended, flow_cmp_seq, net);
    GArray *done = net->finished;
    g_array_set_size(done, 0);
    for (guint i = 0; i < ended->len; i++) {
        int slot = g_array_index(ended, int, i);
        g_array_append_val(done, *flow_at(net, slot));
        network_remove(net, slot);
    }
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
              .start_ps = ppsim_engine_now(engine)};
    f.n_links = ppsim_topology_route(net->topo, src, dst, f.links, &f.latency_ps);
    if (f.n_links == 0 || bytes == 0) {
        network_complete(net, &f, engine);
        return;
    }
    network_advance(net, ppsim_engine_now(engine));
    int slot;
    f.seq = net->next_seq++;
    f.pos = (int)net->order->len;
    f.heap = (int)net->heap->len;
    f.due = G_MAXDOUBLE; /* a valid leaf; the fill below sets it */
    if (net->free_slots->len > 0) {
        slot = g_array_index(net->free_slots, int, net->free_slots->len - 1);
        g_array_set_size(net->free_slots, net->free_slots->len - 1);
        g_array_index(net->pool, Flow, slot) = f;
    } else {
        slot = (int)net->pool->len;
        g_array_append_val(net->pool, f);
    }
    double remaining = (double)bytes, rate = 0;
    g_array_append_val(net->order, slot);
    g_array_append_val(net->remaining, remaining);
    g_array_append_val(net->rate, rate);
    g_array_append_val(net->heap, slot);
    for (int k = 0; k < f.n_links; k++) {
        g_array_append_val(net->on_link[f.links[k]], slot);
        g_array_append_val(net->dirty, f.links[k]);
    }
    network_rearm(net, engine);
}
