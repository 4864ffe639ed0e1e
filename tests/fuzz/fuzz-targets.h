/* fuzz-targets.h: the bodies of the fuzz harnesses, shared by the libFuzzer entry points
 * (fuzz-<name>.c, built with -Dfuzz=true and clang) and by the Check test that replays the
 * inputs kept under tests/data/fuzz-regress/<name>/ (check-fuzz-regress.c, any compiler). */
#pragma once

#include <glib.h>

/* Each takes any bytes and must return without crashing, leaking or undefined behaviour;
 * errors in the input are expected and ignored. */
void ppsim_fuzz_scenario(const guint8 *data, gsize size); /* a scenario file */
void ppsim_fuzz_set(const guint8 *data, gsize size);      /* --set lines on a fixed base */
void ppsim_fuzz_csv(const guint8 *data, gsize size);      /* a schedule CSV file */

typedef void (*PpsimFuzzFunc)(const guint8 *data, gsize size);

/* The harness named @name ("scenario", "set", "csv"), or NULL. */
PpsimFuzzFunc ppsim_fuzz_lookup(const char *name);
