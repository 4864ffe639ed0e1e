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

/* A GArray of @n elements reserved up front, with the hint applied. */
GArray *ppsim_bigalloc_array(gsize element_size, gsize n);

/* g_malloc(@len) / g_malloc0(@len) with the hint applied. Free with g_free. */
gpointer ppsim_bigalloc(gsize len);
gpointer ppsim_bigalloc0(gsize len);
