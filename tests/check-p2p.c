/* check-p2p.c: blocking pipeline sends (parallel.p2p, src/README.md "How time is modelled"):
 * the executor's rendezvous flow against a hand-computed 1F1B timeline (p = 2, m = 2), the
 * replay's choice of gate and waiter, 1F1B without deadlock at several p and m, the default
 * unchanged byte for byte, and the clear errors where the mode is not modelled. */
#include "ppsim-test.h"
#include "hw/exec.h"
#include "report/report.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"

#include <string.h>

#define MS PPSIM_PS_PER_MS

/* 1F1B, p = 2, m = 2, on two GPUs of one node joined by 100 GB/s NVLink (duplex, no
 * latency): F = 1 ms, B = 2 ms (B and W together), each transfer 50 MB = t = 0.5 ms.
 * Device 0 runs F1 F2 B1 B2, device 1 F1 B1 F2 B2. Fills @start[8] (device 0's four ops,
 * then device 1's) and returns the makespan.
 *
 * Async (only the consumer waits): dev0 F1 0-1, F2 1-2; dev1 F1 1.5-2.5, B1 2.5-4.5, F2
 * 4.5-5.5 (its input arrived at 2.5), B2 5.5-7.5; dev0 B1 5-7 (gradient sent at 4.5), B2
 * 8-10: makespan 9 + 2t = 10 ms.
 *
 * Blocking (a send moves once the receiver ended the op before its consumer, and the
 * sender's next op waits for it): dev0 F1 0-1; its send has no gate (dev1's F1 is first) and
 * arrives at 1.5, so dev0 F2 1.5-2.5 and dev1 F1 1.5-2.5; dev1 B1 2.5-4.5; F2's send waits
 * for dev1's B1 (gate) and B1's gradient for dev0's F2 (gate, ended 2.5): both move 4.5-5;
 * dev0 B1 waits for its F2's send (waiter) and its input: 5-7; dev1 F2 likewise 5-6, B2 6-8;
 * B2's gradient moves at 8 (gate: dev0's B1 ended 7), dev0 B2 8.5-10.5: 9 + 3t = 10.5 ms. */
static PpsimTime
hand_1f1b(gboolean blocking, PpsimTime *start)
{
    PpsimHardware hw = {.gpus_per_node = 8, .nvlink_bytes_per_s = 100e9};
    g_autoptr(PpsimTopology) topo = ppsim_topology_new(&hw, 2);
    g_autoptr(PpsimExec) exec = ppsim_exec_new(topo, 1, 0);
    int s0 = ppsim_exec_add_stream(exec, "gpu0.compute");
    int s1 = ppsim_exec_add_stream(exec, "gpu1.compute");
    PpsimTime f = MS, b = 2 * MS;
    PpsimTaskId d0[4], d1[4];
    d0[0] = ppsim_exec_add_task(exec, s0, f); /* F1 */
    d0[1] = ppsim_exec_add_task(exec, s0, f); /* F2 */
    d0[2] = ppsim_exec_add_task(exec, s0, b); /* B1 */
    d0[3] = ppsim_exec_add_task(exec, s0, b); /* B2 */
    d1[0] = ppsim_exec_add_task(exec, s1, f); /* F1 */
    d1[1] = ppsim_exec_add_task(exec, s1, b); /* B1 */
    d1[2] = ppsim_exec_add_task(exec, s1, f); /* F2 */
    d1[3] = ppsim_exec_add_task(exec, s1, b); /* B2 */
    const guint64 bytes = 50000000;           /* 0.5 ms at 100 GB/s */
    /* (from, to, gate = op before `to` on its device, waiter = op after `from` on its) */
    PpsimTaskId flows[4][4] = {
        {d0[0], d1[0], PPSIM_EXEC_NO_TASK, d0[1]}, /* F1 -> */
        {d0[1], d1[2], d1[1], d0[2]},              /* F2 -> */
        {d1[1], d0[2], d0[1], d1[2]},              /* <- B1 */
        {d1[3], d0[3], d0[2], PPSIM_EXEC_NO_TASK}, /* <- B2 (device 1's last op) */
    };
    for (int i = 0; i < 4; i++) {
        int src = i < 2 ? 0 : 1;
        if (blocking)
            ppsim_exec_add_flow_dep_sync(exec, flows[i][0], flows[i][1], src, 1 - src, bytes,
                                         flows[i][2], flows[i][3]);
        else
            ppsim_exec_add_flow_dep(exec, flows[i][0], flows[i][1], src, 1 - src, bytes);
    }
    ppsim_exec_add_dep(exec, d1[0], d1[1], 0); /* the last stage's F before its B */
    ppsim_exec_add_dep(exec, d1[2], d1[3], 0);
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_exec_run(exec, NULL, NULL, &error));
    ppsim_assert_no_error(error);
    PpsimTime end = 0;
    for (int i = 0; i < 4; i++) {
        start[i] = ppsim_exec_task_start(exec, d0[i]);
        start[4 + i] = ppsim_exec_task_start(exec, d1[i]);
        end = MAX(end, MAX(ppsim_exec_task_end(exec, d0[i]), ppsim_exec_task_end(exec, d1[i])));
    }
    /* one dependency per flow, as with async flows: the API's numbering is unchanged */
    ck_assert_uint_eq(ppsim_exec_n_deps(exec), 6);
    ck_assert_int_eq(ppsim_exec_dep_arrival(exec, 1), blocking ? 5 * MS : 5 * MS / 2);
    return end;
}

