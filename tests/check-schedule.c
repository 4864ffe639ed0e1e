/* check-schedule.c: the schedule IR checker and the CSV format. */
#include "ppsim-test.h"
#include "sched/registry.h"
#include "schedule/schedule.h"
#include "util/ppsim-error.h"

#include <string.h>

static PpsimSchedule *
generate(const char *name, int p, int v, int m)
{
    const PpsimScheduleClass *k = ppsim_sched_registry_lookup(name);
    ck_assert_ptr_nonnull(k);
    g_autoptr(PpsimOptions) opts = ppsim_options_new(k, NULL, "test", NULL);
    PpsimStageEstimate *est = g_new0(PpsimStageEstimate, p * v);
    PpsimCostEstimates costs = {.n_stages = p * v, .stage = est};
    PpsimScheduleParams params = {.options = opts, .costs = &costs};
    PpsimPipelineShape shape = {p, v, m};
    PpsimSchedule *sched = NULL;
    g_autoptr(GError) error = NULL;
    ck_assert(k->generate(&shape, &params, &sched, &error));
    g_free(est);
    return sched;
}

static PpsimSchedule *
from_csv(const char *text, GError **error)
{
    return ppsim_schedule_from_csv(text, strlen(text), "t.csv", error);
}

static void
assert_invalid(const char *csv, const char *substring)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) sched = from_csv(csv, &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_schedule_validate(sched, &error));
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID);
    ck_assert_msg(strstr(error->message, substring) != NULL, "'%s' lacks '%s'", error->message,
                  substring);
}

/* @csv must fail to parse, with a message containing @substring (file:line:col first). */
static void
assert_unparsed(const char *csv, const char *substring)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) sched = from_csv(csv, &error);
    ck_assert_ptr_null(sched);
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE);
    ck_assert_msg(strstr(error->message, substring) != NULL, "'%s' lacks '%s'", error->message,
                  substring);
}

START_TEST(test_generators_valid)
{
    const char *names[] = {"1f1b", "gpipe"};
    int ps[] = {1, 2, 4, 8, 16};
    for (guint n = 0; n < G_N_ELEMENTS(names); n++)
        for (guint i = 0; i < G_N_ELEMENTS(ps); i++)
            for (int m = 1; m <= 3 * ps[i] + 1; m += MAX(1, ps[i] / 2)) {
                g_autoptr(PpsimSchedule) s = generate(names[n], ps[i], 1, m);
                g_autoptr(GError) error = NULL;
                ck_assert_msg(ppsim_schedule_validate(s, &error), "%s p=%d m=%d: %s", names[n],
                              ps[i], m, error ? error->message : "");
                ck_assert_int_eq(ppsim_schedule_n_ops(s), 2 * ps[i] * m);
            }
}
END_TEST

START_TEST(test_csv_round_trip)
{
    g_autoptr(PpsimSchedule) s = generate("1f1b", 4, 1, 8);
    g_autoptr(GString) csv = ppsim_schedule_to_csv(s);
    ck_assert(g_str_has_prefix(csv->str, "0F0,0F1,0F2,0F3,0B0,"));
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) back = from_csv(csv->str, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(back->n_devices, 4);
    ck_assert_int_eq(back->n_stages, 4);
    ck_assert_int_eq(back->n_microbatches, 8);
    for (int d = 0; d < 4; d++) {
        ck_assert_int_eq(back->stage_device[d], s->stage_device[d]);
        ck_assert_int_eq(back->compute[d]->len, s->compute[d]->len);
        ck_assert(memcmp(back->compute[d]->data, s->compute[d]->data,
                         s->compute[d]->len * sizeof(PpsimOp)) == 0);
    }
    g_autoptr(GString) again = ppsim_schedule_to_csv(back);
    ck_assert_str_eq(again->str, csv->str);
}
END_TEST

START_TEST(test_csv_extensions_round_trip)
{
    /* V-shaped stage map, split backward, recompute, offload/reload, optimizer steps */
    const char *text = "0F0,3F0,3I0,3W0,0R0,0I0,0W0,0S,3SC,|,0O0,0L0\n"
                       "1F0,2F0,2I0,2W0,1B0,1S,2S\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = from_csv(text, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(s->n_stages, 4);
    ck_assert_int_eq(s->stage_device[3], 0);
    ck_assert_int_eq(s->stage_device[2], 1);
    ck_assert_int_eq(s->copy[0]->len, 2);
    ck_assert(ppsim_schedule_validate(s, &error));
    g_autoptr(GString) csv = ppsim_schedule_to_csv(s);
    ck_assert_str_eq(csv->str, text);
}
END_TEST

