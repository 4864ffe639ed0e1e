/* schedule-csv-cell.c: one cell of a schedule CSV, `<stage><kind>...` (scenarios/README.md
 * "Schedules as data"): the full grammar with its messages, and the fast path for the usual cells;
 * schedule-csv.c splits the file into cells and places the ops. */
#include "schedule/schedule-csv-internal.h"
#include "util/quote.h"
#include "util/ppsim-error.h"

#include <string.h>

gboolean
csv_fail(GError **error, const CsvLoc *loc, const char *cell, const char *why)
{
    g_autofree char *q = ppsim_quote(cell);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE, "%s:%d:%d: %s '%s'%s", loc->name,
                loc->line, loc->col, why, q,
                strchr(cell, '\r') ? " (a CR inside a line: lines end in LF or CRLF)" : "");
    return FALSE;
}

static gboolean
csv_is_comm_action(const char *kind)
{
    static const char *const comm[] = {"SEND_F",  "RECV_F",  "SEND_B",      "RECV_B",
                                       "UNSHARD", "RESHARD", "REDUCE_GRAD", NULL};
    for (int i = 0; comm[i]; i++)
        if (g_str_has_prefix(kind, comm[i]))
            return TRUE;
    return FALSE;
}

/* Parses one trimmed, non-empty cell. *@skip is set for ignored communication actions. A copy
 * cell's cross-device waits `^r.i` are appended to @syncs (.op left for the caller); a
 * compute cell's wait `&i` on its row's copy action i is returned in *@after. */
gboolean
csv_parse_cell(const char *cell, const CsvLoc *loc, PpsimOp *op, gint32 *after, GArray *syncs,
               gboolean *skip, GError **error)
{
    const char *p = cell;
    *skip = FALSE;
    *after = -1;
    if (!g_ascii_isdigit(*p))
        return csv_fail(error, loc, cell, "action must start with a stage number, got");
    char *end = NULL;
    gint64 stage = g_ascii_strtoll(p, &end, 10);
    p = end;
    if (csv_is_comm_action(p)) {
        *skip = TRUE;
        return TRUE;
    }
    static const struct {
        const char *code;
        PpsimOpKind kind;
        guint8 flags;
    } kinds[] = {{"SC", PPSIM_OP_OPT, PPSIM_OP_FLAG_CPU},
                 {"S", PPSIM_OP_OPT, 0},
                 {"F", PPSIM_OP_F, 0},
                 {"I", PPSIM_OP_B, 0},
                 {"W", PPSIM_OP_W, 0},
                 {"B", PPSIM_OP_BW, 0},
                 {"R", PPSIM_OP_R, 0},
                 {"OG", PPSIM_OP_GOFF, 0},
                 {"LW", PPSIM_OP_WRL, 0},
                 {"O", PPSIM_OP_OFF, 0},
                 {"L", PPSIM_OP_RL, 0}};
    int k = -1;
    for (guint i = 0; i < G_N_ELEMENTS(kinds) && k < 0; i++)
        if (g_str_has_prefix(p, kinds[i].code))
            k = i;
    if (k < 0)
        return csv_fail(error, loc, cell,
                        "unknown action kind (expected F, I, W, B, R, O, L, OG, LW, S or SC) in");
    p += strlen(kinds[k].code);
    gint64 mb = -1;
    guint16 share = 0;
    if (kinds[k].kind == PPSIM_OP_OPT) {
        if (*p != '\0')
            return csv_fail(error, loc, cell, "an optimizer step takes no microbatch, got");
    } else {
        gboolean per_stage = ppsim_op_kind_per_stage(kinds[k].kind);
        if (!per_stage && !g_ascii_isdigit(*p))
            return csv_fail(error, loc, cell, "missing microbatch number in");
        if (per_stage && g_ascii_isdigit(*p))
            return csv_fail(error, loc, cell, "a model-state transfer takes no microbatch, got");
        end = (char *)p;
        if (!per_stage)
            mb = g_ascii_strtoll(p, &end, 10);
        if (kinds[k].kind == PPSIM_OP_WRL && *end == '%') {
            char *bits_end = NULL;
            gint64 bits = g_ascii_strtoll(end + 1, &bits_end, 10);
            if (bits_end == end + 1 || !g_ascii_isdigit(end[1]) || bits < 1 || bits > 32)
                return csv_fail(error, loc, cell, "bad weight bits (expected %1..%32) in");
            share = (guint16)bits;
            end = bits_end;
        }
        if (kinds[k].kind == PPSIM_OP_R && *end == '%') {
            char *share_end = NULL;
            gint64 pct = g_ascii_strtoll(end + 1, &share_end, 10);
            if (share_end == end + 1 || !g_ascii_isdigit(end[1]) || pct < 1 || pct > 100)
                return csv_fail(error, loc, cell, "bad recompute share (expected %1..%100) in");
            share = (guint16)pct;
            end = share_end;
        }
        gboolean copy = ppsim_op_kind_is_copy(kinds[k].kind);
        if (copy && *end == '@') {
            char *anchor_end = NULL;
            gint64 a = g_ascii_strtoll(end + 1, &anchor_end, 10);
            if (anchor_end == end + 1 || (*anchor_end != '\0' && *anchor_end != '^') || a < 0 ||
                a > G_MAXINT32 / 2)
                return csv_fail(error, loc, cell, "bad anchor (expected @<compute index>) in");
            *after = (gint32)a;
            end = anchor_end;
        }
        if (!copy && *end == '&') {
            char *wait_end = NULL;
            gint64 a = g_ascii_strtoll(end + 1, &wait_end, 10);
            if (wait_end == end + 1 || !g_ascii_isdigit(end[1]) || a > G_MAXINT32 / 2)
                return csv_fail(error, loc, cell, "bad wait (expected &<copy index>) in");
            *after = (gint32)a;
            end = wait_end;
        }
        while (copy && *end == '^') {
            char *dev_end = NULL, *idx_end = NULL;
            gint64 dev = g_ascii_strtoll(end + 1, &dev_end, 10);
            gint64 at = -1;
            if (dev_end != end + 1 && *dev_end == '.')
                at = g_ascii_strtoll(dev_end + 1, &idx_end, 10);
            if (at < 0 || idx_end == dev_end + 1 || !g_ascii_isdigit(end[1]) ||
                !g_ascii_isdigit(dev_end[1]) || dev > G_MAXINT32 / 2 || at > G_MAXINT32 / 2)
                return csv_fail(error, loc, cell,
                                "bad cross-device wait (expected ^<row>.<copy index>) in");
            PpsimCopySync e = {-1, (gint32)dev, (gint32)at};
            g_array_append_val(syncs, e);
            end = idx_end;
        }
        if (*end != '\0')
            return csv_fail(error, loc, cell, "trailing characters in action");
    }
    if (stage > G_MAXINT32 / 2 || mb > G_MAXINT32 / 2)
        return csv_fail(error, loc, cell, "number too large in action");
    *op = (PpsimOp){.kind = kinds[k].kind,
                    .flags = kinds[k].flags,
                    .share = share,
                    .stage = (gint32)stage,
                    .microbatch = (gint32)mb};
    return TRUE;
}