START_TEST(test_hand_timeline)
{
    PpsimTime start[8];
    const PpsimTime h = MS / 2;
    /* async: dev0 F1 F2 B1 B2, dev1 F1 B1 F2 B2 (starts in half milliseconds) */
    const PpsimTime async_want[8] = {0, 2 * h, 10 * h, 16 * h, 3 * h, 5 * h, 9 * h, 11 * h};
    ck_assert_int_eq(hand_1f1b(FALSE, start), 10 * MS);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(start[i], async_want[i]);
    const PpsimTime blocking_want[8] = {0, 3 * h, 10 * h, 17 * h, 3 * h, 5 * h, 10 * h, 12 * h};
    ck_assert_int_eq(hand_1f1b(TRUE, start), 21 * h);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(start[i], blocking_want[i]);
}
END_TEST

/* A rendezvous whose gate never ends is a deadlock the executor names: the waiter is blocked
 * on its own send. */
START_TEST(test_waiter_deadlock_message)
{
    PpsimHardware hw = {.gpus_per_node = 8, .nvlink_bytes_per_s = 100e9};
    g_autoptr(PpsimTopology) topo = ppsim_topology_new(&hw, 2);
    g_autoptr(PpsimExec) exec = ppsim_exec_new(topo, 1, 0);
    int s0 = ppsim_exec_add_stream(exec, "gpu0.compute");
    int s1 = ppsim_exec_add_stream(exec, "gpu1.compute");
    PpsimTaskId a = ppsim_exec_add_task(exec, s0, MS), a2 = ppsim_exec_add_task(exec, s0, MS);
    PpsimTaskId b0 = ppsim_exec_add_task(exec, s1, MS), b1 = ppsim_exec_add_task(exec, s1, MS);
    /* a -> b1 may move only after b0, which waits for a2, which waits for the send */
    ppsim_exec_add_flow_dep_sync(exec, a, b1, 0, 1, 1000, b0, a2);
    ppsim_exec_add_flow_dep(exec, a2, b0, 0, 1, 1000);
    g_autoptr(GError) error = NULL;
    ck_assert(!ppsim_exec_run(exec, NULL, NULL, &error));
    ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_DEADLOCK);
    ck_assert_msg(strstr(error->message, "'task 1' on 'gpu0.compute' is blocked waiting for the "
                                         "send of 'task 0' to reach 'task 3'") != NULL,
                  "%s", error->message);
}
END_TEST

static const char hw_yaml[] = "name: p2p\n"
                              "hardware: {preset: dgx-a100-80gb, gpus_per_node: 1}\n"
                              "model: {layers: 16, hidden: 1024, heads: 16, seq_len: 1024}\n"
                              "training: {pp: 4, microbatches: 8}\n"
                              "schedule: 1f1b\n";

static PpsimScenario *
parse(const char *yaml, const char *const *sets, GError **error)
{
    return ppsim_scenario_parse(yaml, strlen(yaml), "test.yaml", ".", sets, error);
}

static PpsimRunResult *
run_first(const PpsimScenario *sc, GError **error)
{
    return ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), PPSIM_SIM_RECORD, error);
}

