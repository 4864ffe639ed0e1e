/* engine.h: the discrete-event core. It knows nothing of pipelines or hardware.
 *
 * Entities register a small vtable (ROSS's tw_lptype, minus everything optimistic) and get
 * an id; events are POD values posted to an entity at a future time. The loop pops events in
 * (time, seq) order and dispatches them. When the queue drains, each entity's quiesce hook
 * may explain unfinished work, which becomes PPSIM_SIM_ERROR_DEADLOCK. No global state: many
 * engines can run in one process, each on one thread.
 */
#pragma once

#include <glib.h>
#include "engine/event-queue.h"

G_BEGIN_DECLS

typedef struct PpsimEngine PpsimEngine;

typedef struct {
    const char *name;
    /* Handles one event addressed to this entity. */
    void (*handle)(gpointer state, const PpsimEvent *ev, PpsimEngine *engine);
    /* (nullable) Called when the queue is empty: append why work is unfinished to @why and
     * return TRUE, or return FALSE when the entity is done. */
    gboolean (*quiesce)(gpointer state, GString *why, PpsimEngine *engine);
} PpsimEntityClass;

PpsimEngine *ppsim_engine_new(void);
void ppsim_engine_free(PpsimEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimEngine, ppsim_engine_free)

/* Registers an entity; @state is borrowed (the caller owns it). Returns the entity id. */
guint32 ppsim_engine_add_entity(PpsimEngine *engine, const PpsimEntityClass *klass, gpointer state);

/* Posts an event to @target at now + @delay_ps (delay >= 0). */
void ppsim_engine_post(PpsimEngine *engine, PpsimTime delay_ps, guint32 target, guint32 kind,
                       gint64 a, gint64 b);

PpsimTime ppsim_engine_now(const PpsimEngine *engine);
guint64 ppsim_engine_events_processed(const PpsimEngine *engine);

/* Runs until the queue is empty or the clock would pass @limit_ps (<= 0: no limit).
 * Errors: PPSIM_SIM_ERROR_DEADLOCK when an entity reports unfinished work at quiescence,
 * PPSIM_SIM_ERROR_LIMIT when the limit is hit. */
gboolean ppsim_engine_run(PpsimEngine *engine, PpsimTime limit_ps, GError **error);

G_END_DECLS
