/* schedule-csv-internal.h: what schedule-csv.c (the reader) and schedule-csv-cell.c (one
 * cell's grammar) share. Not part of the library's interface: see schedule.h. */
#pragma once

#include "schedule/schedule.h"

#include <string.h>

/* Where a cell is, for messages: "name:line:col: ...". */
typedef struct {
    const char *name;
    int line, col;
} CsvLoc;

/* Sets @error to "name:line:col: @why '@cell'" (PPSIM_SCHED_ERROR_PARSE); returns FALSE. */
gboolean csv_fail(GError **error, const CsvLoc *loc, const char *cell, const char *why);

/* Parses one trimmed, non-empty cell. *@skip is set for ignored communication actions. A copy
 * cell's cross-device waits `^r.i` are appended to @syncs (.op left for the caller); a
 * compute cell's wait `&i` on its row's copy action i is returned in *@after. */
gboolean csv_parse_cell(const char *cell, const CsvLoc *loc, PpsimOp *op, gint32 *after,
                        GArray *syncs, gboolean *skip, GError **error);

/* Fast path for the common well-formed cell `<stage><F|I|W|B|R|O|L><mb>[@k]`, `<stage>S` or
 * `<stage>SC`, read in place from [@p, @end) with no copy. Returns FALSE for anything else
 * (communication actions, errors, numbers of more than 9 digits): the caller then takes the
 * general path, which produces the same op or the error message. */
gboolean csv_parse_cell_fast(const char *p, const char *end, PpsimOp *op, gint32 *after);

/* Commas in [@p, @end), eight bytes at a time: a byte of w ^ ",,,,,,,," is zero exactly
 * where w has a comma; the expression below sets the top bit of exactly those bytes, and
 * the multiplication sums those bits into the top byte. */
static inline guint
csv_count_commas(const char *p, const char *end)
{
    const guint64 commas = 0x2c2c2c2c2c2c2c2cull, low7 = 0x7f7f7f7f7f7f7f7full;
    const guint64 ones = 0x0101010101010101ull;
    guint n = 0;
    for (; end - p >= 8; p += 8) {
        guint64 w;
        memcpy(&w, p, sizeof w);
        guint64 x = w ^ commas;
        guint64 zero = ~(((x & low7) + low7) | x | low7) >> 7;
        n += (guint)((zero * ones) >> 56);
    }
    for (; p < end; p++)
        n += *p == ',';
    return n;
}

/* The op kind a cell's letter names: F, I (B), W, B (BW), R, O (OFF), L (RL); FALSE for any
 * other letter. */
static inline gboolean
csv_kind_of(char letter, PpsimOpKind *kind)
{
    switch (letter) {
    case 'F':
        *kind = PPSIM_OP_F;
        return TRUE;
    case 'I':
        *kind = PPSIM_OP_B;
        return TRUE;
    case 'W':
        *kind = PPSIM_OP_W;
        return TRUE;
    case 'B':
        *kind = PPSIM_OP_BW;
        return TRUE;
    case 'R':
        *kind = PPSIM_OP_R;
        return TRUE;
    case 'O':
        *kind = PPSIM_OP_OFF;
        return TRUE;
    case 'L':
        *kind = PPSIM_OP_RL;
        return TRUE;
    default:
        return FALSE;
    }
}

/* The common compute cell, `<stage><F|I|W|B|R><mb>` with no spaces, read in place from
 * *@at up to a comma or @end (numbers of 9 digits at most) into *@op, field by field (the
 * caller's array slot: no copy), and *@at moved past it. FALSE, nothing moved, for anything
 * else (the general path then reads the cell). */
static inline gboolean
csv_compute_cell(const char **at, const char *end, PpsimOp *op)
{
    const char *p = *at;
    gint32 stage = 0, mb = 0;
    int digits = 0;
    for (; p < end && (guint)(*p - '0') < 10 && digits < 9; p++, digits++)
        stage = 10 * stage + (*p - '0');
    if (digits == 0 || p == end)
        return FALSE;
    PpsimOpKind kind;
    if (!csv_kind_of(*p++, &kind) || kind == PPSIM_OP_OFF || kind == PPSIM_OP_RL)
        return FALSE;
    for (digits = 0; p < end && (guint)(*p - '0') < 10 && digits < 9; p++, digits++)
        mb = 10 * mb + (*p - '0');
    if (digits == 0 || (p < end && *p != ','))
        return FALSE;
    op->kind = (guint8)kind;
    op->flags = 0;
    op->share = 0;
    op->stage = stage;
    op->microbatch = mb;
    *at = p;
    return TRUE;
}
