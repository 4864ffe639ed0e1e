/* bigalloc.c: see bigalloc.h.
 *
 * Transparent huge pages can only back whole, 2 MiB-aligned 2 MiB ranges, so a block of
 * BIGALLOC_MIN or more is allocated 2 MiB-aligned and rounded up to a whole number of huge
 * pages: every byte of it can then be huge-page backed, instead of only the aligned interior
 * (about half of a 2-4 MiB block otherwise faults in 4 KiB at a time). On the development
 * VM a 4 KiB fault costs ~0.4 ms per MiB touched and a huge page ~0.05 ms per MiB.
 */
#include "util/bigalloc.h"

#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((guintptr)2 << 20)
/* below this, rounding up to a huge page would zero more than the 4 KiB faults cost */
#define BIGALLOC_MIN ((gsize)256 << 10)

void
ppsim_bigalloc_hint(void *data, gsize len)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    guintptr start = ((guintptr)data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    guintptr end = ((guintptr)data + len) & ~(HUGE_PAGE - 1);
    if (data != NULL && end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE); /* advisory: ignore errors */
#else
    (void)data;
    (void)len;
#endif
}

GArray *
ppsim_bigalloc_array(gsize element_size, gsize n)
{
    GArray *arr = g_array_sized_new(FALSE, FALSE, element_size, n);
    ppsim_bigalloc_hint(arr->data, element_size * n);
    return arr;
}

gpointer
ppsim_bigalloc(gsize len)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (len >= BIGALLOC_MIN && len <= G_MAXSIZE - HUGE_PAGE) {
        gsize rounded = (len + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        void *p = NULL;
        /* freed with g_free(), which is free() */
        if (posix_memalign(&p, HUGE_PAGE, rounded) == 0) {
            ppsim_bigalloc_hint(p, rounded);
            return p;
        }
    }
#endif
    gpointer p = g_malloc(len);
    ppsim_bigalloc_hint(p, len);
    return p;
}

gpointer
ppsim_bigalloc0(gsize len)
{
    /* not g_malloc0: calloc's fresh pages would be touched before the hint */
    gpointer p = ppsim_bigalloc(len);
    memset(p, 0, len);
    return p;
}
