/* check-sim.c: replay semantics against hand-computed timelines and closed forms
 * (src/README.md "Semantics", "Semantics"): 1F1B and GPipe makespans and peaks, a hand-computed p=2
 * timeline with p2p latency, memory accounting of split backward, deadlock reporting, fair link
 * sharing, determinism. */
#include "ppsim-test.h"
#include "hw/exec.h"
#include "report/report.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"

#include <string.h>

#define MS PPSIM_PS_PER_MS

static PpsimScenario *
explicit_scenario(int p, int m, const char *schedule, double f, double b, double w)
{
    PpsimScenario *sc = ppsim_scenario_new_explicit(p, 1, m, schedule);
    sc->costs.forward_ps = (PpsimTime)(f * MS);
    sc->costs.backward_input_ps = (PpsimTime)(b * MS);
    sc->costs.backward_weight_ps = (PpsimTime)(w * MS);
    return sc;
}

static PpsimRunResult *
run_one(const PpsimScenario *sc)
{
    g_autoptr(GError) error = NULL;
    PpsimRunResult *res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    return res;
}

/* [ZB] App. H: 1F1B iteration time (m+p-1)(T_F+T_B+T_W), also for m < p; device d holds
 * min(p-d, m) microbatches at its peak ([MEG] warm-up + 1). */
START_TEST(test_1f1b_closed_form)
{
    int ps[] = {1, 2, 3, 4, 8};
    for (guint i = 0; i < G_N_ELEMENTS(ps); i++)
        for (int m = 1; m <= 2 * ps[i] + 3; m++) {
            int p = ps[i];
            g_autoptr(PpsimScenario) sc = explicit_scenario(p, m, "1f1b", 1.0, 2.0, 0.5);
            g_autoptr(PpsimRunResult) res = run_one(sc);
            ck_assert_int_eq(res->makespan_ps, (PpsimTime)(m + p - 1) * (MS * 7 / 2));
            for (int d = 0; d < p; d++)
                ck_assert_int_eq(res->devices[d].peak_activation,
                                 MIN(p - d, m) * PPSIM_EXPLICIT_MEM_SCALE);
            double want = (double)(p - 1) / (m + p - 1);
            ck_assert_double_eq_tol(res->bubble_ratio, want, 1e-12);
        }
}
END_TEST

START_TEST(test_gpipe_closed_form)
{
    for (int p = 1; p <= 6; p++)
        for (int m = 1; m <= 9; m += 2) {
            g_autoptr(PpsimScenario) sc = explicit_scenario(p, m, "gpipe", 1.0, 1.0, 1.0);
            g_autoptr(PpsimRunResult) res = run_one(sc);
            ck_assert_int_eq(res->makespan_ps, (PpsimTime)(m + p - 1) * 3 * MS);
            for (int d = 0; d < p; d++) {
                ck_assert_int_eq(res->devices[d].peak_activation, m * PPSIM_EXPLICIT_MEM_SCALE);
                ck_assert_int_eq(res->stages[d].peak_activation, m * PPSIM_EXPLICIT_MEM_SCALE);
            }
        }
}
END_TEST

/* p=2, m=2, F=1, BW=2, p2p=0.5, by hand:
 *   device 1: F0 [1.5,2.5]  BW0 [2.5,4.5]  F1 [4.5,5.5] (arrived 2.5)  BW1 [5.5,7.5]
 *   device 0: F0 [0,1]  F1 [1,2]  BW0 [5,7] (4.5+0.5)  BW1 [8,10] (7.5+0.5)
 * makespan 10; busy 6 each: bubble 1 - 12/20 = 0.4; span: max busy 6 / max span 10. */
