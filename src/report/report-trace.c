/* report-trace.c: Chrome / Perfetto Trace Event Format ("JSON Array/Object format") for one
 * replay. Timestamps are microseconds with 6 decimals, exact for integer picoseconds.
 * pid = device + 1 (compute tid 1, copy tid 2, CPU worker tid 3); links are pid p + 1 with
 * one thread per concurrent flow of each source endpoint (see trace_link_lanes).
 * Streamed: the buffer is flushed to the caller's writer every ~64 KiB.
 */
#include "report/report.h"
#include "util/fmt.h"

#include <stdlib.h>

#define TRACE_CHUNK (64 * 1024)

typedef struct {
    GString *buf;
    PpsimWriteFunc write;
    gpointer data;
    gboolean first;
    gboolean failed;
    GError **error;
} Trace;

static void
trace_flush(Trace *t, gboolean force)
{
    if (t->failed || (!force && t->buf->len < TRACE_CHUNK))
        return;
    if (t->buf->len > 0 && !t->write(t->buf->str, t->buf->len, t->data, t->error))
        t->failed = TRUE;
    g_string_truncate(t->buf, 0);
}

/* Starts one event object: writes the separator and "{". */
static GString *
trace_event(Trace *t)
{
    trace_flush(t, FALSE);
    g_string_append(t->buf, t->first ? "\n{" : ",\n{");
    t->first = FALSE;
    return t->buf;
}

static void
trace_us(GString *out, PpsimTime ps)
{
    /* ps -> us with 6 decimals, integer arithmetic */
    g_string_append_printf(out, "%" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT, ps / 1000000,
                           ps % 1000000);
}

/* Metadata of a process or thread (@what: "process" or "thread"): its name and its sort
 * index, "process_name"/"process_sort_index" or "thread_name"/"thread_sort_index". */
static void
trace_name(Trace *t, int pid, int tid, const char *what, const char *name, int sort)
{
    GString *o = trace_event(t);
    g_string_append_printf(
        o, "\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_name\",\"args\":{\"name\":", pid, tid,
        what);
    ppsim_fmt_json_string(o, name);
    g_string_append(o, "}}");
    o = trace_event(t);
    g_string_append_printf(o,
                           "\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_sort_index\","
                           "\"args\":{\"sort_index\":%d}}",
                           pid, tid, what, sort);
}

static void
trace_ops(Trace *t, const PpsimRunResult *res, int d, int list)
{
    GArray *ops = list == 0 ? res->schedule->compute[d] : res->schedule->copy[d];
    GArray *timing = list == 0 ? res->compute_timing[d] : res->copy_timing[d];
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        const PpsimOpTiming *tm = &g_array_index(timing, PpsimOpTiming, i);
        const char *kind = ppsim_op_kind_name(op->kind);
        GString *o = trace_event(t);
        /* a step on a host CPU worker (T-Offload) gets the device's third thread */
        int tid = (op->flags & PPSIM_OP_FLAG_CPU) ? 3 : list + 1;
        g_string_append_printf(o, "\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s", d + 1, tid,
                               kind);
        if (!ppsim_op_kind_per_stage(op->kind))
            g_string_append_printf(o, "%d", op->microbatch);
        /* "F3.s5": microbatch 3 on stage 5, so a slice says where it is without its args */
        g_string_append_printf(o, ".s%d", op->stage);
        /* the halves of an F&B pair (schedule.h PPSIM_OP_FLAG_OVERLAP): named so, and the
         * pair's whole span in the args */
        gboolean pair = (op->flags & PPSIM_OP_FLAG_OVERLAP) != 0;
        if (pair)
            g_string_append(o, " (F&B)");
        g_string_append_printf(o, "\",\"cat\":\"%s\",\"ts\":", kind);
        trace_us(o, tm->start_ps);
        g_string_append(o, ",\"dur\":");
        trace_us(o, tm->end_ps - tm->start_ps);
        g_string_append_printf(o,
                               ",\"args\":{\"kind\":\"%s\",\"stage\":%d,\"microbatch\":%d,"
                               "\"device\":%d",
                               kind, op->stage, op->microbatch, d);
        if (pair) {
            gboolean f_half = op->kind == PPSIM_OP_F;
            const PpsimOpTiming *other =
                &g_array_index(timing, PpsimOpTiming, f_half ? i + 1 : i - 1);
            const PpsimOp *mate = &g_array_index(ops, PpsimOp, f_half ? i + 1 : i - 1);
            g_string_append_printf(o,
                                   ",\"pair\":\"F&B\",\"pair_with\":\"%s s=%d mb=%d\","
                                   "\"pair_start_us\":",
                                   ppsim_op_kind_name(mate->kind), mate->stage, mate->microbatch);
            trace_us(o, f_half ? tm->start_ps : other->start_ps);
            g_string_append(o, ",\"pair_end_us\":");
            trace_us(o, f_half ? other->end_ps : tm->end_ps);
        }
        g_string_append(o, "}}");
    }
}

