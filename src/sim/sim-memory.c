/* sim-memory.c: the replay's memory: each op's allocations and frees (the memory rules of
 * src/README.md "Semantics"), and the static memory of each device, less what T-Offload
 * keeps on the host and the second copy of the word embedding a V-shape's first device
 * would hold (see sim-internal.h). */
#include "sim-internal.h"
#include "schedule/schedule-index.h"
#include "hw/exec.h"

void
ppsim_sim_mem_plan(const Replay *r, int s, int j, MemPlan *m)
{
    const PpsimStageCost *st = &r->costs->stage[s];
    const PpsimScheduleIndex *x = r->idx;
    m->d = r->sched->stage_device[s];
    m->host = r->sched->n_devices + ppsim_sim_node_of(r, m->d);
    m->rc = ppsim_schedule_index_find(x, PPSIM_OP_R, s, j);
    m->off = ppsim_schedule_index_find(x, PPSIM_OP_OFF, s, j);
    m->rl = ppsim_schedule_index_find(x, PPSIM_OP_RL, s, j);
    m->A = st->est.act;
    m->logits = st->logits_grad_mem;
    m->keep = m->rc >= 0 ? MIN(st->act_ckpt, m->A) : m->A;
    if (m->rc >= 0) { /* a partial R recomputes its share of what the checkpoint omits */
        guint16 share = ppsim_schedule_index_op(x, (guint32)m->rc)->share;
        if (share != 0)
            m->keep = m->A - (m->A - m->keep) * share / 100;
    }
    m->act = m->keep;
    m->buf = 0;
    m->offloaded = m->off >= 0 && m->rl >= 0;
    if (m->offloaded) {
        m->buf = m->act;
        m->act = 0;
    }
    if (m->rc >= 0)
        m->buf += m->A - m->keep;
    m->free_b = MAX(0, (m->act + m->buf) - st->est.act_w);
    m->from_buf = MIN(m->buf, m->free_b);
}

/* One memory change, unless nothing changes. */
static void
effect(SimMemEffects *out, PpsimMemWhen when, int pool, int tag, PpsimMemCategory cat, gint64 delta)
{
    if (delta != 0)
        out->e[out->n++] = (SimMemEffect){when, pool, tag, cat, delta};
}

void
ppsim_sim_mem_effects(const Replay *r, const PpsimOp *op, SimMemEffects *out)
{
    out->n = 0;
    if (ppsim_op_kind_per_stage(op->kind))
        return;
    int s = op->stage;
    MemPlan m;
    ppsim_sim_mem_plan(r, s, op->microbatch, &m);
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        effect(out, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_ACTIVATION, m.A);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, m.keep - m.A);
        break;
    case PPSIM_OP_OFF:
        if (m.offloaded) {
            effect(out, PPSIM_MEM_AT_START, m.host, -1, PPSIM_MEM_ACTIVATION, m.keep);
            effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, -m.keep);
        }
        break;
    case PPSIM_OP_RL:
        if (m.offloaded) {
            effect(out, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_BUFFER, m.keep);
            effect(out, PPSIM_MEM_AT_END, m.host, -1, PPSIM_MEM_ACTIVATION, -m.keep);
        }
        break;
    case PPSIM_OP_R:
        effect(out, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_BUFFER, m.A - m.keep);
        break;
    case PPSIM_OP_BW:
        /* the loss's backward writes the logits' gradient while it runs (memory.h) */
        effect(out, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_WORKSPACE, m.logits);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_WORKSPACE, -m.logits);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_BUFFER, -m.buf);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, -m.act);
        break;
    case PPSIM_OP_B:
        effect(out, PPSIM_MEM_AT_START, m.d, s, PPSIM_MEM_WORKSPACE, m.logits);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_WORKSPACE, -m.logits);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_BUFFER, -m.from_buf);
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION, -(m.free_b - m.from_buf));
        break;
    case PPSIM_OP_W:
        /* with a BW for this microbatch, W does not exist (the checker's rule) */
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_BUFFER, -(m.buf - m.from_buf));
        effect(out, PPSIM_MEM_AT_END, m.d, s, PPSIM_MEM_ACTIVATION,
               -(m.act - (m.free_b - m.from_buf)));
        break;
    default:
        break;
    }
}

/* T-Offload ([TP] §5): a stage whose optimizer step runs on a CPU worker keeps on the GPU
 * only its 16-bit gradients and its weights at the bits its WRL brings back; the rest of
 * training.bytes_per_param (fp32 master weights and Adam's two moments, [ZERO] §3.1) lives
 * in host memory, which the node's pool holds as static memory (for every GPU of the TP
 * group on the node). */