START_TEST(test_csv_anchor)
{
    const char *text = "0F0,0F1,0F2,0B0,0B1,0B2,|,0O0,0L0@2,0O1,0L1@3\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = from_csv(text, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(g_array_index(s->copy_after[0], gint32, 0), -1);
    ck_assert_int_eq(g_array_index(s->copy_after[0], gint32, 1), 2);
    ck_assert(ppsim_schedule_validate(s, &error));
    g_autoptr(GString) csv = ppsim_schedule_to_csv(s);
    ck_assert_str_eq(csv->str, text);
    /* out of range, malformed, and a cycle through an anchor */
    g_autoptr(PpsimSchedule) far = from_csv("0F0,0B0,|,0O0,0L0@9\n", &error);
    ck_assert(!ppsim_schedule_validate(far, &error));
    ck_assert(strstr(error->message, "anchored to compute op 9, but the device has 2") != NULL);
    g_clear_error(&error);
    ck_assert_ptr_null(from_csv("0F0,0B0,|,0O0,0L0@x\n", &error));
    ck_assert(strstr(error->message, "bad anchor") != NULL);
    g_clear_error(&error);
    /* the reload waits for B0 to end, but B0 needs the reload */
    g_autoptr(PpsimSchedule) cyc = from_csv("0F0,0B0,|,0O0,0L0@1\n", &error);
    ck_assert(!ppsim_schedule_validate(cyc, &error));
    ck_assert(strstr(error->message, "cyclic wait") != NULL);
}
END_TEST

/* [PO] App. D cross-device waits: `^r.i` after a copy cell (and its anchor), kept through a
 * round trip; bad ones named with file, line and column; a cycle through them caught. */
