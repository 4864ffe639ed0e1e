/* sim-fast.c: the replay as one pass over the ops in dependency order (see sim-internal.h).
 *
 * When nothing is shared, the event loop's answer is known in closed form: every list of the
 * schedule is one in-order stream, a dependency is a fixed latency, and so an op starts at
 * max(end of the previous op of its list, max over its inputs of (input's end + latency)),
 * the longest path to it in the wait graph (list order plus the dependencies). The pass
 * computes that directly, lane by lane (a lane is one device's compute or copy list): a lane
 * runs until an op's input is not computed yet, then waits on the input's lane, which wakes
 * it once past that op. A lane is never stuck while the graph is acyclic, so ops left over
 * when no lane can run mean a cyclic wait (the checker then names it).
 *
 * Metrics are folded into the same pass: busy time, the idle attribution (the input that
 * decides a gap is the latest-arriving one, the first of equal arrivals, as sim-metrics.c
 * reads it from the executor), and the memory of a device whose changes all come from its
 * compute list: the executor applies them in that list's order (an op's end before the next
 * op's start), and so does the pass. A device whose copy list moves memory too (OFF/RL) is
 * replayed afterwards by merging its two lists' changes by time, and the host's pool from
 * every copy list. When two streams change one pool at the same instant, their order is the
 * event loop's, and the peaks (and the op named at a device's peak) may depend on it: the
 * replay then declines and the event engine runs instead, except where that order is known:
 * a copy op that a compute op's end started (a reload anchored to it, most often) changes
 * memory after that end and before the next compute op's start; and changes of one sign
 * only at an instant leave the host's peak (the only host figure reported) the same in any
 * order.
 */
#include "sim-internal.h"
#include "schedule/schedule-index-inline.h"

#include <string.h>

typedef struct {
    const PpsimOp *ops;
    PpsimOpTiming *t; /* the result's timing array of this list */
    guint32 len, next, base;
    gint32 device, list;
    PpsimTime free_at;   /* end of its last op so far (0 before the first) */
    guint32 wait_index;  /* while waiting: until the lane it waits on is past this op */
    gint32 waiters;      /* first lane waiting on this one, or -1 */
    gint32 next_waiter;  /* next lane waiting on the same lane as this one */
    PpsimTime prev_gpu;  /* compute lane: end of its previous op (attribution) */
    gboolean mem_inline; /* compute lane: the device's memory changes are applied here */
    /* compute lane: the device's busy time and idle attribution so far (sim-metrics.c's
     * PpsimDeviceResult fields of those names), copied to the result at the end */
    PpsimTime busy, recompute, bubble_recompute, warmup, wait, transfer, offload;
} Lane;

/* Where a lane stopped in its next op's inputs, to go on from there when woken (for ops of
 * at most FAST_RESUME_DEPS inputs; others are looked at again from the first). */
#define FAST_RESUME_DEPS 8
typedef struct {
    PpsimDep deps[FAST_RESUME_DEPS];
    guint n, k; /* inputs, and the first not seen computed; n = 0: none kept */
    PpsimTime ready, prod_end;
    gboolean via_copy;
} Resume;

typedef struct {
    Replay *r;
    PpsimRunResult *res;
    Lane *lanes;    /* [2p]: device d's compute list is lane 2d, its copy list lane 2d + 1 */
    Resume *resume; /* [2p] */
    PpsimDep *deps;
    PpsimPoolStats *pools; /* [p + 1]: devices, then the host */
    gint64 *tag_current, *tag_peak;
    PpsimTime p2p_ps;
    int n_stages;
    /* by kind, then stage: an op's duration (a partial R or a WRL of other than 16 bits
     * asks sim.c), and its memory changes when no op recomputes, offloads or reloads (they
     * then depend on the kind and stage only; else NULL, and sim.c tells) */
    PpsimTime *duration;
    SimMemEffects *effects;
} Fast;

static inline PpsimTime
fast_duration(const Fast *f, const PpsimOp *op)
{
    if (G_UNLIKELY(op->share != 0 || (op->flags & PPSIM_OP_FLAG_OVERLAP)))
        return ppsim_sim_duration(f->r, op);
    return f->duration[op->kind * f->n_stages + op->stage];
}