static void
trace_flow(Trace *t, guint64 id, int from_pid, int from_tid, PpsimTime from_ts, int to_pid,
           int to_tid, PpsimTime to_ts, const char *cat, guint64 bytes)
{
    GString *o = trace_event(t);
    g_string_append_printf(o,
                           "\"ph\":\"s\",\"id\":%" G_GUINT64_FORMAT
                           ",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"cat\":\"%s\",\"ts\":",
                           id, from_pid, from_tid, cat, cat);
    trace_us(o, from_ts);
    g_string_append_printf(o, ",\"args\":{\"bytes\":%" G_GUINT64_FORMAT "}}", bytes);
    o = trace_event(t);
    g_string_append_printf(o,
                           "\"ph\":\"f\",\"bp\":\"e\",\"id\":%" G_GUINT64_FORMAT
                           ",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"cat\":\"%s\",\"ts\":",
                           id, to_pid, to_tid, cat, cat);
    trace_us(o, to_ts);
    g_string_append(o, "}");
}

/* Arrows start inside the producer's slice (at its start) and end at the consumer's start,
 * so viewers bind them to the two ops. */
static void
trace_flows(Trace *t, const PpsimRunResult *res)
{
    guint64 id = 1;
    for (guint i = 0; res->transfers && i < res->transfers->len; i++) {
        const PpsimTransfer *x = &g_array_index(res->transfers, PpsimTransfer, i);
        GArray *ft = x->from_list == 0 ? res->compute_timing[x->from_device]
                                       : res->copy_timing[x->from_device];
        GArray *tt =
            x->to_list == 0 ? res->compute_timing[x->to_device] : res->copy_timing[x->to_device];
        trace_flow(t, id++, x->from_device + 1, x->from_list + 1,
                   g_array_index(ft, PpsimOpTiming, x->from_index).start_ps, x->to_device + 1,
                   x->to_list + 1, g_array_index(tt, PpsimOpTiming, x->to_index).start_ps,
                   "transfer", x->bytes);
    }
    for (int d = 0; d < res->p; d++) {
        GArray *ops = res->schedule->copy[d];
        /* (stage, microbatch) -> index of its RL in this copy list */
        g_autoptr(GHashTable) reload = g_hash_table_new(g_int64_hash, g_int64_equal);
        g_autofree gint64 *keys = g_new(gint64, MAX(ops->len, 1));
        for (guint k = 0; k < ops->len; k++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, k);
            keys[k] = (gint64)op->stage * res->m + op->microbatch;
            if (op->kind == PPSIM_OP_RL)
                g_hash_table_insert(reload, &keys[k], GUINT_TO_POINTER(k + 1));
        }
        for (guint i = 0; i < ops->len; i++) {
            if (g_array_index(ops, PpsimOp, i).kind != PPSIM_OP_OFF)
                continue;
            guint k = GPOINTER_TO_UINT(g_hash_table_lookup(reload, &keys[i]));
            if (k == 0)
                continue;
            trace_flow(t, id++, d + 1, 2,
                       g_array_index(res->copy_timing[d], PpsimOpTiming, i).start_ps, d + 1, 2,
                       g_array_index(res->copy_timing[d], PpsimOpTiming, k - 1).start_ps, "offload",
                       0);
        }
    }
}

