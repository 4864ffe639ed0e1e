/* v-run.c: one candidate V-shape schedule (v-sched.c), simulated on the generator's cost
 * estimates by an event loop with four ways of choosing a device's next op:
 *
 *   free      B first (earliest arrival, or one chunk's first), else a ready F that fits
 *             under the cap (the later stage first, so microbatches reach the loss early),
 *             else the oldest pending W (W fills what would be bubbles, [ZB] §3). With
 *             T_F = T_B = T_W this is ZB-V ([ZB] §6): the cap of 2p chunk activations stops
 *             the warm-up after 2p-1 forwards (the F of the first 1F-1B-1W group makes 2p),
 *             and with W holding memory after its B the cap then forces F, B, W in turn.
 *             "reserve": a first-chunk F also leaves room for one second-chunk F, so a low
 *             cap cannot fill a device with first chunks waiting for a loss that never comes;
 *             a warm-up reserve keeps room for a d + b second-chunk Fs on device d until its
 *             first one (as the reference implementation's ZB-V warm-up does). Variants: F,
 *             B, W in turn (the 1F-1B-1W groups), or B and F alternating with W only in the
 *             waits (vs_pick_alt), which copes better with p2p latency.
 *   template  forwards and backwards in a template's order (a [CM] building block, or a free
 *             run on uniform costs), each as soon as it is ready: B first, F if it fits, else
 *             W. With the cap at least the template's peak this cannot deadlock (every B the
 *             template ran before an F only needs earlier ops). Variant: until a device's
 *             first B, the other stage's next F may overtake if it leaves room for k copies of
 *             the one it overtakes (k = 1..min(p, 8) searched).
 *   strict    the template's order as is, as early as dependencies allow; its peak is the
 *             template's.
 *   slot      each stage in microbatch order, the two interleaved by template position.
 *
 * Deterministic.
 */
#include "sched/vshape/v-queue.h"
#include "sched/vshape/v-run-impl.h"

#include <string.h>

/* Runs op (@kind, @key) on device @d from @t; returns its end. */
static PpsimTime
vs_execute(VRun *r, int d, int kind, int key, PpsimTime t)
{
    int m = r->m, s = key / m, j = key % m;
    const PpsimStageEstimate *st = &r->c->stage[s];
    PpsimTime end;
    r->clean[d] = FALSE;
    if (kind == PPSIM_OP_F && s + 1 < r->S)
        r->clean[vs_device(r, s + 1)] = FALSE;
    else if (kind == PPSIM_OP_B && s > 0)
        r->clean[vs_device(r, s - 1)] = FALSE;
    if (kind == PPSIM_OP_F) {
        end = t + st->f_ps;
        r->mem[d] += st->act;
        r->peak[d] = MAX(r->peak[d], r->mem[d]);
        if (s + 1 < r->S)
            r->f_ready[key + m] = vs_arrival(r, s, s + 1, end);
        else
            r->b_ready[key] = end; /* the loss: B follows on the same device */
        r->next_f[s]++;
        r->f_done[key] = TRUE;
    } else if (kind == PPSIM_OP_B) {
        end = t + st->b_ps;
        r->mem[d] -= st->act - st->act_w;
        if (s > 0)
            r->b_ready[key - m] = vs_arrival(r, s, s - 1, end);
        r->next_b[s]++;
        r->bpos[d]++;
        r->wq[d * (2 * m + 1) + r->wq_tail[d]] = key;
        r->wq_tail[d] = (r->wq_tail[d] + 1) % (2 * m + 1);
    } else {
        end = t + st->w_ps;
        r->mem[d] -= st->act_w;
        if (r->mode != VS_STRICT) /* strict mode runs the template's W, not the queue's */
            r->wq_head[d] = (r->wq_head[d] + 1) % (2 * m + 1);
    }
    if (r->mode == VS_STRICT)
        r->spos[d]++;
    r->last[d] = kind;
    if (kind != PPSIM_OP_W)
        r->last_fb[d] = kind;
    /* the device's list has room for its 6 m ops (ppsim_vrun); ppsim_schedule_push's op */
    GArray *ops = r->out->compute[d];
    g_assert(r->n_ops[d] < (int)ops->len);
    g_array_index(ops, PpsimOp, r->n_ops[d]++) =
        (PpsimOp){.kind = kind, .stage = s, .microbatch = j};
    return end;
}

/* Device @d found nothing to run at @t: what ppsim_vrun_pick decides depends only on @t, the
 * device's own state and the arrival times of its stages' next F and B (other devices write
 * those), and changes with @t only once @t reaches one of those arrivals. */
static void
vs_remember_wait(VRun *r, int d, PpsimTime t, PpsimTime wake)
{
    PpsimTime at = -1;
    for (int i = 0; i < 2; i++) {
        int s = i == 0 ? d : r->S - 1 - d;
        if (r->next_f[s] < r->m && r->f_ready[s * r->m + r->next_f[s]] > t)
            vs_wake(&at, r->f_ready[s * r->m + r->next_f[s]]);
        if (r->next_b[s] < r->m && r->b_ready[s * r->m + r->next_b[s]] > t)
            vs_wake(&at, r->b_ready[s * r->m + r->next_b[s]]);
    }
    r->clean[d] = TRUE;
    r->cwake[d] = wake;
    r->recheck[d] = at;
}