/* @op's memory changes: from the table, or computed into @room. */
static inline const SimMemEffects *
fast_effects(const Fast *f, const PpsimOp *op, SimMemEffects *room)
{
    if (f->effects != NULL)
        return &f->effects[op->kind * f->n_stages + op->stage];
    ppsim_sim_mem_effects(f->r, op, room);
    return room;
}

/* Fills the tables by kind and stage. */
static void
fast_tables(Fast *f)
{
    int S = f->n_stages;
    const PpsimScheduleIndex *idx = f->r->idx;
    gboolean plain = !ppsim_schedule_index_has_kind(idx, PPSIM_OP_R) &&
                     !ppsim_schedule_index_has_kind(idx, PPSIM_OP_OFF) &&
                     !ppsim_schedule_index_has_kind(idx, PPSIM_OP_RL);
    f->duration = g_new(PpsimTime, (gsize)PPSIM_OP_N_KINDS * S);
    f->effects = plain ? g_new(SimMemEffects, (gsize)PPSIM_OP_N_KINDS * S) : NULL;
    for (int k = 0; k < PPSIM_OP_N_KINDS; k++)
        for (int s = 0; s < S; s++) {
            PpsimOp op = {
                .kind = (guint8)k, .stage = s, .microbatch = ppsim_op_kind_per_stage(k) ? -1 : 0};
            f->duration[k * S + s] = ppsim_sim_duration(f->r, &op);
            if (plain)
                ppsim_sim_mem_effects(f->r, &op, &f->effects[k * S + s]);
        }
}

/* One memory change at @now by op @id, on a device pool or the host's. */
static inline void
fast_mem_apply(Fast *f, const SimMemEffect *e, PpsimTime now, guint32 id)
{
    ppsim_pool_stats_change(&f->pools[e->pool], e->category, e->delta, now, id);
    if (e->tag >= 0 && e->category != PPSIM_MEM_STATIC && e->category != PPSIM_MEM_WORKSPACE) {
        f->tag_current[e->tag] += e->delta;
        f->tag_peak[e->tag] = MAX(f->tag_peak[e->tag], f->tag_current[e->tag]);
    }
}

/* A compute op's share of its device's busy time and idle attribution (sim-metrics.c's
 * metrics_attribute, op by op): @ready is its decisive input's arrival (-1: none), from a
 * producer that ended at @prod_end, on a copy list when @via_copy. */
static inline void
fast_account(Fast *f, Lane *l, guint32 i, const PpsimOp *op, PpsimTime start, PpsimTime end,
             PpsimTime prod_end, gboolean via_copy)
{
    l->busy += end - start;
    if (op->kind == PPSIM_OP_R)
        l->recompute += end - start;
    if (op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW)
        l->bubble_recompute += f->r->costs->stage[op->stage].b_recompute_ps;
    PpsimTime gap = start - l->prev_gpu;
    if (i == 0) {
        l->warmup = start;
    } else if (gap > 0) {
        PpsimTime dep_wait = via_copy ? 0 : CLAMP(prod_end - l->prev_gpu, 0, gap);
        l->wait += dep_wait;
        l->transfer += gap - dep_wait;
        if (via_copy)
            l->offload += gap;
    }
    l->prev_gpu = end;
}

/* Runs lane @l until its list ends (TRUE) or an op's input is not computed yet (FALSE: the
 * lane then waits on the input's lane). */
