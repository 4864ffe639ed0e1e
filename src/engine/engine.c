/* engine.c: the discrete-event loop; see engine.h.
 *
 * The clock only moves forward: an event is never posted into the past. Entities are a
 * borrowed (vtable, state) pair each; the engine owns neither.
 */
#include "engine/engine.h"
#include "util/ppsim-error.h"

typedef struct {
    const PpsimEntityClass *klass;
    gpointer state;
} Entity;

struct PpsimEngine {
    PpsimTime now_ps;
    PpsimEventQueue queue;
    GArray *entities; /* Entity */
    guint64 processed;
};

PpsimEngine *
ppsim_engine_new(void)
{
    PpsimEngine *engine = g_new0(PpsimEngine, 1);
    ppsim_event_queue_init(&engine->queue);
    engine->entities = g_array_new(FALSE, FALSE, sizeof(Entity));
    return engine;
}

void
ppsim_engine_free(PpsimEngine *engine)
{
    if (engine == NULL)
        return;
    ppsim_event_queue_clear(&engine->queue);
    g_array_free(engine->entities, TRUE);
    g_free(engine);
}

guint32
ppsim_engine_add_entity(PpsimEngine *engine, const PpsimEntityClass *klass, gpointer state)
{
    g_return_val_if_fail(klass != NULL && klass->handle != NULL, G_MAXUINT32);
    Entity e = {klass, state};
    g_array_append_val(engine->entities, e);
    return engine->entities->len - 1;
}

void
ppsim_engine_post(PpsimEngine *engine, PpsimTime delay_ps, guint32 target, guint32 kind, gint64 a,
                  gint64 b)
{
    g_assert(delay_ps >= 0);
    g_assert(target < engine->entities->len);
    PpsimEvent ev = {
        .time_ps = engine->now_ps + delay_ps, .target = target, .kind = kind, .a = a, .b = b};
    ppsim_event_queue_push(&engine->queue, &ev);
}

PpsimTime
ppsim_engine_now(const PpsimEngine *engine)
{
    return engine->now_ps;
}

guint64
ppsim_engine_events_processed(const PpsimEngine *engine)
{
    return engine->processed;
}

static gboolean
engine_quiesce(PpsimEngine *engine, GError **error)
{
    g_autoptr(GString) why = g_string_new(NULL);
    for (guint i = 0; i < engine->entities->len; i++) {
        Entity *e = &g_array_index(engine->entities, Entity, i);
        if (e->klass->quiesce != NULL && e->klass->quiesce(e->state, why, engine)) {
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_DEADLOCK, "deadlock: %s", why->str);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ppsim_engine_run(PpsimEngine *engine, PpsimTime limit_ps, GError **error)
{
    PpsimEvent ev;
    while (ppsim_event_queue_pop(&engine->queue, &ev)) {
        if (limit_ps > 0 && ev.time_ps > limit_ps) {
            g_set_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT,
                        "simulated time limit reached at event %" G_GUINT64_FORMAT,
                        engine->processed);
            return FALSE;
        }
        g_assert(ev.time_ps >= engine->now_ps);
        engine->now_ps = ev.time_ps;
        engine->processed++;
        Entity *e = &g_array_index(engine->entities, Entity, ev.target);
        e->klass->handle(e->state, &ev, engine);
    }
    return engine_quiesce(engine, error);
}