/* Event loop: the free device with the earliest time decides next (ties: lowest id; the
 * order is kept by v-queue.h); a device with nothing to run waits for an arrival or for
 * another device to move on. FALSE when every device left is stuck (the cap admits no
 * progress); a stuck device is passed over until some device runs an op. */
static gboolean
vs_loop(VRun *r)
{
    int p = r->p;
    PpsimTime *free_at = r->free_at, *first = r->first, *busy = r->busy;
    PpsimTime *work = r->work; /* compute the device has left */
    int *left = r->left;
    for (int d = 0; d < p; d++) {
        free_at[d] = busy[d] = work[d] = 0;
        left[d] = 6 * r->m, first[d] = -1;
        for (int i = 0; i < 2; i++) {
            const PpsimStageEstimate *st = &r->c->stage[i == 0 ? d : r->S - 1 - d];
            work[d] += r->m * (st->f_ps + st->b_ps + st->w_ps);
        }
    }
    PpsimVQueue q;
    ppsim_vqueue_init(&q, free_at, p);
    r->makespan = r->idle = 0;
    gboolean ok = FALSE;
    for (;;) {
        int at = ppsim_vqueue_top(&q), d = at < 0 ? -1 : q.order[at];
        if (d < 0) {
            ok = q.n == 0;
            for (int e = 0; ok && e < p; e++)
                r->idle += free_at[e] - first[e] - busy[e];
            break;
        }
        int key = -1, kind = -1;
        PpsimTime wake = r->cwake[d];
        if (!r->clean[d] || (r->recheck[d] >= 0 && free_at[d] >= r->recheck[d])) {
            kind = ppsim_vrun_pick(r, d, free_at[d], &key, &wake);
            if (kind < 0)
                vs_remember_wait(r, d, free_at[d], wake);
        }
        if (kind >= 0) {
            if (first[d] < 0)
                first[d] = free_at[d];
            PpsimTime end = vs_execute(r, d, kind, key, free_at[d]);
            busy[d] += end - free_at[d];
            work[d] -= end - free_at[d];
            free_at[d] = end;
            r->makespan = MAX(r->makespan, free_at[d]);
            /* the device cannot end before free_at + the compute it has left: once that
             * passes the bound, the candidate cannot beat the best so far */
            if (r->bound > 0 && free_at[d] + work[d] > r->bound)
                break;
            if (--left[d] > 0)
                ppsim_vqueue_moved(&q, at);
            else
                ppsim_vqueue_remove(&q, at);
            ppsim_vqueue_unstick_all(&q);
            continue;
        }
        r->waits++;
        /* the next time anything may change for it: an input's arrival or another device
         * moving on (stuck ones included) */
        PpsimTime next = wake;
        vs_wake(&next, ppsim_vqueue_next_after_at(&q, at, free_at[d]));
        if (next >= 0) {
            free_at[d] = next;
            if (r->bound > 0 && free_at[d] + work[d] > r->bound)
                break;
            ppsim_vqueue_moved(&q, at);
        } else {
            ppsim_vqueue_set_stuck(&q, d);
        }
    }
    ppsim_vqueue_clear(&q);
    return ok;
}

PpsimVWork *
ppsim_vwork_new(int p, int m)
{
    int S = 2 * p;
    VRun *r = g_new0(VRun, 1);
    r->p = p, r->m = m, r->S = S;
    r->last = g_new(int, p);
    r->last_fb = g_new(int, p);
    r->n_ops = g_new(int, p);
    r->clean = g_new(gboolean, p);
    r->cwake = g_new(PpsimTime, p);
    r->recheck = g_new(PpsimTime, p);
    r->stages = g_malloc_n(p, sizeof(int[2]));
    for (int d = 0; d < p; d++)
        r->stages[d][0] = S - 1 - d, r->stages[d][1] = d;
    r->f_ready = g_new(PpsimTime, S * m);
    r->b_ready = g_new(PpsimTime, S * m);
    r->next_f = g_new(int, S);
    r->next_b = g_new(int, S);
    r->fseq = g_new(int *, p);
    r->bseq = g_new(int *, p);
    for (int d = 0; d < p; d++) /* a device's template holds 2 m Fs and 2 m Bs */
        r->fseq[d] = g_new(int, 2 * m), r->bseq[d] = g_new(int, 2 * m);
    r->nf = g_new(int, p);
    r->nb = g_new(int, p);
    r->fpos = g_new(int, p);
    r->bpos = g_new(int, p);
    r->spos = g_new(int, p);
    r->wq = g_new(int, p *(2 * m + 1));
    r->wq_head = g_new(int, p);
    r->wq_tail = g_new(int, p);
    r->mem = g_new(gint64, p);
    r->peak = g_new(gint64, p);
    r->f_slot = g_new(int, S *m);
    r->f_done = g_new(gboolean, S * m);
    r->b_slot = g_new(int, S *m);
    r->free_at = g_new(PpsimTime, p);
    r->first = g_new(PpsimTime, p);
    r->busy = g_new(PpsimTime, p);
    r->work = g_new(PpsimTime, p);
    r->left = g_new(int, p);
    return r;
}