static gboolean
fast_lane(Fast *f, Lane *l, gint32 self)
{
    const PpsimScheduleIndex *idx = f->r->idx;
    Resume *resume = &f->resume[self];
    PpsimOpPos pos = {l->device, l->list, 0};
    while (l->next < l->len) {
        guint32 i = l->next;
        const PpsimOp *op = &l->ops[i];
        const PpsimDep *deps = f->deps;
        guint n, k = 0;
        PpsimTime ready = -1, prod_end = 0;
        gboolean via_copy = FALSE;
        if (resume->n > 0) { /* woken: go on with the inputs not seen computed */
            deps = resume->deps;
            n = resume->n;
            k = resume->k;
            ready = resume->ready;
            prod_end = resume->prod_end;
            via_copy = resume->via_copy;
            resume->n = 0;
        } else {
            pos.index = (gint32)i;
            n = ppsim_schedule_index_deps_inline(idx, &pos, op, f->deps);
        }
        for (; k < n; k++) {
            const PpsimDep *dep = &deps[k];
            gint32 from_lane = 2 * dep->device + dep->list;
            Lane *from = &f->lanes[from_lane];
            guint32 at = dep->from - from->base;
            if (at >= from->next) { /* not computed yet: wait for it */
                l->wait_index = at;
                l->next_waiter = from->waiters;
                from->waiters = self;
                if (n <= FAST_RESUME_DEPS) {
                    if (deps != resume->deps)
                        memcpy(resume->deps, deps, n * sizeof *deps);
                    resume->n = n;
                    resume->k = k;
                    resume->ready = ready;
                    resume->prod_end = prod_end;
                    resume->via_copy = via_copy;
                }
                return FALSE;
            }
            PpsimTime end = from->t[at].end_ps;
            gboolean local = dep->kind == PPSIM_DEP_LOCAL || dep->kind == PPSIM_DEP_SYNC ||
                             dep->device == l->device;
            PpsimTime arrive = end + (local ? 0 : f->p2p_ps);
            if (arrive > ready) {
                ready = arrive;
                prod_end = end;
                via_copy = dep->list == 1;
            }
        }
        PpsimTime start = MAX(l->free_at, ready);
        PpsimTime end = start + fast_duration(f, op);
        l->t[i] = (PpsimOpTiming){start, end};
        l->free_at = end;
        l->next = i + 1;
        if (l->list == 0) {
            if (!(op->flags & PPSIM_OP_FLAG_CPU)) /* not the GPU's time (sim-metrics.c) */
                fast_account(f, l, i, op, start, end, prod_end, via_copy);
            if (l->mem_inline) {
                SimMemEffects room;
                const SimMemEffects *fx = fast_effects(f, op, &room);
                for (int e = 0; e < fx->n; e++)
                    fast_mem_apply(f, &fx->e[e], fx->e[e].when == PPSIM_MEM_AT_START ? start : end,
                                   l->base + i);
            }
        }
    }
    return TRUE;
}

/* Computes every op's timing. FALSE when ops are left that can never start. */
static gboolean
fast_pass(Fast *f, int n_lanes)
{
    g_autofree gint32 *stack = g_new(gint32, MAX(n_lanes, 1));
    int top = 0;
    for (int k = n_lanes - 1; k >= 0; k--)
        if (f->lanes[k].len > 0)
            stack[top++] = k;
    while (top > 0) {
        gint32 k = stack[--top];
        Lane *l = &f->lanes[k];
        fast_lane(f, l, k);
        /* wake the lanes waiting for an op this one has now passed */
        for (gint32 *w = &l->waiters; *w >= 0;) {
            Lane *waiter = &f->lanes[*w];
            if (waiter->wait_index < l->next) {
                stack[top++] = *w;
                *w = waiter->next_waiter;
            } else {
                w = &waiter->next_waiter;
            }
        }
    }
    for (int k = 0; k < n_lanes; k++)
        if (f->lanes[k].next < f->lanes[k].len)
            return FALSE;
    return TRUE;
}

/* One memory change in time order, for the pools replayed after the pass. */
typedef struct {
    PpsimTime time;
    SimMemEffect e;
    guint32 id;    /* the op */
    gint32 stream; /* its lane */
} MemEvent;

/* The changes of lane @l's ops on pool @pool, in the lane's order (an op's start, its end,
 * the next op's start), appended to @out. */
static void
fast_lane_events(Fast *f, const Lane *l, gint32 self, int pool, GArray *out)
{
    for (guint32 i = 0; i < l->len; i++) {
        SimMemEffects room;
        const SimMemEffects *fx = fast_effects(f, &l->ops[i], &room);
        for (int when = PPSIM_MEM_AT_START; when <= PPSIM_MEM_AT_END; when++)
            for (int e = 0; e < fx->n; e++) {
                if ((int)fx->e[e].when != when || fx->e[e].pool != pool)
                    continue;
                MemEvent ev = {when == PPSIM_MEM_AT_START ? l->t[i].start_ps : l->t[i].end_ps,
                               fx->e[e], l->base + i, self};
                g_array_append_val(out, ev);
            }
    }
}

