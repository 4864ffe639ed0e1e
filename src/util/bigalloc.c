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
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
#include <malloc.h>
#include <unistd.h>
#define BIGALLOC_HEAP_OK 1
#endif

#define HUGE_PAGE ((guintptr)2 << 20)
/* below this, rounding up to a huge page would zero more than the 4 KiB faults cost */
#define BIGALLOC_MIN ((gsize)256 << 10)

/* Set once by ppsim_bigalloc_prepare_heap(), from the main thread before any other starts. */
static gboolean heap_prepared;
/* The heap's bytes before the advised range, kept in use. Never read: volatile, or the
 * compiler drops the allocation along with the store. */
static void *volatile heap_lead;

gboolean
ppsim_bigalloc_prepare_heap(void)
{
#ifdef BIGALLOC_HEAP_OK
    if (heap_prepared)
        return TRUE;
    /* the largest threshold glibc takes: blocks below it come from the heap (brk); and a
     * free never shrinks the heap, so the advised range stays put */
    if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, G_MAXINT) != 1)
        return FALSE;
    /* grow the heap once by the reserve (a block below the threshold plus the padding
     * malloc adds when it moves the break), advise the new range while untouched, and give
     * the block back to the top of the heap for what follows. malloc writes a header at
     * each end of the block before the advice: a range of 4 KiB pages then, so the block is
     * made as large as the threshold allows, to put that one range far past where most runs
     * end. Where the break cannot move that far, malloc takes its memory elsewhere and the
     * heap stays as it was. */
    const gsize probe = (31 << 20);
    char *before = sbrk(0);
    if (mallopt(M_TOP_PAD, (int)MIN(PPSIM_BIGALLOC_HEAP - probe, G_MAXINT)) != 1)
        return FALSE;
    char *reserve = malloc(probe);
    char *after = sbrk(0);
    mallopt(M_TOP_PAD, 128 << 10); /* glibc's default */
    /* the block starts in the old top of the heap and ends in what the break added */
    gboolean grown =
        reserve != NULL && after > before && reserve + probe <= after && reserve + probe > before;
    gsize skip = (((guintptr)reserve + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)) - (guintptr)reserve;
    if (grown)
        ppsim_bigalloc_hint(reserve, (gsize)(after - reserve));
    free(reserve);
    if (!grown)
        return FALSE; /* the break did not move: malloc took memory elsewhere */
    /* the advised range starts at the reserve's first huge page: keep the bytes before it
     * (less a chunk header's room) in use, so that what comes next starts there (never
     * touched, never freed: it costs address space only) */
    if (skip > 64)
        heap_lead = malloc(skip - 64);
    heap_prepared = TRUE;
    return TRUE;
#else
    return FALSE;
#endif
}

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

gpointer
ppsim_bigalloc(gsize len)
{
    if (heap_prepared && len < (32 << 20))
        return g_malloc(len); /* from the heap, huge-page backed already: no rounding */
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
