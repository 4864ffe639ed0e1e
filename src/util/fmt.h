/* fmt.h: locale-independent number formatting for every output format. */
#pragma once

#include <glib.h>
#include "util/units.h"

G_BEGIN_DECLS

/* Appends @value with @decimals fixed decimals, '.' as separator, no locale effects;
 * negative zero prints as zero so outputs stay byte-identical. */
void ppsim_fmt_fixed(GString *out, double value, int decimals);

/* Appends the shortest decimal that reads back as the same double ("%.17g" trimmed). */
void ppsim_fmt_double(GString *out, double value);

/* Appends a time as milliseconds with up to 9 decimals, exact for integer picoseconds when
 * they are whole nanoseconds (e.g. "12.5", "0.000001"). */
void ppsim_fmt_ms(GString *out, PpsimTime t_ps);

/* Appends a byte count with a binary unit for humans ("12.50 GiB"). */
void ppsim_fmt_bytes_human(GString *out, double bytes);

G_END_DECLS

G_BEGIN_DECLS
/* Appends a memory amount in memory units: an integer count of bytes when @scale is 1,
 * else value / @scale as a shortest round-trip number (explicit-mode units). */
void ppsim_fmt_mem(GString *out, gint64 value, double scale);
/* Appends @s as a JSON string literal (quotes, backslashes and control characters escaped). */
void ppsim_fmt_json_string(GString *out, const char *s);
/* Appends @s as one CSV field (RFC 4180): quoted when it holds a comma, a double quote, CR or
 * LF, with double quotes doubled. With @one_line, CR and LF become spaces inside the quotes,
 * for files read back line by line (the sweep's rows). */
void ppsim_fmt_csv_field(GString *out, const char *s, gboolean one_line);
/* Appends @s with XML's five special characters escaped. */
void ppsim_fmt_xml_text(GString *out, const char *s);
G_END_DECLS