/* Whether copy op @j of device @d started at @t because compute op @k of the device ended
 * then: @k is its anchor (or another input) and every other input arrived, and the copy
 * stream was free, before @t, and it lasts. The event loop then starts it while handling
 * @k's end: after @k's own memory changes, before the compute stream's next op starts
 * (exec.c: a task's successors, then its stream's next task). */
static gboolean
fast_started_by(Fast *f, int d, guint32 j, guint32 k, PpsimTime t)
{
    const Lane *copy = &f->lanes[2 * d + 1], *compute = &f->lanes[2 * d];
    const PpsimOpTiming *c = &copy->t[j];
    if (c->start_ps != t || c->end_ps == t || (j > 0 && copy->t[j - 1].end_ps >= t) ||
        compute->t[k].end_ps != t)
        return FALSE;
    PpsimOpPos pos = {d, 1, (gint32)j};
    guint n = ppsim_schedule_index_deps_inline(f->r->idx, &pos, &copy->ops[j], f->deps);
    gboolean from_k = FALSE;
    for (guint x = 0; x < n; x++) {
        const PpsimDep *dep = &f->deps[x];
        if (dep->list == 0 && dep->device == d && dep->from == compute->base + k) {
            from_k = TRUE;
            continue;
        }
        const Lane *l = &f->lanes[2 * dep->device + dep->list];
        gboolean local =
            dep->kind == PPSIM_DEP_LOCAL || dep->kind == PPSIM_DEP_SYNC || dep->device == d;
        if (l->t[dep->from - l->base].end_ps + (local ? 0 : f->p2p_ps) >= t)
            return FALSE;
    }
    return from_k;
}

/* At instant @t, changes of both lanes of device @d: the compute lane's from a[*i] and the
 * copy lane's from b[*j]. Their order is the event loop's: known when the copy lane's are
 * the start of one copy op that a compute op's end at @t started (fast_started_by); then
 * that end and what precedes it, the copy op's start, the rest. Applies them in that order
 * and moves *i and *j past them; FALSE when the order is not known. */
static gboolean
fast_device_tie(Fast *f, int d, PpsimTime t, const GArray *a, guint *i, const GArray *b, guint *j)
{
    const MemEvent *x = (const MemEvent *)(gconstpointer)a->data;
    const MemEvent *y = (const MemEvent *)(gconstpointer)b->data;
    guint a_end = *i, b_end = *j;
    while (a_end < a->len && x[a_end].time == t)
        a_end++;
    while (b_end < b->len && y[b_end].time == t)
        b_end++;
    guint32 copy_id = y[*j].id;
    for (guint q = *j; q < b_end; q++)
        if (y[q].id != copy_id || y[q].e.when != PPSIM_MEM_AT_START)
            return FALSE;
    const Lane *compute = &f->lanes[2 * d], *copy = &f->lanes[2 * d + 1];
    guint32 c = copy_id - copy->base;
    /* the compute op ending at t: the one of the instant's first end, if any */
    guint32 k = G_MAXUINT32;
    for (guint q = *i; q < a_end && k == G_MAXUINT32; q++)
        if (x[q].e.when == PPSIM_MEM_AT_END)
            k = x[q].id - compute->base;
    if (k == G_MAXUINT32) { /* no end at t: the op ending then, if it changes nothing */
        guint32 first = x[*i].id - compute->base;
        if (first == 0)
            return FALSE;
        k = first - 1;
    }
    if (!fast_started_by(f, d, c, k, t))
        return FALSE;
    for (; *i < a_end && x[*i].id <= compute->base + k; ++*i)
        fast_mem_apply(f, &x[*i].e, t, x[*i].id);
    for (; *j < b_end; ++*j)
        fast_mem_apply(f, &y[*j].e, t, y[*j].id);
    for (; *i < a_end; ++*i)
        fast_mem_apply(f, &x[*i].e, t, x[*i].id);
    return TRUE;
}

/* Device @d's memory from both its lanes, merged by time. FALSE when both lanes change it
 * at one instant in an order only the event loop knows. */