void
ppsim_vwork_free(PpsimVWork *r)
{
    if (r == NULL)
        return;
    ppsim_schedule_free(r->spare);
    for (int d = 0; d < r->p; d++)
        g_free(r->fseq[d]), g_free(r->bseq[d]);
    g_free(r->fseq);
    g_free(r->bseq);
    g_free(r->n_ops);
    g_free(r->clean);
    g_free(r->cwake);
    g_free(r->recheck);
    g_free(r->nf);
    g_free(r->nb);
    g_free(r->fpos);
    g_free(r->bpos);
    g_free(r->spos);
    g_free(r->last);
    g_free(r->last_fb);
    g_free(r->f_slot);
    g_free(r->f_done);
    g_free(r->b_slot);
    g_free(r->wq);
    g_free(r->wq_head);
    g_free(r->wq_tail);
    g_free(r->mem);
    g_free(r->peak);
    g_free(r->next_f);
    g_free(r->next_b);
    g_free(r->f_ready);
    g_free(r->b_ready);
    g_free(r->stages);
    g_free(r->free_at);
    g_free(r->first);
    g_free(r->busy);
    g_free(r->work);
    g_free(r->left);
    g_free(r);
}

gint64
ppsim_vwork_spent(const PpsimVWork *w)
{
    return w->spent + w->waits / 2;
}

gint64
ppsim_vwork_waits(const PpsimVWork *w)
{
    return w->waits;
}

void
ppsim_vwork_recycle(PpsimVWork *w, PpsimSchedule *sched)
{
    if (sched == NULL)
        return;
    if (w->spare != NULL || sched->n_devices != w->p || sched->n_microbatches != w->m)
        ppsim_schedule_free(sched);
    else
        w->spare = sched;
}

gboolean
ppsim_vrun(PpsimVWork *r, VsPolicy pol, const PpsimCostEstimates *c, const gint64 *limit,
           const PpsimSchedule *tpl, PpsimTime bound, PpsimSchedule **out, gint64 *peak,
           PpsimTime *makespan, PpsimTime *idle)
{
    int p = r->p, m = r->m, S = r->S;
    r->mode = pol.mode;
    r->reserve = pol.reserve;
    r->bpref = pol.bpref;
    r->cycle = pol.cycle;
    r->warm_a = pol.warm_a;
    r->warm_b = pol.warm_b;
    r->c = c;
    r->limit = limit;
    r->tpl = tpl;
    r->bound = bound;
    if (r->spare == NULL) {
        r->spare = ppsim_schedule_new(p, S, m);
        ppsim_schedule_map_vshape(r->spare);
    }
    r->out = r->spare;
    r->spare = NULL;
    for (int d = 0; d < p; d++) {
        r->last[d] = r->last_fb[d] = -1;
        r->n_ops[d] = r->nf[d] = r->nb[d] = r->fpos[d] = r->bpos[d] = r->spos[d] = 0;
        r->wq_head[d] = r->wq_tail[d] = 0;
        r->mem[d] = r->peak[d] = 0;
        r->clean[d] = FALSE;
        g_array_set_size(r->out->compute[d], 6 * m); /* written in place, trimmed below */
    }
    for (int i = 0; i < S * m; i++)
        r->f_ready[i] = i < m ? 0 : -1, r->b_ready[i] = -1;
    memset(r->next_f, 0, S * sizeof(int));
    memset(r->next_b, 0, S * sizeof(int));
    memset(r->f_done, 0, S * m * sizeof(gboolean));
    if (tpl != NULL) {
        memset(r->f_slot, 0, S * m * sizeof(int));
        memset(r->b_slot, 0, S * m * sizeof(int));
        for (int d = 0; d < p; d++) {
            GArray *ops = tpl->compute[d];
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                int k = op->stage * m + op->microbatch;
                if (op->kind == PPSIM_OP_F)
                    r->fseq[d][r->nf[d]++] = k, r->f_slot[k] = (int)i;
                else if (op->kind == PPSIM_OP_B)
                    r->bseq[d][r->nb[d]++] = k, r->b_slot[k] = (int)i;
            }
        }
    }
    gboolean ok = vs_loop(r);
    for (int d = 0; d < p; d++) {
        g_array_set_size(r->out->compute[d], r->n_ops[d]);
        r->spent += r->n_ops[d];
    }
    for (int d = 0; ok && d < p; d++)
        ok = r->peak[d] <= limit[d];
    memcpy(peak, r->peak, p * sizeof(gint64));
    *makespan = r->makespan;
    *idle = r->idle;
    if (ok)
        *out = r->out;
    else
        r->spare = r->out;
    r->out = NULL;
    return ok;
}