START_TEST(test_csv_copy_sync)
{
    const char *text = "0F0,0B0,|,0O0,0L0^1.0\n"
                       "1F0,1B0,|,1O0^0.0,1L0@0^0.1^0.0\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = from_csv(text, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_eq(s->copy_sync[0]->len, 1);
    ck_assert_uint_eq(s->copy_sync[1]->len, 3);
    const PpsimCopySync *e = &g_array_index(s->copy_sync[1], PpsimCopySync, 1);
    ck_assert_int_eq(e->op, 1);
    ck_assert_int_eq(e->device, 0);
    ck_assert_int_eq(e->index, 1);
    ck_assert(ppsim_schedule_validate(s, &error));
    g_autoptr(GString) csv = ppsim_schedule_to_csv(s);
    ck_assert_str_eq(csv->str, text);
    const struct {
        const char *text, *expect;
    } bad[] = {
        {"0F0,0B0,|,0O0,0L0^0.0\n", "t.csv:1:15: ^0.0: a copy action cannot wait for its own"},
        {"0F0,0B0,|,0O0,0L0^3.0\n", "t.csv:1:15: ^3.0: the wait names a row"},
        {"0F0,0B0,|,0O0,0L0\n1F0,1B0,|,1O0^0.2,1L0\n", "t.csv:2:11: ^0.2: the wait names a copy"},
        {"0F0,0B0,|,0O0,0L0^1\n", "t.csv:1:15: bad cross-device wait"},
        {"0F0,0B0,|,0O0,0L0^1.x\n", "t.csv:1:15: bad cross-device wait"},
        {"0F0,0B0^1.0\n", "t.csv:1:5: trailing characters"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
        assert_unparsed(bad[i].text, bad[i].expect);
    /* device 1's offload waits for device 0's reload, which is anchored after B0, which
     * needs the gradient of B1, which needs device 1's reload, behind that offload */
    g_autoptr(PpsimSchedule) cyc = from_csv("0F0,0B0,|,0O0,0L0@1\n1F0,1B0,|,1O0^0.1,1L0\n", &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_schedule_validate(cyc, &error));
    ck_assert(strstr(error->message, "cyclic wait") != NULL);
    g_clear_error(&error);
    /* the API checks what the CSV reader cannot see */
    g_autoptr(PpsimSchedule) api = from_csv("0F0,0B0,|,0O0,0L0\n1F0,1B0\n", &error);
    ppsim_schedule_add_copy_sync(api, 0, 1, 1, 0);
    ck_assert(!ppsim_schedule_validate(api, &error));
    ck_assert(strstr(error->message, "names a copy op the other device does not have") != NULL);
}
END_TEST

/* A compute op's wait on its row's copy action, `&i` after a compute cell: kept through a
 * round trip; a bad one named with file, line and column; a cycle through one caught; the
 * API's out-of-range waits refused by the checker. */
START_TEST(test_csv_compute_wait)
{
    const char *text = "0F0,0F1&0,0B1,0B0&1,|,0O0,0L0@2\n1F0,1F1,1B1,1B0\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = from_csv(text, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_eq(s->compute_wait[0]->len, 2);
    ck_assert_uint_eq(s->compute_wait[1]->len, 0);
    const PpsimComputeWait *e = &g_array_index(s->compute_wait[0], PpsimComputeWait, 1);
    ck_assert_int_eq(e->op, 3);
    ck_assert_int_eq(e->index, 1);
    ck_assert(ppsim_schedule_validate(s, &error));
    g_autoptr(GString) csv = ppsim_schedule_to_csv(s);
    ck_assert_str_eq(csv->str, text);
    g_autoptr(PpsimSchedule) copy = ppsim_schedule_copy(s);
    ck_assert(ppsim_schedule_equal(s, copy));
    g_array_set_size(copy->compute_wait[0], 1);
    ck_assert(!ppsim_schedule_equal(s, copy));
    const struct {
        const char *text, *expect;
    } bad[] = {
        {"0F0,0F1&2,0B0,0B1,|,0O0,0L0\n", "t.csv:1:5: &2: the wait names a copy action"},
        {"0F0,0F1&,0B0,0B1\n", "t.csv:1:5: bad wait"},
        {"0F0,0F1&x,0B0,0B1\n", "t.csv:1:5: bad wait"},
        {"0F0,0B0,|,0O0&0,0L0\n", "t.csv:1:11: trailing characters"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
        assert_unparsed(bad[i].text, bad[i].expect);
    /* F0 waits for the offload of its own activation, which starts after F0 */
    g_autoptr(PpsimSchedule) cyc = from_csv("0F0&0,0B0,|,0O0,0L0\n", &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_schedule_validate(cyc, &error));
    ck_assert(strstr(error->message, "cyclic wait") != NULL);
    g_clear_error(&error);
    g_autoptr(PpsimSchedule) api = from_csv("0F0,0B0,|,0O0,0L0\n", &error);
    ppsim_schedule_add_compute_wait(api, 0, 1, 2);
    ck_assert(!ppsim_schedule_validate(api, &error));
    ck_assert(strstr(error->message, "names a copy op the device does not have") != NULL);
}
END_TEST

START_TEST(test_csv_pytorch_cells)
{
    /* PyTorch comm actions and blank cells are skipped; trailing blank lines are no devices */
    const char *text = "0F0,0SEND_F0,,0B0\n1RECV_F0,1F0,1B0, 1SEND_B0\n\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = from_csv(text, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(s->n_devices, 2);
    ck_assert_int_eq(s->compute[0]->len, 2);
    ck_assert_int_eq(s->compute[1]->len, 2);
    ck_assert(ppsim_schedule_validate(s, &error));
}
END_TEST

START_TEST(test_csv_parse_errors)
{
    const struct {
        const char *text, *expect;
    } cases[] = {
        {"0F0,0X1\n", "t.csv:1:5: unknown action kind"},
        {"0F0,F1\n", "t.csv:1:5: action must start with a stage number"},
        {"0F0,0F\n", "t.csv:1:5: missing microbatch"},
        {"0F0,0B0\n0F1\n", "t.csv:2:1: 'F(s=0, mb=1)' is in row 2 but stage 0"},
        {"0F0,0F1x\n", "t.csv:1:5: trailing characters"},
        {"0F0\n2F0\n", "stage 1 appears in no row"},
        {"0S\n", "no forward or backward action"},
        {"0F0,|,0B0\n", "t.csv:1:7: 'BW(s=0, mb=0)' is a compute action after the '|'"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_unparsed(cases[i].text, cases[i].expect);
}
END_TEST

/* Hostile sizes fail fast, with the cell's position, in memory proportional to the file. */
START_TEST(test_csv_limits)
{
    const struct {
        const char *text, *expect;
    } cases[] = {
        {"0F0,0B0,0F99999999\n", "t.csv:1:9: microbatch number larger than a file of this size"},
        {"0F0,0B0\n200000000F0\n", "t.csv:2:1: stage number larger than a file of this size"},
        {"0F0,0B0\n\n\n1F0,1B0\n", "t.csv:4:1: row 4, but the file has only 2 stages"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_unparsed(cases[i].text, cases[i].expect);
    /* ten million blank lines between two rows, and a microbatch number that the padding
     * would otherwise allow: both refused (in well under a second: tools/bench --only
     * hostile times it) */
    gsize blank = 10 * 1000 * 1000;
    g_autoptr(GString) big = g_string_new("0F0,0B0\n");
    for (gsize i = 0; i < blank; i++)
        g_string_append_c(big, '\n');
    g_string_append(big, "1F0,1B0\n");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = ppsim_schedule_from_csv(big->str, big->len, "t.csv", &error);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(error->message, "t.csv:10000002:1: row 10000002, but") != NULL, "%s",
                  error->message);
    g_clear_error(&error);
    /* trailing blank lines are no rows, but they make room for large numbers */
    g_string_assign(big, "0F4000000\n1F4000000\n");
    for (gsize i = 0; i < blank; i++)
        g_string_append_c(big, '\n');
    ck_assert_ptr_null(ppsim_schedule_from_csv(big->str, big->len, "t.csv", &error));
    ck_assert_msg(strstr(error->message, "2 stages x 4000001 microbatches need 8000002 forward") !=
                      NULL,
                  "%s", error->message);
}
END_TEST

START_TEST(test_validate_errors)
{
    assert_invalid("0F0\n1F0,1B0\n", "'F(s=0, mb=0)' on device 0 has no backward");
    assert_invalid("0F0,0B0,0F0\n", "appears twice");
    assert_invalid("0F0,0I0\n", "'B(s=0, mb=0)' on device 0 has no W");
    assert_invalid("0F0,0W0,0I0\n", "'W(s=0, mb=0)' on device 0 comes before its B");
    assert_invalid("0F1,0B1\n", "'F(s=0, mb=0)' on device 0 is missing");
    assert_invalid("0F0,0B0,|,0L0\n", "has no OFF");
    assert_invalid("0F0,0B0,|,0O0\n", "is never reloaded");
    assert_invalid("0B0,0F0\n", "cyclic wait");
    /* cross-device cycle: device 1 runs F1 first, which waits for device 0's F1, which is
     * ordered after BW0 on device 0, which waits for device 1's BW0, ordered after F1; the
     * checker names the first blocked op in device order */
    assert_invalid("0F0,0B0,0F1,0B1\n1F1,1F0,1B0,1B1\n",
                   "'BW(s=0, mb=0)' on device 0 can never start: cyclic wait");
}
END_TEST

START_TEST(test_registry)
{
    ck_assert_int_ge(ppsim_sched_registry_count(), 2);
    ck_assert_str_eq(ppsim_sched_registry_nth(0)->name, "gpipe");
    g_autoptr(GError) error = NULL;
    ck_assert_ptr_null(ppsim_sched_registry_find("1f1bb", &error));
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNKNOWN);
    ck_assert_str_eq(error->message, "unknown schedule '1f1bb' (did you mean '1f1b'?)");
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("ir");
    tcase_add_test(tc, test_generators_valid);
    tcase_add_test(tc, test_validate_errors);
    tcase_add_test(tc, test_registry);
    suite_add_tcase(s, tc);
    tc = tcase_create("csv");
    tcase_add_test(tc, test_csv_round_trip);
    tcase_add_test(tc, test_csv_extensions_round_trip);
    tcase_add_test(tc, test_csv_pytorch_cells);
    tcase_add_test(tc, test_csv_anchor);
    tcase_add_test(tc, test_csv_copy_sync);
    tcase_add_test(tc, test_csv_compute_wait);
    tcase_add_test(tc, test_csv_parse_errors);
    tcase_add_test(tc, test_csv_limits);
    suite_add_tcase(s, tc);
    return s;
}