START_TEST(test_hand_timeline_p2p)
{
    g_autoptr(PpsimScenario) sc = explicit_scenario(2, 2, "1f1b", 1.0, 1.0, 1.0);
    sc->costs.p2p_ps = MS / 2;
    g_autoptr(PpsimRunResult) res = run_one(sc);
    const PpsimTime want[2][4][2] = {{{0, 1}, {1, 2}, {5, 7}, {8, 10}},
                                     {{3, 5}, {5, 9}, {9, 11}, {11, 15}}};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 4; i++) {
            const PpsimOpTiming *t = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
            PpsimTime scale = d == 0 ? MS : MS / 2; /* device 1 row is in half-ms */
            ck_assert_int_eq(t->start_ps, want[d][i][0] * scale);
            ck_assert_int_eq(t->end_ps, want[d][i][1] * scale);
        }
    ck_assert_int_eq(res->makespan_ps, 10 * MS);
    ck_assert_double_eq_tol(res->bubble_ratio, 0.4, 1e-12);
    ck_assert_double_eq_tol(res->bubble_ratio_span, 0.4, 1e-12);
    ck_assert_int_eq(res->devices[1].first_start_ps, 3 * MS / 2);
    /* four cross-device transfers: F0, F1 forward, BW0, BW1 backward, each 0.5 ms */
    ck_assert_int_eq(res->transfers->len, 4);
    for (guint i = 0; i < res->transfers->len; i++) {
        const PpsimTransfer *t = &g_array_index(res->transfers, PpsimTransfer, i);
        ck_assert_int_eq(t->arrive_ps - t->send_ps, MS / 2);
    }
    /* attribution on device 0: idle 3 ms before BW0 (producer ends 4.5, arrives 5) and 1 ms
     * before BW1: dependency 2.5 + 0.5, transfer 0.5 + 0.5 */
    ck_assert_int_eq(res->devices[0].idle_wait_ps, 3 * MS);
    ck_assert_int_eq(res->devices[0].idle_transfer_ps, 1 * MS);
    ck_assert_int_eq(res->devices[0].idle_warmup_ps, 0);
}
END_TEST

