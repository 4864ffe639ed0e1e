/* registry.h: the generated table of schedule generators (src/sched/meson.build). */
#pragma once

#include "sched/generator.h"

G_BEGIN_DECLS

/* Number of registered generators. */
guint ppsim_sched_registry_count(void);
/* The i-th generator in registration order. Returns: (transfer none). */
const PpsimScheduleClass *ppsim_sched_registry_nth(guint i);
/* The generator called @name, or NULL. Returns: (transfer none) (nullable). */
const PpsimScheduleClass *ppsim_sched_registry_lookup(const char *name);
/* As lookup, but sets PPSIM_SCHED_ERROR_UNKNOWN with a did-you-mean when absent. */
const PpsimScheduleClass *ppsim_sched_registry_find(const char *name, GError **error);

G_END_DECLS