void
ppsim_sim_static_saved(Replay *r)
{
    const PpsimSchedule *sched = r->sched;
    int p = sched->n_devices, nodes = r->topo ? r->topo->n_nodes : 1;
    r->static_saved = g_new0(gint64, p);
    r->host_static = g_new0(gint64, nodes);
    r->cpu_first = g_new0(int, sched->n_stages);
    r->cpu_count = g_new0(int, sched->n_stages);
    if (!r->has_cpu_opt)
        return;
    gint64 *host = r->host_static;
    int *on_node = g_new0(int, nodes), *rank = g_new0(int, nodes);
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < sched->n_stages; s++) {
            gint64 opt = ppsim_schedule_index_find(r->idx, PPSIM_OP_OPT, s, -1);
            if (opt < 0 ||
                !(ppsim_schedule_index_op(r->idx, (guint32)opt)->flags & PPSIM_OP_FLAG_CPU))
                continue;
            int n = ppsim_sim_node_of(r, sched->stage_device[s]);
            if (pass == 0) {
                on_node[n]++;
                continue;
            }
            /* the node's workers split evenly over its CPU steps (a multithreaded CPU
             * Adam, [DS-PR735]); with fewer workers than steps, steps share one */
            r->cpu_count[s] = MAX(1, r->n_cpu_workers / on_node[n]);
            r->cpu_first[s] = (rank[n]++ * r->cpu_count[s]) % r->n_cpu_workers;
        }
    g_free(on_node);
    g_free(rank);
    for (int s = 0; s < sched->n_stages; s++) {
        if (r->cpu_count[s] == 0)
            continue;
        const PpsimStageCost *st = &r->costs->stage[s];
        gint64 wrl = ppsim_schedule_index_find(r->idx, PPSIM_OP_WRL, s, -1);
        int bits =
            wrl >= 0 ? ppsim_sim_weight_bits(ppsim_schedule_index_op(r->idx, (guint32)wrl)) : 16;
        /* the gradients stay (their buffer fills during the backward) and the weights come
         * back at @bits */
        double kept = st->grads_mem + st->params * bits / 8.0;
        gint64 saved = MAX(0, st->static_mem - ppsim_round_clamped(kept));
        int d = sched->stage_device[s];
        r->static_saved[d] += saved;
        host[ppsim_sim_node_of(r, d)] += ppsim_mul_clamped(
            ppsim_sim_tp_on_node(r), st->static_mem - ppsim_round_clamped(st->params * 2.0));
    }
}

void
ppsim_sim_shared_copy(const Replay *r, int d, double *w, double *g, double *o)
{
    *w = *g = *o = 0.0;
    int firsts = 0, copies = 0;
    const PpsimStageCost *copy = NULL;
    for (int s = 0; s < r->sched->n_stages; s++) {
        const PpsimStageCost *st = &r->costs->stage[s];
        if (r->sched->stage_device[s] != d)
            continue;
        firsts += st->has_embedding ? 1 : 0;
        /* (a stage whose optimizer step T-Offload runs on the CPU keeps its own count) */
        gboolean on_cpu = r->cpu_count != NULL && r->cpu_count[s] > 0;
        if (!on_cpu && st->copy_weights_mem + st->copy_grads_mem + st->copy_opt_mem > 0) {
            copies++;
            copy = st;
        }
    }
    double pairs = MIN(firsts, copies);
    if (copy == NULL || pairs == 0)
        return;
    *w = pairs * copy->copy_weights_mem;
    *g = pairs * copy->copy_grads_mem;
    *o = pairs * copy->copy_opt_mem;
}

gint64
ppsim_sim_device_static(const Replay *r, int d)
{
    double w, g, o;
    ppsim_sim_shared_copy(r, d, &w, &g, &o);
    gint64 bytes = -r->static_saved[d] - ppsim_round_clamped(w + g + o);
    for (int s = 0; s < r->sched->n_stages; s++)
        if (r->sched->stage_device[s] == d)
            bytes += r->costs->stage[s].static_mem;
    return bytes;
}

gint64 *
ppsim_sim_static_memory(const Replay *r)
{
    int p = r->sched->n_devices;
    gint64 *bytes = g_new(gint64, p);
    for (int d = 0; d < p; d++)
        bytes[d] = ppsim_sim_device_static(r, d);
    return bytes;
}