/* The memory rules with split backward: F +A at start, B frees A - A_W at its end, W frees A_W. */
START_TEST(test_memory_split_backward)
{
    g_autoptr(PpsimScenario) sc = explicit_scenario(1, 2, "1f1b", 1.0, 1.0, 1.0);
    sc->costs.weight_activation = 0.25;
    const char *csv = "0F0,0F1,0I0,0I1,0W0,0W1\n";
    g_autoptr(GError) error = NULL;
    PpsimSchedule *sched = ppsim_schedule_from_csv(csv, strlen(csv), "t.csv", &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 1, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_replay(sc, costs, sched, "split", "custom", PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(res->devices[0].peak_activation, 2000);
    ck_assert_int_eq(res->makespan_ps, 6 * MS);
    /* activation totals after each change: +1 +1 -0.75 -0.75 -0.25 -0.25 */
    const gint64 want[] = {1000, 2000, 1250, 500, 250, 0};
    ck_assert_int_eq(res->mem_samples->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        const PpsimMemSample *s = &g_array_index(res->mem_samples, PpsimMemSample, i);
        ck_assert_int_eq(s->value, want[i]);
        ck_assert_int_eq(s->category, PPSIM_MEM_ACTIVATION);
    }
}
END_TEST

static void
describe_task(GString *out, PpsimTaskId task, gpointer data)
{
    (void)data;
    g_string_append_printf(out, "T%u", task);
}

START_TEST(test_exec_deadlock_message)
{
    g_autoptr(PpsimExec) exec = ppsim_exec_new(NULL, 1, 0);
    int s0 = ppsim_exec_add_stream(exec, "gpu0.compute");
    int s1 = ppsim_exec_add_stream(exec, "gpu1.compute");
    PpsimTaskId a = ppsim_exec_add_task(exec, s0, MS);
    PpsimTaskId b = ppsim_exec_add_task(exec, s0, MS);
    PpsimTaskId c = ppsim_exec_add_task(exec, s1, MS);
    ppsim_exec_add_dep(exec, c, b, 0); /* b waits for c */
    ppsim_exec_add_dep(exec, b, c, 0); /* c waits for b: cycle */
    (void)a;
    g_autoptr(GError) error = NULL;
    ck_assert(!ppsim_exec_run(exec, describe_task, NULL, &error));
    ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_DEADLOCK);
    ck_assert_str_eq(error->message, "deadlock: 'T1' on 'gpu0.compute' is blocked waiting for "
                                     "'T2' on 'gpu1.compute' (not started) at t=1 ms");
}
END_TEST

/* Two GPUs behind one PCIe switch offload at once: the 30 GB/s uplink is shared max-min
 * fairly (15 GB/s each) although each GPU link alone allows 25 GB/s. */
START_TEST(test_flows_share_uplink)
{
    PpsimHardware hw = {.gpus_per_node = 8,
                        .pcie_gpus_per_switch = 2,
                        .pcie_bytes_per_s = 25e9,
                        .pcie_uplink_bytes_per_s = 30e9,
                        .nvlink_bytes_per_s = 300e9,
                        .network_bytes_per_s = 25e9};
    for (int shared = 0; shared < 2; shared++) {
        g_autoptr(PpsimTopology) topo = ppsim_topology_new(&hw, 4);
        g_autoptr(PpsimExec) exec = ppsim_exec_new(topo, 1, 0);
        int host = ppsim_topology_host_endpoint(topo, 0);
        int s0 = ppsim_exec_add_stream(exec, "gpu0.copy");
        int s1 = ppsim_exec_add_stream(exec, "gpu1.copy");
        int s2 = ppsim_exec_add_stream(exec, "gpu2.copy");
        PpsimTaskId t0 = ppsim_exec_add_transfer(exec, s0, 0, host, 1500000000);
        /* GPU 1 shares GPU 0's switch; GPU 2 sits behind the next one */
        PpsimTaskId t1 =
            ppsim_exec_add_transfer(exec, shared ? s1 : s2, shared ? 1 : 2, host, 1500000000);
        g_autoptr(GError) error = NULL;
        ck_assert(ppsim_exec_run(exec, NULL, NULL, &error));
        PpsimTime want = shared ? 100 * MS : 60 * MS; /* 1.5 GB at 15 vs 25 GB/s */
        ck_assert_int_eq(ppsim_exec_task_end(exec, t0), want);
        ck_assert_int_eq(ppsim_exec_task_end(exec, t1), want);
    }
}
END_TEST

START_TEST(test_deterministic_json)
{
    g_autoptr(GString) first = NULL;
    for (int round = 0; round < 2; round++) {
        g_autoptr(PpsimScenario) sc = explicit_scenario(4, 8, "1f1b", 1.0, 1.3, 0.7);
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, PPSIM_SIM_RECORD, &error);
        ppsim_assert_no_error(error);
        GString *json = g_string_new(NULL);
        ppsim_report_json(json, sc, results);
        if (round == 0)
            first = json;
        else {
            ck_assert_str_eq(json->str, first->str);
            g_string_free(json, TRUE);
        }
    }
}
END_TEST

/* Hardware mode: offloads are PCIe flows into the node's host memory, which is tracked and
 * reported like a device's: two stage-0 activations (2 layers x 34 sbh + the embedding's
 * sbh mask, about 1.16 GB each) overflow a 1 GiB host; once reloaded it is empty again. */
