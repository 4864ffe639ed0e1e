/* suggest.c: did-you-mean; see suggest.h. Optimal-string-alignment distance (adjacent
 * transpositions count as one edit), O(|a| x |b|) with three rolling rows. */
#include "util/suggest.h"

#include <string.h>

guint
ppsim_edit_distance(const char *a, const char *b)
{
    gsize la = strlen(a), lb = strlen(b);
    guint *prev2 = g_new0(guint, lb + 1), *prev = g_new0(guint, lb + 1),
          *cur = g_new0(guint, lb + 1);
    for (gsize j = 0; j <= lb; j++)
        prev[j] = j;
    for (gsize i = 1; i <= la; i++) {
        cur[0] = i;
        for (gsize j = 1; j <= lb; j++) {
            guint cost = a[i - 1] == b[j - 1] ? 0 : 1;
            guint best = MIN(MIN(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = MIN(best, prev2[j - 2] + 1);
            cur[j] = best;
        }
        guint *tmp = prev2;
        prev2 = prev;
        prev = cur;
        cur = tmp;
    }
    guint d = prev[lb];
    g_free(prev2);
    g_free(prev);
    g_free(cur);
    return d;
}

/* @s in lower case without '-', '_' and spaces: "ZB_V" and "zbv" are both "zbv". */
static char *
squeeze(const char *s)
{
    GString *t = g_string_new(NULL);
    for (; *s; s++)
        if (*s != '-' && *s != '_' && *s != ' ')
            g_string_append_c(t, g_ascii_tolower(*s));
    return g_string_free(t, FALSE);
}

const char *
ppsim_suggest(const char *word, const char *const *candidates)
{
    /* the same word but for case and separators ("zbv" -> "zb-v") beats any edit */
    g_autofree char *w = squeeze(word);
    for (const char *const *c = candidates; *w && *c; c++) {
        g_autofree char *k = squeeze(*c);
        if (strcmp(w, k) == 0)
            return *c;
    }
    const char *best = NULL;
    guint best_d = G_MAXUINT;
    gsize len = strlen(word);
    guint limit = MAX(1, (guint)(len / 3));
    for (const char *const *c = candidates; *c; c++) {
        guint d = ppsim_edit_distance(word, *c);
        if (d < best_d) {
            best_d = d;
            best = *c;
        }
    }
    if (best != NULL && best_d <= limit)
        return best;
    /* a unique candidate starting with what was typed ("hard" -> "hardware") */
    const char *prefix = NULL;
    for (const char *const *c = candidates; len >= 2 && *c; c++)
        if (g_str_has_prefix(*c, word)) {
            if (prefix != NULL)
                return NULL;
            prefix = *c;
        }
    return prefix;
}