static void
trace_counter(Trace *t, const PpsimRunResult *res, int d, PpsimTime ts, const gint64 *cur)
{
    GString *o = trace_event(t);
    g_string_append_printf(o, "\"ph\":\"C\",\"pid\":%d,\"name\":\"memory (%s)\",\"ts\":", d + 1,
                           res->memory_unit);
    trace_us(o, ts);
    g_string_append(o, ",\"args\":{\"activations\":");
    ppsim_fmt_mem(o, cur[PPSIM_MEM_ACTIVATION], res->mem_scale);
    g_string_append(o, ",\"static\":");
    ppsim_fmt_mem(o, cur[PPSIM_MEM_STATIC], res->mem_scale);
    g_string_append(o, ",\"buffers\":");
    ppsim_fmt_mem(o, cur[PPSIM_MEM_BUFFER], res->mem_scale);
    if (!res->explicit_mode) { /* hardware mode only, so explicit traces stay as they were */
        g_string_append(o, ",\"workspace\":");
        ppsim_fmt_mem(o, cur[PPSIM_MEM_WORKSPACE], res->mem_scale);
    }
    g_string_append(o, "}}");
    if (res->memory_limit > 0) {
        o = trace_event(t);
        g_string_append_printf(o,
                               "\"ph\":\"C\",\"pid\":%d,\"name\":\"memory limit\","
                               "\"ts\":",
                               d + 1);
        trace_us(o, ts);
        g_string_append(o, ",\"args\":{\"limit\":");
        ppsim_fmt_mem(o, res->memory_limit, res->mem_scale);
        g_string_append(o, "}}");
    }
}

/* One counter event per memory change of a device, carrying all three categories. */
static void
trace_counters(Trace *t, const PpsimRunResult *res)
{
    g_autofree gint64 *cur = g_new0(gint64, (gsize)res->p * PPSIM_MEM_N_CATEGORIES);
    for (int d = 0; d < res->p; d++) {
        cur[d * PPSIM_MEM_N_CATEGORIES + PPSIM_MEM_STATIC] = res->devices[d].static_memory;
        trace_counter(t, res, d, 0, &cur[d * PPSIM_MEM_N_CATEGORIES]);
    }
    for (guint i = 0; res->mem_samples && i < res->mem_samples->len; i++) {
        const PpsimMemSample *m = &g_array_index(res->mem_samples, PpsimMemSample, i);
        if (m->pool >= res->p)
            continue; /* host pools: not a device track */
        gint64 *c = &cur[m->pool * PPSIM_MEM_N_CATEGORIES];
        c[m->category] = m->value;
        trace_counter(t, res, m->pool, m->time_ps, c);
    }
}

static char *
trace_link_name(const PpsimRunResult *res, int src, int lane)
{
    int remote = src - res->p - res->n_hosts; /* a DP or EP peer (topology.h) */
    g_autofree char *who = src < res->p ? g_strdup_printf("gpu%d", src)
                           : remote < 0 ? g_strdup_printf("host%d", src - res->p)
                                        : g_strdup_printf("gpu%d's dp/ep peer", remote / 2);
    return lane == 0 ? g_strdup_printf("from %s", who)
                     : g_strdup_printf("from %s #%d", who, lane + 1);
}

typedef struct {
    gint32 src;
    PpsimTime start;
    guint index; /* in res->flows: ties keep record order */
} LinkKey;