START_TEST(test_host_memory_oom)
{
    g_autofree char *path = ppsim_test_data_path("scenarios/ok/host-oom.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 2, &error);
    gint64 act = costs->stage[0].est.act;
    ck_assert_int_eq(res->n_hosts, 1);
    ck_assert_int_eq(res->hosts[0].limit, (gint64)1 << 30);
    ck_assert_int_eq(res->hosts[0].peak_memory, 2 * act); /* both offloads before a reload */
    ck_assert(res->hosts[0].oom);
    ck_assert(!res->devices[0].oom);
    ck_assert(ppsim_run_result_any_oom(res));
    /* the copy ops really moved bytes over PCIe: 2 D2H + 2 H2D flows of act bytes */
    guint pcie = 0;
    for (guint i = 0; i < res->flows->len; i++)
        pcie += g_array_index(res->flows, PpsimFlowRecord, i).bytes == (guint64)act;
    ck_assert_uint_eq(pcie, 4);
}
END_TEST

/* [PO] §4.2: one shared copy stream serialises offloads and reloads; two streams (D2H, H2D)
 * let them overlap. p = 1, m = 2, F = 1, BW = 2, OFF = RL = 0.5, copy order O0 O1 L0 L1:
 *   one stream:  O0 [1,1.5] O1 [2,2.5] L0 [2.5,3] -> BW0 [3,5]  L1 [3,3.5] -> BW1 [5,7]
 *   two streams: L0 on H2D right after O0: [1.5,2] -> BW0 [2,4], L1 [2.5,3] -> BW1 [4,6] */
START_TEST(test_copy_streams)
{
    const char *csv = "0F0,0F1,0B0,0B1,|,0O0,0O1,0L0,0L1\n";
    for (int streams = 1; streams <= 2; streams++) {
        g_autoptr(PpsimScenario) sc = explicit_scenario(1, 2, "1f1b", 1.0, 1.0, 1.0);
        sc->costs.offload_ps = MS / 2;
        sc->has_hardware = TRUE;
        sc->hardware.copy_streams = streams;
        g_autoptr(GError) error = NULL;
        PpsimSchedule *sched = ppsim_schedule_from_csv(csv, strlen(csv), "t.csv", &error);
        g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 1, &error);
        g_autoptr(PpsimRunResult) res =
            ppsim_sim_replay(sc, costs, sched, "copy", "custom", 0, &error);
        ppsim_assert_no_error(error);
        const PpsimOpTiming *l0 = &g_array_index(res->copy_timing[0], PpsimOpTiming, 2);
        const PpsimOpTiming *bw0 = &g_array_index(res->compute_timing[0], PpsimOpTiming, 2);
        ck_assert_int_eq(l0->start_ps, streams == 1 ? 5 * MS / 2 : 3 * MS / 2);
        ck_assert_int_eq(bw0->start_ps, streams == 1 ? 3 * MS : 2 * MS);
        ck_assert_int_eq(res->makespan_ps, streams == 1 ? 7 * MS : 6 * MS);
        /* reloaded activations are buffers until the backward frees them */
        ck_assert_int_eq(res->devices[0].peak_activation, 2 * PPSIM_EXPLICIT_MEM_SCALE);
    }
}
END_TEST

/* A reload anchored to a compute op starts only after that op ends: "0L0@2" waits for F2
 * (ends at 3 ms) although its offload ended at 1.5 ms; unanchored it starts at 1.5. */
START_TEST(test_reload_anchor)
{
    const char *csv[] = {"0F0,0F1,0F2,0B0,0B1,0B2,|,0O0,0L0\n",
                         "0F0,0F1,0F2,0B0,0B1,0B2,|,0O0,0L0@2\n"};
    for (int anchored = 0; anchored < 2; anchored++) {
        g_autoptr(PpsimScenario) sc = explicit_scenario(1, 3, "1f1b", 1.0, 1.0, 1.0);
        sc->costs.offload_ps = MS / 2;
        g_autoptr(GError) error = NULL;
        PpsimSchedule *sched =
            ppsim_schedule_from_csv(csv[anchored], strlen(csv[anchored]), "t.csv", &error);
        g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 1, &error);
        g_autoptr(PpsimRunResult) res =
            ppsim_sim_replay(sc, costs, sched, "anchor", "custom", 0, &error);
        ppsim_assert_no_error(error);
        const PpsimOpTiming *l0 = &g_array_index(res->copy_timing[0], PpsimOpTiming, 1);
        ck_assert_int_eq(l0->start_ps, anchored ? 3 * MS : 3 * MS / 2);
        /* B0 then waits for the reload: 3.5 instead of 3 */
        const PpsimOpTiming *b0 = &g_array_index(res->compute_timing[0], PpsimOpTiming, 3);
        ck_assert_int_eq(b0->start_ps, anchored ? 7 * MS / 2 : 3 * MS);
    }
}
END_TEST

/* Memory effects may be added in any task order; within a task their order is kept. By
 * hand, one pool: A [0,1] and B [1,2] on one stream, C [0,0.5] on another; A +3 at start,
 * -1 at end; B +2, -4; C +5, -5. Initial starts go in stream order (A then C), so the pool
 * reads 3, 8 (the peak, at 0, by C), 3 (C ends), 2 (A ends), 4 (B starts), 0. */
