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
#include <string.h>

enum { NET_EV_TICK = 1 };

/* A growable array of ints (slots, links, heap positions): the per-event paths push and pop
 * a few at a time, inline. */
typedef struct {
    int *v;
    guint len, cap;
} IntVec;

static void
iv_grow(IntVec *a)
{
    a->cap = MAX(16, 2 * a->cap);
    a->v = g_renew(int, a->v, a->cap);
}

static inline void
iv_push(IntVec *a, int x)
{
    if (a->len == a->cap)
        iv_grow(a);
    a->v[a->len++] = x;
}

typedef struct {
    int links[4];
    int n_links;
    int pos;  /* index into the dense per-flow arrays (order, remaining, rate) */
    int heap; /* index into the heap */
    PpsimTime latency_ps;
    PpsimTime start_ps;
    guint64 seq; /* start order */
    gint64 cookie;
    int src, dst;
    guint64 bytes;
    guint64 visit; /* stamp of the last component walk that reached it */
    gboolean frozen;
} Flow;

/* A heap entry: the estimated time (ps, absolute) from which the flow may count as done. */
typedef struct {
    double due;
    int slot;
} Due;

struct PpsimNetwork {
    const PpsimTopology *topo;
    guint32 entity;
    PpsimFlowDoneFunc done;
    gpointer user_data;
    GArray *pool; /* Flow, by slot; a finished flow's slot goes to @free_slots */
    IntVec free_slots;
    /* the active flows, dense: slot, bytes left and bytes/s at each flow's pos */
    int *order;
    double *remaining, *rate;
    guint n_active, cap_active;
    Due *heap;         /* [n_active] a min-heap by due time */
    IntVec found;      /* scratch: a component's flows (slots); the heap walk's stack */
    IntVec ended;      /* scratch: slots of the flows done at a tick */
    IntVec *on_link;   /* per link: slots of the active flows crossing it, start order */
    PpsimTime last_ps; /* time remaining/rates were last brought up to date */
    guint64 steps;     /* times remaining bytes were brought forward */
    guint64 next_seq;
    double longest;      /* the longest time left (ps) of any flow when its rate was set */
    gint64 generation;   /* of the armed tick */
    double *link_cap;    /* scratch, per link */
    int *link_count;     /* scratch, per link: unfrozen flows while filling */
    guint64 *link_visit; /* per link: stamp of the last component walk that reached it */
    guint64 visit;
    IntVec dirty;     /* links touched since the last fill; then the walk's queue */
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
    net->finished = g_array_new(FALSE, FALSE, sizeof(Flow));
    net->n_links = topo ? topo->links->len : 0;
    net->on_link = g_new0(IntVec, net->n_links + 1);
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
        g_free(net->on_link[l].v);
    g_free(net->on_link);
    g_array_free(net->pool, TRUE);
    g_free(net->free_slots.v);
    g_free(net->order);
    g_free(net->remaining);
    g_free(net->rate);
    g_free(net->heap);
    g_free(net->found.v);
    g_free(net->ended.v);
    g_free(net->dirty.v);
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
    if (dt > 0) {
        double *rem = net->remaining;
        const double *rate = net->rate;
        for (guint i = 0; i < net->n_active; i++)
            rem[i] -= rate[i] * dt;
        net->steps++;
    }
    net->last_ps = now;
}

/* ---- the heap of flows by due time ---------------------------------------------------- */

static inline void
heap_put(PpsimNetwork *net, guint i, Due e)
{
    net->heap[i] = e;
    flow_at(net, e.slot)->heap = (int)i;
}

