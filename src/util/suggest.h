/* suggest.h: did-you-mean suggestions (Damerau-Levenshtein, as git's help.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Edit distance between @a and @b, counting adjacent transpositions as one edit. */
guint ppsim_edit_distance(const char *a, const char *b);

/* The candidate closest to @word if it is close enough to be a plausible typo, else NULL.
 * @candidates is NULL-terminated. Ties go to the earlier candidate (deterministic).
 * Returns: (transfer none) (nullable). */
const char *ppsim_suggest(const char *word, const char *const *candidates);

G_END_DECLS