static int
trace_link_cmp(const void *a, const void *b)
{
    const LinkKey *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Thread of each flow. Flows of one source run concurrently (several transfers share a link),
 * and slices that overlap on one thread are mis-nested by the viewers, so each source gets as
 * many threads ("lanes") as it has flows in flight at once: in order of start, a flow takes the
 * lowest lane free by then (greedy interval colouring, optimal for intervals). Sources in
 * ascending order get consecutive tids from 1; the threads are named here. */
static int *
trace_link_lanes(Trace *t, const PpsimRunResult *res, int pid)
{
    const GArray *flows = res->flows;
    g_autofree LinkKey *key = g_new(LinkKey, flows->len);
    for (guint i = 0; i < flows->len; i++) {
        const PpsimFlowRecord *f = &g_array_index(flows, PpsimFlowRecord, i);
        key[i] = (LinkKey){f->src, f->start_ps, i};
    }
    qsort(key, flows->len, sizeof(LinkKey), trace_link_cmp);
    int *tid = g_new(int, flows->len);
    g_autoptr(GArray) lane_end = g_array_new(FALSE, FALSE, sizeof(PpsimTime));
    int next_tid = 1;
    for (guint i = 0; i < flows->len;) {
        int src = g_array_index(flows, PpsimFlowRecord, key[i].index).src;
        g_array_set_size(lane_end, 0);
        guint j = i;
        for (; j < flows->len; j++) {
            const PpsimFlowRecord *f = &g_array_index(flows, PpsimFlowRecord, key[j].index);
            if (f->src != src)
                break;
            guint lane = 0;
            while (lane < lane_end->len && g_array_index(lane_end, PpsimTime, lane) > f->start_ps)
                lane++;
            if (lane == lane_end->len)
                g_array_append_val(lane_end, f->end_ps);
            else
                g_array_index(lane_end, PpsimTime, lane) = f->end_ps;
            tid[key[j].index] = next_tid + (int)lane;
        }
        for (guint lane = 0; lane < lane_end->len; lane++) {
            g_autofree char *name = trace_link_name(res, src, (int)lane);
            trace_name(t, pid, next_tid + (int)lane, "thread", name, next_tid + (int)lane);
        }
        next_tid += (int)lane_end->len;
        i = j;
    }
    return tid;
}

/* Link tracks: one slice per flow, on a lane of its source endpoint. */
static void
trace_links(Trace *t, const PpsimRunResult *res)
{
    if (res->flows == NULL || res->flows->len == 0)
        return;
    int pid = res->p + 1;
    trace_name(t, pid, 0, "process", "links", res->p + 1);
    g_autofree int *tid = trace_link_lanes(t, res, pid);
    for (guint i = 0; i < res->flows->len; i++) {
        const PpsimFlowRecord *f = &g_array_index(res->flows, PpsimFlowRecord, i);
        GString *o = trace_event(t);
        g_string_append_printf(o,
                               "\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%d->%d\","
                               "\"cat\":\"flow\",\"ts\":",
                               pid, tid[i], f->src, f->dst);
        trace_us(o, f->start_ps);
        g_string_append(o, ",\"dur\":");
        trace_us(o, f->end_ps - f->start_ps);
        g_string_append_printf(o, ",\"args\":{\"bytes\":%" G_GUINT64_FORMAT "}}", f->bytes);
    }
}

gboolean
ppsim_report_trace_write(const PpsimRunResult *res, PpsimWriteFunc write, gpointer user_data,
                         GError **error)
{
    Trace t = {.buf = g_string_sized_new(TRACE_CHUNK + 4096),
               .write = write,
               .data = user_data,
               .first = TRUE,
               .error = error};
    g_string_append(t.buf, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":");
    ppsim_fmt_json_string(t.buf, res->scenario);
    g_string_append(t.buf, ",\"schedule\":");
    ppsim_fmt_json_string(t.buf, res->label);
    g_string_append_printf(t.buf, ",\"memory_unit\":\"%s\"},\"traceEvents\":[", res->memory_unit);
    for (int d = 0; d < res->p; d++) {
        g_autofree char *name = g_strdup_printf("device %d", d);
        trace_name(&t, d + 1, 0, "process", name, d);
        trace_name(&t, d + 1, 1, "thread", "compute", 1);
        trace_name(&t, d + 1, 2, "thread", "copy", 2);
        for (guint i = 0; i < res->schedule->compute[d]->len; i++)
            if (g_array_index(res->schedule->compute[d], PpsimOp, i).flags & PPSIM_OP_FLAG_CPU) {
                trace_name(&t, d + 1, 3, "thread", "cpu worker", 3);
                break;
            }
        trace_ops(&t, res, d, 0);
        trace_ops(&t, res, d, 1);
    }
    trace_flows(&t, res);
    trace_counters(&t, res);
    trace_links(&t, res);
    g_string_append(t.buf, "\n]}\n");
    trace_flush(&t, TRUE);
    gboolean ok = !t.failed;
    g_string_free(t.buf, TRUE);
    return ok;
}