static gboolean
fast_device_memory(Fast *f, int d)
{
    g_autoptr(GArray) a = g_array_new(FALSE, FALSE, sizeof(MemEvent));
    g_autoptr(GArray) b = g_array_new(FALSE, FALSE, sizeof(MemEvent));
    fast_lane_events(f, &f->lanes[2 * d], 2 * d, d, a);
    fast_lane_events(f, &f->lanes[2 * d + 1], 2 * d + 1, d, b);
    guint i = 0, j = 0;
    while (i < a->len || j < b->len) {
        const MemEvent *x = i < a->len ? &g_array_index(a, MemEvent, i) : NULL;
        const MemEvent *y = j < b->len ? &g_array_index(b, MemEvent, j) : NULL;
        if (x != NULL && y != NULL && x->time == y->time) {
            if (!fast_device_tie(f, d, x->time, a, &i, b, &j))
                return FALSE;
            continue;
        }
        const MemEvent *next = y == NULL || (x != NULL && x->time < y->time) ? x : y;
        fast_mem_apply(f, &next->e, next->time, next->id);
        next == x ? i++ : j++;
    }
    return TRUE;
}

static gint
mem_event_cmp(gconstpointer pa, gconstpointer pb)
{
    const MemEvent *a = pa, *b = pb;
    return a->time < b->time ? -1 : a->time > b->time;
}

/* The host's pool from every copy lane, in time order (a stable sort keeps each lane's own
 * order at an instant). FALSE when two lanes change it at one instant, in both directions. */
static gboolean
fast_host_memory(Fast *f, int p)
{
    g_autoptr(GArray) ev = g_array_new(FALSE, FALSE, sizeof(MemEvent));
    for (int d = 0; d < p; d++)
        fast_lane_events(f, &f->lanes[2 * d + 1], 2 * d + 1, p, ev);
    g_array_sort(ev, mem_event_cmp); /* stable */
    const MemEvent *e = (const MemEvent *)(gpointer)ev->data;
    for (guint i = 0; i < ev->len;) {
        guint j = i;
        gboolean up = FALSE, down = FALSE, several = FALSE;
        for (; j < ev->len && e[j].time == e[i].time; j++) {
            up |= e[j].e.delta > 0;
            down |= e[j].e.delta < 0;
            several |= e[j].stream != e[i].stream;
        }
        if (several && up && down)
            return FALSE;
        for (; i < j; i++)
            fast_mem_apply(f, &e[i].e, e[i].time, e[i].id);
    }
    return TRUE;
}

/* Whether lane @l (a copy list) changes any memory. */
static gboolean
fast_lane_moves_memory(const Lane *l)
{
    for (guint32 i = 0; i < l->len; i++)
        if (l->ops[i].kind == PPSIM_OP_OFF || l->ops[i].kind == PPSIM_OP_RL)
            return TRUE;
    return FALSE;
}

/* Per-device figures the pass leaves: first start, end, makespan, cool-down. */
static void
fast_device_times(Fast *f, int p)
{
    PpsimRunResult *res = f->res;
    res->makespan_ps = 0;
    for (int d = 0; d < p; d++) {
        PpsimDeviceResult *dev = &res->devices[d];
        dev->first_start_ps = G_MAXINT64;
        for (int list = 0; list < 2; list++) {
            const Lane *l = &f->lanes[2 * d + list];
            if (l->len == 0)
                continue;
            /* a lane's starts and ends never decrease */
            dev->first_start_ps = MIN(dev->first_start_ps, l->t[0].start_ps);
            dev->end_ps = MAX(dev->end_ps, l->t[l->len - 1].end_ps);
        }
        if (dev->first_start_ps == G_MAXINT64)
            dev->first_start_ps = 0;
        res->makespan_ps = MAX(res->makespan_ps, dev->end_ps);
    }
    for (int d = 0; d < p; d++) {
        const Lane *l = &f->lanes[2 * d];
        PpsimDeviceResult *dev = &res->devices[d];
        dev->busy_ps = l->busy;
        dev->recompute_ps = l->recompute;
        dev->bubble_recompute_ps = l->bubble_recompute;
        dev->idle_warmup_ps = l->warmup;
        dev->idle_wait_ps = l->wait;
        dev->idle_transfer_ps = l->transfer;
        dev->bubble_offload_ps = l->offload;
        dev->idle_cooldown_ps = res->makespan_ps - l->prev_gpu;
    }
}