static void
exec_mem_case(gboolean reversed, gint64 *values, gint64 *peak, PpsimTime *peak_time,
              PpsimTaskId *peak_task)
{
    g_autoptr(PpsimExec) exec = ppsim_exec_new(NULL, 3, 0);
    ppsim_exec_add_pool(exec, 0);
    int s0 = ppsim_exec_add_stream(exec, "s0"), s1 = ppsim_exec_add_stream(exec, "s1");
    PpsimTaskId a = ppsim_exec_add_task(exec, s0, MS);
    PpsimTaskId b = ppsim_exec_add_task(exec, s0, MS);
    PpsimTaskId c = ppsim_exec_add_task(exec, s1, MS / 2);
    const struct {
        PpsimTaskId task;
        PpsimMemWhen when;
        gint64 delta;
    } fx[] = {{a, PPSIM_MEM_AT_START, 3}, {a, PPSIM_MEM_AT_END, -1},  {b, PPSIM_MEM_AT_START, 2},
              {b, PPSIM_MEM_AT_END, -4},  {c, PPSIM_MEM_AT_START, 5}, {c, PPSIM_MEM_AT_END, -5}};
    /* reversed: C's effects, then B's, then A's, each task's own pair still in order */
    for (int k = 0; k < 3; k++)
        for (int e = 0; e < 2; e++) {
            int i = 2 * (reversed ? 2 - k : k) + e;
            ppsim_exec_add_mem(exec, fx[i].task, fx[i].when, 0, (int)fx[i].task,
                               PPSIM_MEM_ACTIVATION, fx[i].delta);
        }
    ppsim_exec_set_recording(exec, TRUE);
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_exec_run(exec, NULL, NULL, &error));
    const GArray *samples = ppsim_exec_mem_samples(exec);
    ck_assert_uint_eq(samples->len, 6);
    for (guint i = 0; i < samples->len; i++)
        values[i] = g_array_index(samples, PpsimMemSample, i).value;
    const PpsimPoolStats *st = ppsim_exec_pool_stats(exec, 0);
    *peak = st->peak_total;
    *peak_time = st->peak_total_time_ps;
    *peak_task = st->peak_total_task;
    ck_assert_int_eq(ppsim_exec_tag_peak(exec, (int)a), 3);
    ck_assert_int_eq(ppsim_exec_tag_peak(exec, (int)c), 5);
}

START_TEST(test_exec_mem_any_order)
{
    const gint64 want[] = {3, 8, 3, 2, 4, 0};
    for (int reversed = 0; reversed < 2; reversed++) {
        gint64 values[6], peak;
        PpsimTime peak_time;
        PpsimTaskId peak_task;
        exec_mem_case(reversed, values, &peak, &peak_time, &peak_task);
        for (int i = 0; i < 6; i++)
            ck_assert_int_eq(values[i], want[i]);
        ck_assert_int_eq(peak, 8);
        ck_assert_int_eq(peak_time, 0);
        ck_assert_uint_eq(peak_task, 2); /* C */
    }
}
END_TEST

/* Dependencies with several latencies (0, 2, 5 and 2 again) from one 1 ms producer: each
 * consumer starts at 1 + latency, and that is when its input is reported to arrive. */