/* Restores the heap order around entry @i after its due time changed. */
static void
heap_fix(PpsimNetwork *net, guint i)
{
    Due e = net->heap[i];
    while (i > 0 && net->heap[(i - 1) / 2].due > e.due) {
        heap_put(net, i, net->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    guint n = net->n_active;
    for (;;) {
        guint c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && net->heap[c + 1].due < net->heap[c].due)
            c++;
        if (net->heap[c].due >= e.due)
            break;
        heap_put(net, i, net->heap[c]);
        i = c;
    }
    heap_put(net, i, e);
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
    double rate = net->rate[f->pos];
    g_assert(rate > 0);
    double left = MAX(0.0, net->remaining[f->pos]) / rate * (double)PPSIM_PS_PER_S;
    net->longest = MAX(net->longest, left);
    /* done when remaining <= rate x 1e-12 + 1e-9: a picosecond's bytes and 1e-9 more */
    net->heap[f->heap].due = (double)now + left - (1.0 + 1e-9 / rate * (double)PPSIM_PS_PER_S);
    heap_fix(net, (guint)f->heap);
}

/* Picoseconds from now until the flow at dense position @pos completes, as a scan of every
 * flow computes it. */
static inline PpsimTime
flow_time_left(const PpsimNetwork *net, int pos)
{
    double secs = MAX(0.0, net->remaining[pos]) / net->rate[pos];
    return (PpsimTime)ceil(secs * (double)PPSIM_PS_PER_S);
}

/* ---- filling ---------------------------------------------------------------------------- */

/* Gathers the components around the dirty links: on return @net->dirty holds every link they
 * span (each once), @net->found their flows, unfrozen. Returns the number of flows. */
static guint
network_walk(PpsimNetwork *net)
{
    guint64 visit = ++net->visit;
    IntVec *queue = &net->dirty;
    net->found.len = 0;
    guint n = 0, head = 0, kept = 0;
    for (guint i = 0; i < queue->len; i++) { /* dedupe the dirty links */
        int l = queue->v[i];
        if (net->link_visit[l] != visit) {
            net->link_visit[l] = visit;
            queue->v[kept++] = l;
        }
    }
    queue->len = kept;
    while (head < queue->len) {
        const IntVec *on = &net->on_link[queue->v[head++]];
        for (guint j = 0; j < on->len; j++) {
            Flow *f = flow_at(net, on->v[j]);
            if (f->visit == visit)
                continue;
            f->visit = visit;
            f->frozen = FALSE;
            iv_push(&net->found, on->v[j]);
            n++;
            for (int k = 0; k < f->n_links; k++)
                if (net->link_visit[f->links[k]] != visit) {
                    net->link_visit[f->links[k]] = visit;
                    iv_push(queue, f->links[k]);
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
    const int *span = net->dirty.v;
    guint n_span = net->dirty.len;
    /* A link crossed by two or more flows delivers only its shared efficiency (PCIe switch
     * uplinks, [PO] App. D: GPUs on one switch "potentially interfere"; 1 = ideal sharing).
     * The flows of one uplink direction normally come from different GPUs, since a GPU's
     * transfers of one direction queue on its copy stream. */
    for (guint a = 0; a < n_span; a++) {
        int l = span[a];
        const PpsimLink *link = &g_array_index(links, PpsimLink, l);
        net->link_count[l] = (int)net->on_link[l].len;
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
        const IntVec *on = &net->on_link[best];
        for (guint j = 0; j < on->len; j++) {
            Flow *f = flow_at(net, on->v[j]);
            if (f->frozen)
                continue;
            f->frozen = TRUE;
            net->rate[f->pos] = best_share;
            unfrozen--;
            for (int k = 0; k < f->n_links; k++) {
                net->link_cap[f->links[k]] = MAX(0.0, net->link_cap[f->links[k]] - best_share);
                net->link_count[f->links[k]]--;
            }
        }
    }
    net->dirty.len = 0;
    for (guint i = 0; i < net->found.len; i++)
        flow_set_due(net, flow_at(net, net->found.v[i]), now);
}

/* Re-computes the rates a change touched and arms a tick at the earliest completion: the
 * smallest time left of any flow, found among those due no later than it plus the slack
 * (a walk of the heap that skips every subtree due later). */
static void
network_rearm(PpsimNetwork *net, PpsimEngine *engine)
{
    net->generation++;
    if (net->n_active == 0) {
        net->dirty.len = 0;
        return;
    }
    PpsimTime now = ppsim_engine_now(engine);
    network_fill(net, now);
    double slack = network_slack(net, now);
    PpsimTime next = flow_time_left(net, flow_at(net, net->heap[0].slot)->pos);
    IntVec *stack = &net->found;
    stack->len = 0;
    for (guint c = 1; c <= 2 && c < net->n_active; c++)
        iv_push(stack, (int)c);
    while (stack->len > 0) {
        guint i = (guint)stack->v[--stack->len];
        if (net->heap[i].due - slack > (double)now + (double)next)
            continue;
        next = MIN(next, flow_time_left(net, flow_at(net, net->heap[i].slot)->pos));
        for (guint c = 2 * i + 1; c <= 2 * i + 2 && c < net->n_active; c++)
            iv_push(stack, (int)c);
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
        IntVec *on = &net->on_link[f->links[k]];
        guint j = 0;
        while (on->v[j] != slot)
            j++;
        memmove(on->v + j, on->v + j + 1, (on->len - j - 1) * sizeof(int));
        on->len--;
        iv_push(&net->dirty, f->links[k]);
    }
    guint last = --net->n_active, i = (guint)f->heap, pos = (guint)f->pos;
    if (i < last) { /* the heap's last entry takes its place */
        heap_put(net, i, net->heap[last]);
        heap_fix(net, i);
    }
    if (pos < last) { /* and the last dense flow its position */
        int moved = net->order[last];
        net->order[pos] = moved;
        net->remaining[pos] = net->remaining[last];
        net->rate[pos] = net->rate[last];
        flow_at(net, moved)->pos = (int)pos;
    }
    iv_push(&net->free_slots, slot);
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
    IntVec *stack = &net->found, *ended = &net->ended;
    stack->len = 0;
    ended->len = 0;
    if (net->n_active > 0)
        iv_push(stack, 0);
    while (stack->len > 0) {
        guint i = (guint)stack->v[--stack->len];
        if (net->heap[i].due > bound)
            continue;
        int slot = net->heap[i].slot, pos = flow_at(net, slot)->pos;
        if (net->remaining[pos] <= net->rate[pos] * 1e-12 + 1e-9) {
            /* in start order: insertion, as few end at once */
            guint j = ended->len;
            iv_push(ended, slot);
            guint64 seq = flow_at(net, slot)->seq;
            for (; j > 0 && flow_at(net, ended->v[j - 1])->seq > seq; j--)
                ended->v[j] = ended->v[j - 1];
            ended->v[j] = slot;
        }
        for (guint c = 2 * i + 1; c <= 2 * i + 2 && c < net->n_active; c++)
            iv_push(stack, (int)c);
    }
    GArray *done = net->finished;
    g_array_set_size(done, 0);
    for (guint i = 0; i < ended->len; i++) {
        g_array_append_val(done, *flow_at(net, ended->v[i]));
        network_remove(net, ended->v[i]);
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
    if (net->free_slots.len > 0) {
        slot = net->free_slots.v[--net->free_slots.len];
    } else {
        slot = (int)net->pool->len;
        g_array_set_size(net->pool, net->pool->len + 1);
    }
    if (net->n_active == net->cap_active) {
        net->cap_active = MAX(16, 2 * net->cap_active);
        net->order = g_renew(int, net->order, net->cap_active);
        net->remaining = g_renew(double, net->remaining, net->cap_active);
        net->rate = g_renew(double, net->rate, net->cap_active);
        net->heap = g_renew(Due, net->heap, net->cap_active);
    }
    guint at = net->n_active++;
    f.seq = net->next_seq++;
    f.pos = (int)at;
    f.heap = (int)at;
    *flow_at(net, slot) = f;
    net->order[at] = slot;
    net->remaining[at] = (double)bytes;
    net->rate[at] = 0;
    net->heap[at] = (Due){G_MAXDOUBLE, slot}; /* a valid leaf; the fill below sets it */
    for (int k = 0; k < f.n_links; k++) {
        iv_push(&net->on_link[f.links[k]], slot);
        iv_push(&net->dirty, f.links[k]);
    }
    network_rearm(net, engine);
}