SimFastOutcome
ppsim_sim_fast(Replay *r, PpsimRunResult *res, GError **error)
{
    gint64 t0 = g_get_monotonic_time();
    const PpsimSchedule *sched = r->sched;
    int p = sched->n_devices, S = sched->n_stages;
    g_assert(r->costs->explicit_mode && !r->has_cpu_opt);
    ppsim_sim_collect_init(r, res);
    ppsim_sim_collect_timing_arrays(r, res);
    Fast f = {.r = r,
              .res = res,
              .lanes = g_new0(Lane, 2 * p),
              .resume = g_new0(Resume, 2 * p),
              .deps = g_new(PpsimDep, ppsim_schedule_index_max_deps(r->idx)),
              .pools = g_new(PpsimPoolStats, p + 1),
              .tag_current = g_new0(gint64, MAX(S, 1)),
              .tag_peak = g_new0(gint64, MAX(S, 1)),
              .p2p_ps = r->costs->p2p_latency_ps,
              .n_stages = S};
    fast_tables(&f);
    g_autofree gint64 *static_mem = ppsim_sim_static_memory(r);
    for (int d = 0; d < p; d++) {
        f.pools[d] = ppsim_pool_stats_init(r->costs->memory_limit);
        ppsim_pool_stats_set_base(&f.pools[d], PPSIM_MEM_STATIC,
                                  static_mem[d] + r->costs->memory_fixed);
    }
    f.pools[p] = ppsim_pool_stats_init(0); /* explicit mode: the host has no limit */
    for (int d = 0; d < p; d++)
        for (int list = 0; list < 2; list++) {
            const GArray *ops = list == 0 ? sched->compute[d] : sched->copy[d];
            GArray *timing = (list == 0 ? res->compute_timing : res->copy_timing)[d];
            f.lanes[2 * d + list] = (Lane){.ops = (const PpsimOp *)(gconstpointer)ops->data,
                                           .t = (PpsimOpTiming *)(gpointer)timing->data,
                                           .len = ops->len,
                                           .base = ppsim_schedule_index_base(r->idx, d, list),
                                           .device = d,
                                           .list = list,
                                           .waiters = -1,
                                           .next_waiter = -1};
        }
    gboolean any_copy_memory = FALSE;
    for (int d = 0; d < p; d++) {
        f.lanes[2 * d].mem_inline = !fast_lane_moves_memory(&f.lanes[2 * d + 1]);
        any_copy_memory |= !f.lanes[2 * d].mem_inline;
    }
    gint64 t1 = g_get_monotonic_time();
    SimFastOutcome outcome = SIM_FAST_DONE;
    if (!fast_pass(&f, 2 * p)) {
        /* a cyclic wait: the checker names the op (a pass that cannot finish means one) */
        outcome = ppsim_schedule_validate_acyclic(sched, r->idx, error) ? SIM_FAST_DECLINED
                                                                        : SIM_FAST_FAILED;
    }
    gint64 t2 = g_get_monotonic_time();
    for (int d = 0; d < p && outcome == SIM_FAST_DONE; d++)
        if (!f.lanes[2 * d].mem_inline && !fast_device_memory(&f, d))
            outcome = SIM_FAST_DECLINED;
    if (outcome == SIM_FAST_DONE && any_copy_memory && !fast_host_memory(&f, p))
        outcome = SIM_FAST_DECLINED;
    if (outcome == SIM_FAST_DONE) {
        fast_device_times(&f, p);
        ppsim_sim_collect_parallel(r, res);
        ppsim_sim_collect_finish(r, res, f.pools, f.tag_peak);
        res->one_pass = TRUE;
        res->time_build_us = t1 - t0;
        res->time_replay_us = t2 - t1;
        res->time_metrics_us = g_get_monotonic_time() - t2;
    }
    g_free(f.lanes);
    g_free(f.resume);
    g_free(f.deps);
    g_free(f.pools);
    g_free(f.tag_current);
    g_free(f.tag_peak);
    g_free(f.duration);
    g_free(f.effects);
    return outcome;
}