START_TEST(test_exec_latencies)
{
    g_autoptr(PpsimExec) exec = ppsim_exec_new(NULL, 1, 0);
    const PpsimTime lat[] = {0, 2 * MS, 5 * MS, 2 * MS};
    PpsimTaskId prod = ppsim_exec_add_task(exec, ppsim_exec_add_stream(exec, "p"), MS);
    PpsimTaskId cons[G_N_ELEMENTS(lat)];
    for (guint i = 0; i < G_N_ELEMENTS(lat); i++) {
        g_autofree char *name = g_strdup_printf("c%u", i);
        cons[i] = ppsim_exec_add_task(exec, ppsim_exec_add_stream(exec, name), MS);
        ppsim_exec_add_dep(exec, prod, cons[i], lat[i]);
    }
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_exec_run(exec, NULL, NULL, &error));
    ck_assert_uint_eq(ppsim_exec_n_deps(exec), G_N_ELEMENTS(lat));
    PpsimTime times[2 * (G_N_ELEMENTS(lat) + 1)];
    ppsim_exec_task_times(exec, 0, G_N_ELEMENTS(lat) + 1, times);
    ck_assert_int_eq(times[0], 0);
    ck_assert_int_eq(times[1], MS);
    for (guint i = 0; i < G_N_ELEMENTS(lat); i++) {
        ck_assert_uint_eq(ppsim_exec_dep_from(exec, i), prod);
        ck_assert_uint_eq(ppsim_exec_dep_to(exec, i), cons[i]);
        ck_assert_uint_eq(ppsim_exec_dep_consumers(exec)[i], cons[i]);
        ck_assert_int_eq(ppsim_exec_dep_arrival(exec, i), MS + lat[i]);
        ck_assert_int_eq(ppsim_exec_task_start(exec, cons[i]), MS + lat[i]);
        ck_assert_int_eq(times[2 * (i + 1)], MS + lat[i]);
        ck_assert_int_eq(times[2 * (i + 1) + 1], 2 * MS + lat[i]);
    }
}
END_TEST

/* A cyclic schedule fails the replay with the checker's own message, whether the cycle is
 * found by the checker up front (an optimizer step on a CPU worker leaves the compute list
 * for a shared stream) or learnt from the replay deadlocking (every list is one stream). */
START_TEST(test_replay_cycle_message)
{
    const char *csv[] = {"0B0,0F0\n1F0,1B0\n", "0F0,0B0,0F1,0B1\n1F0,1F1,1B0,1B1\n",
                         "0F0,0S,0I0,0W0\n1F0,1I0,1W0,1S\n", "0F0,0SC,0I0,0W0\n1F0,1I0,1W0,1S\n"};
    const int m[] = {1, 2, 1, 1};
    for (guint i = 0; i < G_N_ELEMENTS(csv); i++) {
        g_autoptr(PpsimScenario) sc = explicit_scenario(2, m[i], "1f1b", 1.0, 1.0, 1.0);
        g_autoptr(GError) error = NULL, want = NULL;
        g_autoptr(PpsimSchedule) copy =
            ppsim_schedule_from_csv(csv[i], strlen(csv[i]), "t.csv", &error);
        ppsim_assert_no_error(error);
        ck_assert(!ppsim_schedule_validate(copy, &want));
        PpsimSchedule *sched = ppsim_schedule_from_csv(csv[i], strlen(csv[i]), "t.csv", &error);
        g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 2, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res =
            ppsim_sim_replay(sc, costs, sched, "cyc", "custom", 0, &error);
        ck_assert_ptr_null(res);
        ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID);
        ck_assert_str_eq(error->message, want->message);
        ck_assert_ptr_nonnull(strstr(error->message, "cyclic wait"));
    }
}
END_TEST

/* The CSV reader's fast path (plain cells) and its general path (padding, leading zeros)
 * read the same schedule, which replays to the same result. */
START_TEST(test_csv_paths_agree)
{
    const char *plain = "0F0,0F1,0I0,0I1,0W0,0W1,|,0O0,0L0@1\n1F0,1B0,1F1,1B1\n";
    const char *padded =
        " 00F0 ,0F01,\t0I0, 0I1,0W0 ,000W1,|, 0O0 ,0L0@01\r\n1F0 ,1B00,NONE,,1F1,1B1\n";
    char *json[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        const char *text = k == 0 ? plain : padded;
        g_autoptr(PpsimScenario) sc = explicit_scenario(2, 2, "1f1b", 1.0, 1.5, 0.5);
        sc->costs.offload_ps = MS / 4;
        sc->costs.p2p_ps = MS / 10;
        g_autoptr(GError) error = NULL;
        PpsimSchedule *sched = ppsim_schedule_from_csv(text, strlen(text), "t.csv", &error);
        ppsim_assert_no_error(error);
        g_autoptr(GString) back = ppsim_schedule_to_csv(sched);
        ck_assert_str_eq(back->str, plain);
        g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 2, &error);
        g_autoptr(GPtrArray) results =
            g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_run_result_free);
        g_ptr_array_add(
            results, ppsim_sim_replay(sc, costs, sched, "csv", "custom", PPSIM_SIM_RECORD, &error));
        ppsim_assert_no_error(error);
        GString *out = g_string_new(NULL);
        ppsim_report_json(out, sc, results);
        json[k] = g_string_free(out, FALSE);
    }
    ck_assert_str_eq(json[0], json[1]);
    g_free(json[0]);
    g_free(json[1]);
}
END_TEST