/* The direction an op's pipeline traffic runs: 1 forward, 2 backward, 0 neither. */
static int
direction(const PpsimOp *op)
{
    if (op->kind == PPSIM_OP_F)
        return 1;
    return op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW ? 2 : 0;
}

/* The index of the op @step ops away from @index in @ops with direction @dir (any when < 0),
 * or -1. */
static int
scan(const GArray *ops, int index, int step, int dir)
{
    for (int i = index + step; i >= 0 && i < (int)ops->len; i += step)
        if (dir < 0 || direction(&g_array_index(ops, PpsimOp, i)) == dir)
            return i;
    return -1;
}

/* Runs @sched of the hardware scenario at p, m, v, async and in @mode, and checks the mode's
 * waits on every transfer: it arrives no earlier than its receiver's op before the consumer
 * (blocking; overlapped: the receiver's previous op of the consumer's direction) ended, and
 * the sender's next op (of the producer's direction) starts no earlier than the arrival.
 * Also: never faster than async (but for a picosecond of rounding). Returns how much slower,
 * in ps. */
static PpsimTime
check_mode(const char *sched, int p, int m, int v, const char *mode)
{
    g_autofree char *pp = g_strdup_printf("training.pp=%d", p);
    g_autofree char *mm = g_strdup_printf("training.microbatches=%d", m);
    g_autofree char *vv = g_strdup_printf("training.chunks=%d", v);
    g_autofree char *ss = g_strdup_printf("schedule=%s", sched);
    g_autofree char *kk = g_strdup_printf("parallel.p2p=%s", mode);
    g_autofree char *layers = g_strdup_printf("model.layers=%d", 2 * p * v);
    const char *const async[] = {pp, mm, vv, ss, layers, NULL};
    const char *const sync[] = {pp, mm, vv, ss, layers, kk, NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sa = parse(hw_yaml, async, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) sb = parse(hw_yaml, sync, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) ra = run_first(sa, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) rb = run_first(sb, &error);
    ck_assert_msg(rb != NULL, "%s p=%d m=%d v=%d %s: %s", sched, p, m, v, mode,
                  error ? error->message : "");
    ck_assert_int_ge(rb->makespan_ps + 1, ra->makespan_ps); /* to a picosecond's rounding */
    gboolean overlapped = strcmp(mode, "overlapped") == 0;
    guint checked = 0;
    for (guint k = 0; k < rb->transfers->len; k++) {
        const PpsimTransfer *t = &g_array_index(rb->transfers, PpsimTransfer, k);
        ck_assert(t->from_list == 0 && t->to_list == 0);
        const GArray *ops_a = rb->schedule->compute[t->from_device];
        const GArray *ops_b = rb->schedule->compute[t->to_device];
        int dir_a = overlapped ? direction(&g_array_index(ops_a, PpsimOp, t->from_index)) : -1;
        int dir_b = overlapped ? direction(&g_array_index(ops_b, PpsimOp, t->to_index)) : -1;
        int next = scan(ops_a, t->from_index, +1, dir_a);
        int before = scan(ops_b, t->to_index, -1, dir_b);
        if (next >= 0) {
            ck_assert_int_ge(
                g_array_index(rb->compute_timing[t->from_device], PpsimOpTiming, next).start_ps,
                t->arrive_ps);
            checked++;
        }
        if (before >= 0)
            ck_assert_int_gt(
                t->arrive_ps,
                g_array_index(rb->compute_timing[t->to_device], PpsimOpTiming, before).end_ps);
    }
    ck_assert_uint_gt(checked, 0);
    return rb->makespan_ps - ra->makespan_ps;
}

/* One device a node (every send crosses the network). 1F1B runs without deadlock at several
 * p and m in both modes, and blocking costs time once there are two microbatches; the
 * interleaved schedule runs without deadlock when overlapped. */
START_TEST(test_modes_run)
{
    const int ps[] = {2, 3, 4, 8};
    for (guint i = 0; i < G_N_ELEMENTS(ps); i++)
        for (int m = 2; m <= 2 * ps[i] + 1; m += 3) {
            ck_assert_int_gt(check_mode("1f1b", ps[i], m, 1, "blocking"), 0);
            check_mode("1f1b", ps[i], m, 1, "overlapped");
        }
    const int ips[] = {2, 4};
    for (guint i = 0; i < G_N_ELEMENTS(ips); i++)
        for (int v = 2; v <= 3; v++)
            for (int m = ips[i]; m <= 3 * ips[i]; m += ips[i])
                check_mode("interleaved", ips[i], m, v, "overlapped");
}
END_TEST

/* Interleaved 1F1B (v > 1) does not pair its sends and receives op by op: under blocking it
 * deadlocks, and the run says which op waits for which send instead of hanging or
 * guessing. */
START_TEST(test_interleaved_blocking_deadlock)
{
    const char *const sets[] = {"training.pp=4",         "training.microbatches=8",
                                "training.chunks=2",     "schedule=interleaved",
                                "parallel.p2p=blocking", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(hw_yaml, sets, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res = run_first(sc, &error);
    ck_assert(res == NULL);
    ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_DEADLOCK);
    ck_assert_msg(strstr(error->message, "is blocked waiting for the send of") != NULL, "%s",
                  error->message);
}
END_TEST

/* The default is async, byte for byte: no key and `p2p: async` give the same JSON, and the
 * key alone is not a `parallel:` layout. */
START_TEST(test_default_is_async)
{
    const char *const async[] = {"parallel.p2p=async", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) plain = parse(hw_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(plain->parallel.p2p, PPSIM_P2P_ASYNC);
    g_autoptr(PpsimScenario) written = parse(hw_yaml, async, &error);
    ppsim_assert_no_error(error);
    /* the key alone writes no layout (which would add the 3D checks and report lines) */
    ck_assert(!plain->parallel.present && !written->parallel.present);
    const char *const with_tp[] = {"parallel.p2p=async", "parallel.tp=1", NULL};
    g_autoptr(PpsimScenario) layout = parse(hw_yaml, with_tp, &error);
    ppsim_assert_no_error(error);
    ck_assert(layout->parallel.present);
    GString *json[2] = {g_string_new(NULL), g_string_new(NULL)};
    const PpsimScenario *scs[2] = {plain, written};
    for (int k = 0; k < 2; k++) {
        g_autoptr(GPtrArray) results = ppsim_sim_run_all(scs[k], PPSIM_SIM_RECORD, &error);
        ppsim_assert_no_error(error);
        ppsim_report_json(json[k], scs[k], results);
    }
    ck_assert_str_eq(json[0]->str, json[1]->str);
    for (int k = 0; k < 2; k++)
        g_string_free(json[k], TRUE);
}
END_TEST

/* Where the mode is not modelled, a clear error naming the key: explicit costs (every
 * transfer a fixed latency) at the key's line and column, and the sampled replay. */
START_TEST(test_unsupported_errors)
{
    static const char explicit_yaml[] = "name: e\n"
                                        "training: {pp: 2, microbatches: 4}\n"
                                        "costs: {forward: 1, backward_input: 1}\n"
                                        "parallel: {p2p: blocking}\n"
                                        "schedule: 1f1b\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(explicit_yaml, NULL, &error);
    ck_assert(sc == NULL);
    ck_assert(error != NULL);
    ck_assert_msg(strstr(error->message, "4:") != NULL &&
                      strstr(error->message, "'parallel.p2p: blocking' needs hardware mode"),
                  "%s", error->message);
    g_clear_error(&error);

    const char *const blocking[] = {"parallel.p2p=blocking", NULL};
    g_autoptr(PpsimScenario) hw = parse(hw_yaml, blocking, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res = run_first(hw, &error);
    ppsim_assert_no_error(error);
    PpsimSampleOptions opt = {.samples = 4, .seed = 1, .threads = 1};
    ck_assert(!ppsim_sim_sample(hw, res, &opt, &error));
    ck_assert_msg(error != NULL && strstr(error->message, "parallel.p2p: blocking") != NULL, "%s",
                  error ? error->message : "no error");
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("p2p");
    TCase *tc = tcase_create("p2p");
    tcase_add_test(tc, test_hand_timeline);
    tcase_add_test(tc, test_waiter_deadlock_message);
    tcase_add_test(tc, test_modes_run);
    tcase_add_test(tc, test_interleaved_blocking_deadlock);
    tcase_add_test(tc, test_default_is_async);
    tcase_add_test(tc, test_unsupported_errors);
    suite_add_tcase(s, tc);
    return s;
}
