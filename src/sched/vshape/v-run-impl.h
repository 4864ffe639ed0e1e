/* v-run-impl.h: the state of one candidate simulation of v-run.c and the op choice of
 * v-pick.c (internal to those two files). */
#pragma once

#include "sched/vshape/v-run.h"

/* The workspace of ppsim_vrun: allocated once for (p, m) and reset by each run. */
struct PpsimVWork {
    int p, m, S, mode, bpref;
    gboolean reserve;
    int cycle, warm_a, warm_b;
    int *last;    /* [p] kind of the device's last op, -1 */
    int *last_fb; /* [p] kind of its last F or B, -1 */
    const PpsimCostEstimates *c;
    const gint64 *limit;
    const PpsimSchedule *tpl; /* template (VS_TEMPLATE, VS_STRICT) */
    PpsimSchedule *out;
    int (*stages)[2];             /* [p] later stage first */
    PpsimTime *f_ready, *b_ready; /* [S m] arrival of the op's input; -1 unknown */
    int *next_f, *next_b;         /* [S] next microbatch per stage (free mode) */
    int **fseq, **bseq;           /* [p] template F / B keys in order (template mode) */
    int *nf, *nb, *fpos, *bpos;   /* [p] */
    int *spos;                    /* [p] position in the template (strict mode) */
    int *f_slot, *b_slot;         /* [S m] the op's position in its device's template */
    gboolean *f_done;             /* [S m] */
    int *wq, *wq_head, *wq_tail;  /* [p][2m+1] pending W keys, a ring */
    gint64 *mem, *peak;           /* [p] */
    int *n_ops;                   /* [p] ops in out->compute[d] so far */
    /* [p] a device that found nothing to run finds nothing again, with the same wake-up,
     * until its own state or its stages' inputs change (@clean cleared) or the time reaches
     * the earliest input arrival it knows of (@recheck, -1 none) */
    gboolean *clean;
    PpsimTime *cwake, *recheck;
    PpsimTime makespan;
    PpsimTime idle;       /* sum over devices of end - first start - busy */
    PpsimTime bound;      /* give up once the makespan exceeds it; 0 = never */
    PpsimSchedule *spare; /* a schedule with room for 6 m ops per device, or NULL */
    gint64 spent;         /* ops simulated by every run so far */
    gint64 waits;         /* times a device had nothing to run, every run so far */
    /* [p] scratch of the event loop */
    PpsimTime *free_at, *first, *busy, *work;
    int *left;
};
typedef struct PpsimVWork VRun;

static inline int
vs_device(const VRun *r, int s)
{
    return s < r->p ? s : r->S - 1 - s;
}

static inline PpsimTime
vs_arrival(const VRun *r, int from, int to, PpsimTime end)
{
    return vs_device(r, from) == vs_device(r, to) ? end : end + r->c->comm_ps;
}

static inline gboolean
vs_fits(const VRun *r, int d, int s)
{
    gint64 need = r->c->stage[s].act;
    if (r->mode == VS_FREE && r->reserve && s == d) /* keep room for a second-chunk F */
        need += r->c->stage[r->S - 1 - d].act;
    if (r->mode == VS_FREE && s == d && r->next_f[r->S - 1 - d] == 0) /* warm-up reserve */
        need += (r->warm_a * d + r->warm_b) * r->c->stage[r->S - 1 - d].act;
    return r->mem[d] + need <= r->limit[d];
}

static inline void
vs_wake(PpsimTime *wake, PpsimTime at)
{
    if (at >= 0 && (*wake < 0 || at < *wake))
        *wake = at;
}

static inline int
vs_pop_w(VRun *r, int d, int *key)
{
    if (r->wq_head[d] == r->wq_tail[d])
        return -1;
    *key = r->wq[d * (2 * r->m + 1) + r->wq_head[d]];
    return PPSIM_OP_W;
}

/* Device @d's next op at time @t as (kind, key = stage m + microbatch), or -1 with *@wake
 * the next time one of its candidates' inputs arrives (-1: unknown). (v-pick.c) */
int ppsim_vrun_pick(VRun *r, int d, PpsimTime t, int *key, PpsimTime *wake);
