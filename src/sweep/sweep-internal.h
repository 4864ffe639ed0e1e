/* sweep-internal.h: what sweep-file.c (the sweep file and --grid) needs of sweep.c (the
 * sweep model). Not for other folders. */
#pragma once

#include "sweep/sweep.h"

/* An empty sweep; @display names it in errors (the file, or "--grid"). */
PpsimSweep *ppsim_sweep_new_empty(const char *display);
/* A new axis over key @path, declared at @mark, in zip group @group (no values yet). */
PpsimSweepAxis *ppsim_sweep_axis_new(const char *path, PpsimMark mark, int group);
/* Appends @value (YAML flow text, the right-hand side of a `--set`) to @a, shown as @label,
 * after trying it on the base scenario; errors are prefixed by @where. @where NULL: no
 * trial (the caller knows the value passes because others it implies did). */
gboolean ppsim_sweep_axis_add(PpsimSweep *s, PpsimSweepAxis *a, const char *value,
                              const char *label, const char *where, GError **error);
/* Parses the base scenario with the fixed overrides into s->base_sc (constraint names are
 * checked on it). */
gboolean ppsim_sweep_base(PpsimSweep *s, GError **error);
/* When the base with the fixed overrides failed on a value (a layout key set for layouts
 * the axes complete), parses it again with the values of the first point (of the first
 * 4096) that makes it whole; fails with the first error when none does. Call after the
 * axes, before constraints. */
gboolean ppsim_sweep_base_on_points(PpsimSweep *s, GError **error);
/* Checks the schedule names in @value (a `schedule` value: a name, a mapping or a list);
 * errors start with @where (the value's file:line:col). */
gboolean ppsim_sweep_check_schedules(const PpsimSweep *s, const char *value, const char *where,
                                     GError **error);
/* Parses constraint @text, checks its names on the base, and appends it. */
gboolean ppsim_sweep_add_constraint(PpsimSweep *s, const char *text, const char *where,
                                    GError **error);
/* Zip groups and their lengths, the point count (bounded), the default metric columns. */
gboolean ppsim_sweep_finish(PpsimSweep *s, GError **error);