/* Many distinct latencies (25 values, repeated out of order): past the executor's short
 * scan they are found by hash; every consumer still starts at 1 ms + its own latency. */
START_TEST(test_exec_many_latencies)
{
    g_autoptr(PpsimExec) exec = ppsim_exec_new(NULL, 1, 0);
    PpsimTaskId prod = ppsim_exec_add_task(exec, ppsim_exec_add_stream(exec, "p"), MS);
    const int n = 60;
    PpsimTaskId cons[60];
    for (int i = 0; i < n; i++) {
        g_autofree char *name = g_strdup_printf("c%d", i);
        cons[i] = ppsim_exec_add_task(exec, ppsim_exec_add_stream(exec, name), MS);
        ppsim_exec_add_dep(exec, prod, cons[i], (PpsimTime)((i * 7) % 25) * 1000);
    }
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_exec_run(exec, NULL, NULL, &error));
    for (int i = 0; i < n; i++) {
        PpsimTime want = MS + (PpsimTime)((i * 7) % 25) * 1000;
        ck_assert_int_eq(ppsim_exec_dep_arrival(exec, (guint32)i), want);
        ck_assert_int_eq(ppsim_exec_task_start(exec, cons[i]), want);
    }
}
END_TEST

/* Scenarios whose values are each in range but whose products overflow 64-bit picoseconds or
 * bytes: refused with the quantity and the limit (they tripped asserts and UBSan before). */
START_TEST(test_overflow_refused)
{
    g_autofree char *dir_path = ppsim_test_data_path("scenarios/overflow");
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    int n = 0;
    for (const char *name; (name = g_dir_read_name(dir)); n++) {
        g_autofree char *path = g_build_filename(dir_path, name, NULL);
        g_autofree char *text = NULL;
        ck_assert(g_file_get_contents(path, &text, NULL, NULL));
        const char *expect = strstr(text, "# expect: ");
        ck_assert_msg(expect != NULL, "%s has no '# expect:' line", path);
        g_autofree char *want = g_strndup(expect + 10, strcspn(expect + 10, "\n"));
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, NULL, &error);
        ppsim_assert_no_error(error);
        g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, 0, &error);
        ck_assert_msg(results == NULL, "%s ran", path);
        ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE);
        ck_assert_msg(strstr(error->message, want) != NULL, "%s: %s", name, error->message);
    }
    ck_assert_int_ge(n, 5);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("sim");
    TCase *tc = tcase_create("explicit");
    tcase_add_test(tc, test_1f1b_closed_form);
    tcase_add_test(tc, test_gpipe_closed_form);
    tcase_add_test(tc, test_hand_timeline_p2p);
    tcase_add_test(tc, test_memory_split_backward);
    tcase_add_test(tc, test_deterministic_json);
    suite_add_tcase(s, tc);
    tc = tcase_create("exec");
    tcase_add_test(tc, test_exec_deadlock_message);
    tcase_add_test(tc, test_flows_share_uplink);
    tcase_add_test(tc, test_host_memory_oom);
    tcase_add_test(tc, test_copy_streams);
    tcase_add_test(tc, test_reload_anchor);
    tcase_add_test(tc, test_exec_mem_any_order);
    tcase_add_test(tc, test_exec_latencies);
    tcase_add_test(tc, test_exec_many_latencies);
    tcase_add_test(tc, test_replay_cycle_message);
    tcase_add_test(tc, test_csv_paths_agree);
    tcase_add_test(tc, test_overflow_refused);
    suite_add_tcase(s, tc);
    return s;
}
