/* quote.h: user input as an error message may show it.
 *
 * Messages quote what the user wrote ("unknown preset 'x'"); a 10 MB value would be echoed
 * whole, and a CR or an escape sequence in it would garble the terminal. Every message that
 * quotes input passes it through ppsim_quote(): at most PPSIM_QUOTE_MAX characters then "…",
 * control characters and bytes that are not UTF-8 written as escapes (\r, \n, \t, \xNN).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Most characters of input a message quotes. */
#define PPSIM_QUOTE_MAX 100

/* Appends @text (@len bytes, or up to its NUL when @len < 0) to @out, escaped and capped
 * at PPSIM_QUOTE_MAX characters (escapes count one each) with "…" when cut. */
void ppsim_quote_append(GString *out, const char *text, gssize len);

/* @text escaped and capped as ppsim_quote_append() does; NULL gives "(null)". (transfer full) */
char *ppsim_quote(const char *text);
char *ppsim_quote_len(const char *text, gssize len);

/* A file name as messages show it: escaped as ppsim_quote() does, capped at
 * PPSIM_QUOTE_PATH_MAX characters (a real path can be longer than 100). (transfer full) */
#define PPSIM_QUOTE_PATH_MAX 1024
char *ppsim_quote_path(const char *path);

/* A whole message made safe to print: control characters other than newline escaped,
 * bytes that are not UTF-8 as \xNN, and cut after @max_bytes with "…". The last guard of
 * the CLI's error printing, for any message that quotes input unescaped. (transfer full) */
char *ppsim_message_sanitize(const char *message, gsize max_bytes);

G_END_DECLS
