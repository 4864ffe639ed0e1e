/* check-event-queue.c: queue invariants (ROSS splay_order_test, git u-prio-queue.c) and the
 * engine's loop and deadlock reporting. */
#include "ppsim-test.h"
#include "engine/engine.h"
#include "util/ppsim-error.h"

#include <string.h>

START_TEST(test_order_random_and_ties)
{
    PpsimEventQueue q;
    ppsim_event_queue_init(&q);
    GRand *rng = g_rand_new_with_seed(42);
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        /* few distinct times, so most events tie */
        PpsimEvent ev = {.time_ps = g_rand_int_range(rng, 0, 50), .a = i};
        ppsim_event_queue_push(&q, &ev);
    }
    PpsimEvent prev = {.time_ps = -1}, ev;
    int count = 0;
    while (ppsim_event_queue_pop(&q, &ev)) {
        ck_assert_int_ge(ev.time_ps, prev.time_ps);
        if (ev.time_ps == prev.time_ps)
            ck_assert_int_gt(ev.a, prev.a); /* FIFO among ties: insertion order */
        prev = ev;
        count++;
    }
    ck_assert_int_eq(count, n);
    ck_assert_int_eq(ppsim_event_queue_len(&q), 0);
    g_rand_free(rng);
    ppsim_event_queue_clear(&q);
}
END_TEST

START_TEST(test_interleaved_push_pop)
{
    PpsimEventQueue q;
    ppsim_event_queue_init(&q);
    PpsimEvent ev;
    for (int round = 0; round < 1000; round++) {
        PpsimEvent a = {.time_ps = round + 5, .a = 2 * round};
        PpsimEvent b = {.time_ps = round + 5, .a = 2 * round + 1};
        ppsim_event_queue_push(&q, &a);
        ppsim_event_queue_push(&q, &b);
        ck_assert(ppsim_event_queue_pop(&q, &ev));
        ck_assert_int_eq(ev.time_ps, round / 2 + 5);
    }
    ck_assert_int_eq(ppsim_event_queue_len(&q), 1000);
    ppsim_event_queue_clear(&q);
}
END_TEST

/* Times that differ only above 32 bits, or only in their top bits, and ties among them:
 * the order is (time, insertion) however far apart the times are, and whichever heap level
 * (the queue holds up to 4 children per node) an event lands on. */
START_TEST(test_order_wide_times)
{
    const PpsimTime times[] = {
        (PpsimTime)1 << 62, 1, (PpsimTime)1 << 40, 1, ((PpsimTime)1 << 62) + 1,
        (PpsimTime)1 << 40, 0, G_MAXINT64 / 2};
    PpsimEventQueue q;
    ppsim_event_queue_init(&q);
    const int rounds = 50; /* enough events for several heap levels */
    for (int r = 0; r < rounds; r++)
        for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
            PpsimEvent ev = {.time_ps = times[i], .a = r * (int)G_N_ELEMENTS(times) + (int)i};
            ppsim_event_queue_push(&q, &ev);
        }
    PpsimEvent prev = {.time_ps = -1, .a = -1}, ev;
    int count = 0;
    while (ppsim_event_queue_pop(&q, &ev)) {
        ck_assert_int_ge(ev.time_ps, prev.time_ps);
        if (ev.time_ps == prev.time_ps)
            ck_assert_int_gt(ev.a, prev.a);
        prev = ev;
        count++;
    }
    ck_assert_int_eq(count, rounds * (int)G_N_ELEMENTS(times));
    ck_assert_int_eq(prev.time_ps, ((PpsimTime)1 << 62) + 1);
    ppsim_event_queue_clear(&q);
}
END_TEST

typedef struct {
    GArray *seen;
    int remaining;
} Counter;

static void
counter_handle(gpointer state, const PpsimEvent *ev, PpsimEngine *engine)
{
    Counter *c = state;
    gint64 t = ppsim_engine_now(engine);
    g_array_append_val(c->seen, t);
    if (ev->kind == 1 && c->remaining-- > 0)
        ppsim_engine_post(engine, 10, ev->target, 1, 0, 0);
}

static gboolean
counter_quiesce(gpointer state, GString *why, PpsimEngine *engine)
{
    (void)engine;
    Counter *c = state;
    if (c->remaining >= 0)
        return FALSE;
    g_string_append(why, "counter wants more");
    return TRUE;
}

static const PpsimEntityClass counter_class = {
    .name = "counter", .handle = counter_handle, .quiesce = counter_quiesce};

START_TEST(test_engine_clock_and_quiesce)
{
    Counter c = {g_array_new(FALSE, FALSE, sizeof(gint64)), 3};
    g_autoptr(PpsimEngine) e = ppsim_engine_new();
    guint32 id = ppsim_engine_add_entity(e, &counter_class, &c);
    ppsim_engine_post(e, 0, id, 1, 0, 0);
    g_autoptr(GError) error = NULL;
    /* remaining-- > 0 holds at t = 0, 10, 20 and fails at 30: four events; then quiesce
     * complains because remaining is -1 */
    ck_assert(!ppsim_engine_run(e, 0, &error));
    ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_DEADLOCK);
    ck_assert(strstr(error->message, "counter wants more") != NULL);
    ck_assert_int_eq(c.seen->len, 4);
    ck_assert_int_eq(g_array_index(c.seen, gint64, 3), 30);
    ck_assert_int_eq(ppsim_engine_now(e), 30);
    g_array_free(c.seen, TRUE);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("event-queue");
    TCase *tc = tcase_create("queue");
    tcase_add_test(tc, test_order_random_and_ties);
    tcase_add_test(tc, test_interleaved_push_pop);
    tcase_add_test(tc, test_order_wide_times);
    suite_add_tcase(s, tc);
    tc = tcase_create("engine");
    tcase_add_test(tc, test_engine_clock_and_quiesce);
    suite_add_tcase(s, tc);
    return s;
}
