/* fmt.c: locale-independent number formatting; see fmt.h. */
#include "util/fmt.h"

#include <math.h>
#include <string.h>

void
ppsim_fmt_fixed(GString *out, double value, int decimals)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE + 32];
    char format[16];
    g_snprintf(format, sizeof format, "%%.%df", CLAMP(decimals, 0, 17));
    g_ascii_formatd(buf, sizeof buf, format, value);
    /* "-0.00" would differ from "0.00" across platforms and runs: print zero plainly */
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
        g_string_append(out, buf + 1);
    else
        g_string_append(out, buf);
}

void
ppsim_fmt_double(GString *out, double value)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (value == 0.0)
        value = 0.0; /* folds -0.0 */
    if (!isfinite(value)) {
        g_string_append(out, "null");
        return;
    }
    /* shortest of %.15g..%.17g that reads back exactly */
    for (int prec = 15; prec <= 17; prec++) {
        char format[8];
        g_snprintf(format, sizeof format, "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof buf, format, value);
        if (prec == 17 || g_ascii_strtod(buf, NULL) == value)
            break;
    }
    g_string_append(out, buf);
}

void
ppsim_fmt_ms(GString *out, PpsimTime t_ps)
{
    /* integer arithmetic: whole ms, then up to 9 decimals with trailing zeros trimmed */
    gboolean neg = t_ps < 0;
    guint64 v = neg ? (guint64)(-t_ps) : (guint64)t_ps;
    guint64 whole = v / (guint64)PPSIM_PS_PER_MS, frac = v % (guint64)PPSIM_PS_PER_MS;
    g_string_append_printf(out, "%s%" G_GUINT64_FORMAT, neg ? "-" : "", whole);
    if (frac == 0)
        return;
    char digits[16];
    g_snprintf(digits, sizeof digits, "%09" G_GUINT64_FORMAT, frac);
    int len = 9;
    while (len > 0 && digits[len - 1] == '0')
        len--;
    g_string_append_printf(out, ".%.*s", len, digits);
}

void
ppsim_fmt_bytes_human(GString *out, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (fabs(bytes) >= 1024.0 && u < (int)G_N_ELEMENTS(units) - 1) {
        bytes /= 1024.0;
        u++;
    }
    ppsim_fmt_fixed(out, bytes, u == 0 ? 0 : 2);
    g_string_append_printf(out, " %s", units[u]);
}

void
ppsim_fmt_json_string(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_printf(out, "\\%c", *p);
        else if (*p < 0x20)
            g_string_append_printf(out, "\\u%04x", *p);
        else
            g_string_append_c(out, (char)*p);
    }
    g_string_append_c(out, '"');
}

void
ppsim_fmt_csv_field(GString *out, const char *s, gboolean one_line)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        g_string_append(out, s);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, one_line && (*p == '\n' || *p == '\r') ? ' ' : *p);
    }
    g_string_append_c(out, '"');
}

void
ppsim_fmt_xml_text(GString *out, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '&':
            g_string_append(out, "&amp;");
            break;
        case '<':
            g_string_append(out, "&lt;");
            break;
        case '>':
            g_string_append(out, "&gt;");
            break;
        case '"':
            g_string_append(out, "&quot;");
            break;
        case '\'':
            g_string_append(out, "&apos;");
            break;
        default:
            g_string_append_c(out, *p);
        }
    }
}

void
ppsim_fmt_mem(GString *out, gint64 value, double scale)
{
    if (scale == 1.0)
        g_string_append_printf(out, "%" G_GINT64_FORMAT, value);
    else
        ppsim_fmt_double(out, (double)value / scale);
}
