/* dualpipe-steps.c: the step program of one device; see dualpipe.h. */
#include "sched/dualpipe/dualpipe.h"

typedef struct {
    PpsimSchedule *sched;
    const PpsimDualPipeDevice *dev;
    int next_f[2], next_b[2];
    GArray *wq; /* PpsimOp W waiting, in the order their B ran */
    guint wq_head;
} Prog;

static void
prog_forward(Prog *g, int ph, guint8 flags)
{
    int d = g->dev->device;
    PpsimOp op = {.kind = PPSIM_OP_F,
                  .flags = flags,
                  .stage = g->dev->stage[ph],
                  .microbatch = g->dev->mb_base[ph] + g->next_f[ph]++};
    ppsim_schedule_push_op(g->sched, d, op);
}

/* A backward of phase @ph: with @split a B whose W waits in the queue, else a full BW. */
static void
prog_backward(Prog *g, int ph, gboolean split, guint8 flags)
{
    int d = g->dev->device;
    PpsimOp op = {.kind = split ? PPSIM_OP_B : PPSIM_OP_BW,
                  .flags = flags,
                  .stage = g->dev->stage[ph],
                  .microbatch = g->dev->mb_base[ph] + g->next_b[ph]++};
    ppsim_schedule_push_op(g->sched, d, op);
    if (split) {
        op.kind = PPSIM_OP_W;
        g_array_append_val(g->wq, op);
    }
}

static void
prog_weight(Prog *g)
{
    g_assert(g->wq_head < g->wq->len);
    ppsim_schedule_push_op(g->sched, g->dev->device, g_array_index(g->wq, PpsimOp, g->wq_head++));
}

/* An F&B pair: the forward of phase @f_ph overlapped with the full backward of @b_ph. */
static void
prog_pair(Prog *g, int f_ph, int b_ph)
{
    prog_forward(g, f_ph, PPSIM_OP_FLAG_OVERLAP);
    prog_backward(g, b_ph, FALSE, PPSIM_OP_FLAG_OVERLAP);
}

void
ppsim_dualpipe_device_program(PpsimSchedule *sched, const PpsimDualPipeDevice *dev)
{
    int P = dev->half_ranks, h = dev->half_rank, n = dev->chunks;
    gboolean middle = h == P - 1;
    g_return_if_fail(n >= 2 * P - h);
    Prog g = {.sched = sched, .dev = dev, .wq = g_array_new(FALSE, FALSE, sizeof(PpsimOp))};
    for (int i = 0; i < 2 * (P - h - 1); i++) /* 1: warm-up forwards of phase 0 */
        prog_forward(&g, 0, 0);
    for (int i = 0; i < h + 1; i++) { /* 2: F0 F1 */
        prog_forward(&g, 0, 0);
        prog_forward(&g, 1, 0);
    }
    for (int i = 0; i < P - h - 1; i++) { /* 3: B1 W F1, the backward split */
        prog_backward(&g, 1, TRUE, 0);
        prog_weight(&g);
        prog_forward(&g, 1, 0);
    }
    for (int i = 0; i < n - 2 * P + h + 1; i++) { /* 4: the steady state, F&B pairs */
        if (i == 0 && middle) { /* not overlapped: the next device waits for this F0 */
            prog_forward(&g, 0, 0);
            prog_backward(&g, 1, FALSE, 0);
        } else {
            prog_pair(&g, 0, 1);
        }
        prog_pair(&g, 1, 0);
    }
    for (int i = 0; i < P - h - 1; i++) { /* 5: B1, F1&B0 */
        prog_backward(&g, 1, FALSE, 0);
        prog_pair(&g, 1, 0);
    }
    gboolean split = FALSE;
    for (int i = 0; i < h + 1; i++) { /* 6: B1 B0, the later half split */
        if (i == (h + 1) / 2 && h % 2 == 1)
            split = TRUE;
        prog_backward(&g, 1, split, 0);
        if (i == (h + 1) / 2 && h % 2 == 0)
            split = TRUE;
        prog_backward(&g, 0, split, 0);
    }
    for (int i = 0; i < P - h - 1; i++) { /* 7: W B0 */
        prog_weight(&g);
        prog_backward(&g, 0, TRUE, 0);
    }
    while (g.wq_head < g.wq->len) /* 8: the remaining W (h + 1 of them) */
        prog_weight(&g);
    g_assert(g.next_f[0] == n && g.next_f[1] == n && g.next_b[0] == n && g.next_b[1] == n);
    g_array_unref(g.wq);
}
