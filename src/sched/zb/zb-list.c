/* zb-list.c: list scheduling of B/W-split pipelines under a memory cap, as [ZB] §3 builds
 * its automatic schedules: each device, when free, runs the ready B with the earliest
 * arrival; else a ready F that fits under its memory cap (its later stage first, so
 * microbatches reach the loss early; an earlier-stage F keeps room for its partner's); else
 * its oldest pending W; else it waits for the next arrival. W passes thus fill what would be
 * bubbles. Works on the generator's cost estimates only. Used by the automatic `zb`
 * (zb-auto.c) as one candidate per working cap; it still handles two stages per device.
 *
 * Alone it is not [ZB] §3's scheduler: on one stage per device with [ZB] Table 5's costs it
 * gives bubble rates 0.2115 (cap p) and 0.1206 (cap 2p) at M_W = M_B, 0.2062 and 0.0936 at
 * M_W = 0.3664 M_B, against the paper's 0.1585 (ZB-1p) and 0.0433 (ZB-2p); zb-auto.c's
 * microbatch-by-microbatch builder does better there, this one when the cap is below p.
 */
#include "sched/zb/zb-list.h"
#include "util/ppsim-error.h"

#include <string.h>

typedef struct {
    int p, m, S;
    const PpsimSchedule *sched; /* for the stage map */
    int (*stages)[2];           /* [p] the device's stages, later one first; -1 = none */
    const PpsimCostEstimates *c;
    PpsimTime *f_ready, *b_ready; /* [S * m] arrival of the op's input; -1 unknown */
    int *next_f, *next_b;         /* [S] next microbatch per stage, in order */
    int *wq, *wq_head, *wq_n;     /* [p][2m] pending W keys (stage * m + mb), a ring */
    gint64 *mem, *limit;          /* [p] in-flight memory units, and the cap per device */
} ZbList;

static int
zbl_device(const ZbList *z, int s)
{
    return z->sched->stage_device[s];
}

static PpsimTime
zbl_arrival(const ZbList *z, int from_stage, int to_stage, PpsimTime end)
{
    return zbl_device(z, from_stage) == zbl_device(z, to_stage) ? end : end + z->c->comm_ps;
}

/* Picks the op device @d runs at time @t; returns its kind, or -1 when nothing is ready
 * (then *@wake is the next time something becomes ready, or -1). */
static int
zbl_pick(ZbList *z, int d, PpsimTime t, int *stage, PpsimTime *wake)
{
    const int *stages = z->stages[d]; /* later stage first */
    PpsimTime best = -1;
    *wake = -1;
    for (int k = 0; k < 2 && stages[k] >= 0; k++) { /* B: earliest arrival */
        int s = stages[k], j = z->next_b[s];
        if (j >= z->m || z->b_ready[s * z->m + j] < 0)
            continue;
        PpsimTime r = z->b_ready[s * z->m + j];
        if (r <= t && (best < 0 || r < best))
            best = r, *stage = s;
        else if (r > t && (*wake < 0 || r < *wake))
            *wake = r;
    }
    if (best >= 0)
        return PPSIM_OP_B;
    for (int k = 0; k < 2 && stages[k] >= 0; k++) { /* F under the memory cap */
        int s = stages[k], j = z->next_f[s];
        if (j >= z->m || z->f_ready[s * z->m + j] < 0)
            continue;
        PpsimTime r = z->f_ready[s * z->m + j];
        /* a first-chunk F keeps room for its second-chunk F, which leads to the loss and
         * so to the Bs that free memory: without it a low cap can starve itself */
        int partner = stages[0] != s ? stages[0] : -1;
        gint64 need = z->c->stage[s].act + (partner >= 0 ? z->c->stage[partner].act : 0);
        if (r <= t && z->mem[d] + need <= z->limit[d]) {
            *stage = s;
            return PPSIM_OP_F;
        }
        if (r > t && (*wake < 0 || r < *wake))
            *wake = r;
    }
    if (z->wq_n[d] > 0)
        return PPSIM_OP_W;
    return -1;
}

static void
zbl_execute(ZbList *z, PpsimSchedule *sched, int d, int kind, int s, PpsimTime t, PpsimTime *end)
{
    const PpsimStageEstimate *st;
    int j;
    if (kind == PPSIM_OP_W) {
        int key = z->wq[d * 2 * z->m + z->wq_head[d]];
        z->wq_head[d] = (z->wq_head[d] + 1) % (2 * z->m);
        z->wq_n[d]--;
        s = key / z->m;
        j = key % z->m;
        st = &z->c->stage[s];
        *end = t + st->w_ps;
        z->mem[d] -= st->act_w;
    } else if (kind == PPSIM_OP_F) {
        j = z->next_f[s]++;
        st = &z->c->stage[s];
        *end = t + st->f_ps;
        z->mem[d] += st->act;
        if (s + 1 < z->S)
            z->f_ready[(s + 1) * z->m + j] = zbl_arrival(z, s, s + 1, *end);
        else
            z->b_ready[s * z->m + j] = *end; /* the loss is on this device */
    } else {
        j = z->next_b[s]++;
        st = &z->c->stage[s];
        *end = t + st->b_ps;
        z->mem[d] -= st->act - st->act_w;
        if (s > 0)
            z->b_ready[(s - 1) * z->m + j] = zbl_arrival(z, s, s - 1, *end);
        z->wq[d * 2 * z->m + (z->wq_head[d] + z->wq_n[d]++) % (2 * z->m)] = s * z->m + j;
    }
    ppsim_schedule_push(sched, d, kind, s, j);
}

