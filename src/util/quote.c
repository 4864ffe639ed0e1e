/* quote.c: input quoted in messages, escaped and capped (quote.h). */
#include "util/quote.h"

#include <string.h>

/* Appends one character of [@p, @end) to @out, escaped when it is a control character or
 * not UTF-8 (@keep_newline: '\n' as is); returns the bytes it took. */
static gsize
quote_char(GString *out, const char *p, const char *end, gboolean keep_newline)
{
    guchar c = (guchar)*p;
    if (c >= 0x20 && c < 0x7f) {
        g_string_append_c(out, (char)c);
        return 1;
    }
    if (c == '\n' && keep_newline) {
        g_string_append_c(out, '\n');
        return 1;
    }
    if (c < 0x80) {
        switch (c) {
        case '\n':
            g_string_append(out, "\\n");
            break;
        case '\r':
            g_string_append(out, "\\r");
            break;
        case '\t':
            g_string_append(out, "\\t");
            break;
        default:
            g_string_append_printf(out, "\\x%02X", c);
        }
        return 1;
    }
    /* a multi-byte character when valid UTF-8, else one escaped byte */
    const char *next = NULL;
    gssize avail = end - p;
    gunichar u = g_utf8_get_char_validated(p, MIN(avail, 4));
    if (u != (gunichar)-1 && u != (gunichar)-2 && u >= 0xa0) {
        next = g_utf8_next_char(p);
        g_string_append_len(out, p, next - p);
        return (gsize)(next - p);
    }
    g_string_append_printf(out, "\\x%02X", c);
    return 1;
}

static void
quote_append_max(GString *out, const char *text, gssize len, int max)
{
    if (text == NULL) {
        g_string_append(out, "(null)");
        return;
    }
    const char *p = text, *end = text + (len < 0 ? (gssize)strlen(text) : len);
    for (int shown = 0; p < end; shown++) {
        if (shown == max) {
            g_string_append(out, "…");
            return;
        }
        p += quote_char(out, p, end, FALSE);
    }
}

void
ppsim_quote_append(GString *out, const char *text, gssize len)
{
    quote_append_max(out, text, len, PPSIM_QUOTE_MAX);
}

char *
ppsim_quote_path(const char *path)
{
    GString *out = g_string_new(NULL);
    quote_append_max(out, path, -1, PPSIM_QUOTE_PATH_MAX);
    return g_string_free(out, FALSE);
}

char *
ppsim_quote_len(const char *text, gssize len)
{
    GString *out = g_string_new(NULL);
    ppsim_quote_append(out, text, len);
    return g_string_free(out, FALSE);
}

char *
ppsim_quote(const char *text)
{
    return ppsim_quote_len(text, -1);
}

char *
ppsim_message_sanitize(const char *message, gsize max_bytes)
{
    GString *out = g_string_new(NULL);
    const char *p = message, *end = message + strlen(message);
    while (p < end) {
        if (out->len >= max_bytes) {
            g_string_append(out, "…");
            break;
        }
        p += quote_char(out, p, end, TRUE);
    }
    return g_string_free(out, FALSE);
}
