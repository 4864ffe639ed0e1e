/* bigalloc.h: hint that a large, freshly allocated array will be touched in full.
 *
 * On Linux, asks for transparent huge pages on the 2 MiB-aligned interior of the block
 * (madvise MADV_HUGEPAGE), so filling 100 MB costs tens of page faults instead of tens of
 * thousands; on a virtual machine each fault can cost ~10 us. A no-op elsewhere or for small
 * blocks; never changes results.
 */
#pragma once

#include <glib.h>

void ppsim_bigalloc_hint(void *data, gsize len);

/* Makes the main heap huge-page backed for its next PPSIM_BIGALLOC_HEAP bytes, for a
 * process about to fill many mid-sized arrays (a schedule's per-device lists, a replay's
 * timings and task graph): with glibc on Linux, blocks below 32 MiB then stay on the heap,
 * its top is never returned to the system, and its next PPSIM_BIGALLOC_HEAP bytes are
 * advised MADV_HUGEPAGE before anything touches them (address space only: untouched, they
 * cost no memory); ppsim_bigalloc() then takes blocks below 32 MiB from the heap too,
 * instead of rounding each up to whole huge pages. Call it once, early, from the main
 * thread; a no-op elsewhere. Returns whether it did. */
#define PPSIM_BIGALLOC_HEAP ((gsize)2040 << 20)
gboolean ppsim_bigalloc_prepare_heap(void);

/* g_malloc(@len) / g_malloc0(@len) with the hint applied. Free with g_free. */
gpointer ppsim_bigalloc(gsize len);
gpointer ppsim_bigalloc0(gsize len);