/* The device that receives the input the op just run on @s produced, and when; -1 if none
 * (the loss stays on its device). */
static int
zbl_receiver(const ZbList *z, int kind, int s, PpsimTime *arrival)
{
    if (kind == PPSIM_OP_F && s + 1 < z->S) {
        *arrival = z->f_ready[(s + 1) * z->m + z->next_f[s] - 1];
        return zbl_device(z, s + 1);
    }
    if (kind == PPSIM_OP_B && s > 0) {
        *arrival = z->b_ready[(s - 1) * z->m + z->next_b[s] - 1];
        return zbl_device(z, s - 1);
    }
    return -1;
}

/* The devices with ops left, by (free time, id): a tournament tree over @n leaves (a power of
 * two), node i holding the better of its children, -1 for none. */
typedef struct {
    int n;
    int *node; /* [2 n] */
    const PpsimTime *key;
    const int *left;
} ZblTree;

static int
zbl_better(const ZblTree *t, int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return t->key[b] < t->key[a] || (t->key[b] == t->key[a] && b < a) ? b : a;
}

static void
zbl_tree_update(ZblTree *t, int d)
{
    int i = t->n + d;
    t->node[i] = t->left[d] > 0 ? d : -1;
    for (i /= 2; i >= 1; i /= 2)
        t->node[i] = zbl_better(t, t->node[2 * i], t->node[2 * i + 1]);
}

/* Event loop over devices: the one free earliest decides next (ties: lowest id). A device
 * with nothing to run idles until its next known input arrives, or until an op run elsewhere
 * sends it an earlier one (inputs only come from other devices' ops; memory only changes
 * with the device's own). */
static gboolean
zbl_run(ZbList *z, PpsimSchedule *sched, GError **error)
{
    const PpsimTime never = G_MAXINT64;
    g_autofree PpsimTime *free_at = g_new0(PpsimTime, z->p);
    g_autofree PpsimTime *idle_since = g_new(PpsimTime, z->p); /* -1: not idle */
    g_autofree int *left = g_new(int, z->p);                   /* ops still to place */
    for (int d = 0; d < z->p; d++) {
        left[d] = 3 * z->m * (z->stages[d][1] >= 0 ? 2 : 1);
        idle_since[d] = -1;
    }
    ZblTree tree = {.n = 1, .key = free_at, .left = left};
    while (tree.n < z->p)
        tree.n *= 2;
    g_autofree int *node = g_new(int, 2 * tree.n);
    tree.node = node;
    for (int i = 0; i < 2 * tree.n; i++)
        node[i] = -1;
    for (int d = 0; d < z->p; d++)
        zbl_tree_update(&tree, d);
    for (;;) {
        int d = node[1];
        if (d < 0)
            return TRUE;
        if (free_at[d] == never) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "memory_limit is too small to make progress");
            return FALSE;
        }
        int s = -1;
        PpsimTime wake, end, arrival = 0;
        int kind = zbl_pick(z, d, free_at[d], &s, &wake);
        if (kind < 0) {
            idle_since[d] = free_at[d];
            free_at[d] = wake >= 0 ? wake : never;
            zbl_tree_update(&tree, d);
            continue;
        }
        zbl_execute(z, sched, d, kind, s, free_at[d], &end);
        free_at[d] = end;
        idle_since[d] = -1;
        left[d]--;
        zbl_tree_update(&tree, d);
        int to = zbl_receiver(z, kind, s, &arrival);
        if (to >= 0 && to != d && idle_since[to] >= 0 && arrival < free_at[to]) {
            free_at[to] = MAX(arrival, idle_since[to]);
            zbl_tree_update(&tree, to);
        }
    }
}

gboolean
ppsim_zb_list_schedule(PpsimSchedule *sched, int m, const PpsimCostEstimates *costs,
                       const gint64 *limit, GError **error)
{
    int p = sched->n_devices, S = sched->n_stages;
    ZbList z = {.p = p, .m = m, .S = S, .c = costs, .sched = sched};
    z.stages = g_malloc_n(p, sizeof(int[2]));
    for (int d = 0; d < p; d++)
        z.stages[d][0] = z.stages[d][1] = -1;
    for (int s = S - 1; s >= 0; s--) { /* later stage first */
        int d = sched->stage_device[s];
        z.stages[d][z.stages[d][0] < 0 ? 0 : 1] = s;
    }
    z.f_ready = g_new(PpsimTime, S * m);
    z.b_ready = g_new(PpsimTime, S * m);
    for (int i = 0; i < S * m; i++) {
        z.f_ready[i] = i < m ? 0 : -1; /* stage 0 inputs are there from the start */
        z.b_ready[i] = -1;
    }
    z.next_f = g_new0(int, S);
    z.next_b = g_new0(int, S);
    z.wq = g_new(int, 2 * p * m);
    z.wq_head = g_new0(int, p);
    z.wq_n = g_new0(int, p);
    z.mem = g_new0(gint64, p);
    z.limit = g_memdup2(limit, p * sizeof(gint64));
    for (int d = 0; d < p; d++) /* room for every op the device gets */
        g_array_set_size(sched->compute[d],
                         sched->compute[d]->len + 3 * m * (z.stages[d][1] >= 0 ? 2 : 1)),
            g_array_set_size(sched->compute[d], 0);
    gboolean ok = zbl_run(&z, sched, error);
    g_free(z.wq);
    g_free(z.wq_head);
    g_free(z.wq_n);
    g_free(z.f_ready);
    g_free(z.b_ready);
    g_free(z.next_f);
    g_free(z.next_b);
    g_free(z.mem);
    g_free(z.limit);
    g_free(z.stages);
    return ok;
}
