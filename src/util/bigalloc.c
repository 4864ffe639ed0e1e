/* bigalloc.c: see bigalloc.h. */
#include "util/bigalloc.h"

#include <string.h>

#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((guintptr)2 << 20)

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