/* Fast path for the common well-formed cell `<stage><F|I|W|B|R|O|L><mb>[@k]`, `<stage>S` or
 * `<stage>SC`, read in place from [@p, @end) with no copy. Returns FALSE for anything else
 * (communication actions, errors, numbers of more than 9 digits): the caller then takes the
 * general path, which produces the same op or the error message. */
gboolean
csv_parse_cell_fast(const char *p, const char *end, PpsimOp *op, gint32 *after)
{
    gint32 stage = 0, mb = 0, anchor = -1;
    int digits = 0;
    for (; p < end && g_ascii_isdigit(*p) && digits < 9; p++, digits++)
        stage = 10 * stage + (*p - '0');
    if (digits == 0 || p == end || g_ascii_isdigit(*p))
        return FALSE;
    char code = *p++;
    if (code == 'S') {
        gboolean cpu = p < end && *p == 'C';
        if (p + cpu != end)
            return FALSE;
        *op = (PpsimOp){.kind = PPSIM_OP_OPT,
                        .flags = cpu ? PPSIM_OP_FLAG_CPU : 0,
                        .stage = stage,
                        .microbatch = -1};
        *after = -1;
        return TRUE;
    }
    PpsimOpKind kind;
    if (!csv_kind_of(code, &kind))
        return FALSE;
    for (digits = 0; p < end && g_ascii_isdigit(*p) && digits < 9; p++, digits++)
        mb = 10 * mb + (*p - '0');
    if (digits == 0 || (p < end && g_ascii_isdigit(*p)))
        return FALSE;
    if (p < end && *p == '@' && (kind == PPSIM_OP_OFF || kind == PPSIM_OP_RL)) {
        p++;
        anchor = 0;
        for (digits = 0; p < end && g_ascii_isdigit(*p) && digits < 9; p++, digits++)
            anchor = 10 * anchor + (*p - '0');
        if (digits == 0 || anchor > G_MAXINT32 / 2)
            return FALSE;
    }
    if (p != end)
        return FALSE;
    *op = (PpsimOp){.kind = kind, .stage = stage, .microbatch = mb};
    *after = anchor;
    return TRUE;
}
