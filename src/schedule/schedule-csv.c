/* schedule-csv.c: schedules as PyTorch pipelining CSV (README "Schedules as data"); see schedule.h.
 *
 * Row r lists rank r's actions in order, one per cell: <stage><kind><microbatch>, kind F
 * (forward), I (backward for inputs), W (backward for weights), B (full backward), stage the
 * global stage index. Empty cells (idle steps) are skipped. PyTorch's communication and FSDP
 * actions (SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD) are accepted and
 * ignored: ppsim derives transfers from dependencies. ppsim's extensions: R (recompute;
 * `%<share>` after the microbatch: a partial recompute of that percent), O (offload) and L
 * (reload) take a microbatch; <stage>S is the stage's optimizer step and
 * <stage>SC the same on a host CPU worker; <stage>OG and <stage>LW[%bits] move a stage's
 * gradients to the host and its (quantized) weights back (T-Offload). A cell `|` separates the
 * compute actions from the copy-stream actions (O, L) of the same rank. A copy action may end in
 * `@k` (it waits for the row's k-th compute action) and `^r.i` suffixes (it waits for row r's i-th
 * copy action: the cross-device events of [PO] App. D).
 */
#include "schedule/schedule.h"
#include "util/ppsim-error.h"

#include <stdlib.h>
#include <string.h>

static const char *
csv_kind_code(const PpsimOp *op)
{
    switch ((PpsimOpKind)op->kind) {
    case PPSIM_OP_F:
        return "F";
    case PPSIM_OP_B:
        return "I";
    case PPSIM_OP_W:
        return "W";
    case PPSIM_OP_BW:
        return "B";
    case PPSIM_OP_R:
        return "R";
    case PPSIM_OP_OFF:
        return "O";
    case PPSIM_OP_RL:
        return "L";
    case PPSIM_OP_OPT:
        return (op->flags & PPSIM_OP_FLAG_CPU) ? "SC" : "S";
    case PPSIM_OP_GOFF:
        return "OG";
    case PPSIM_OP_WRL:
        return "LW";
    default:
        g_assert_not_reached();
    }
}

static void
csv_append_ops(GString *out, const GArray *ops, const GArray *after, const GArray *syncs,
               gboolean *first)
{
    guint k = 0; /* cursor into @syncs, sorted by copy op */
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (!*first)
            g_string_append_c(out, ',');
        *first = FALSE;
        g_string_append_printf(out, "%d%s", op->stage, csv_kind_code(op));
        if (!ppsim_op_kind_per_stage(op->kind))
            g_string_append_printf(out, "%d", op->microbatch);
        if ((op->kind == PPSIM_OP_R || op->kind == PPSIM_OP_WRL) && op->share != 0)
            g_string_append_printf(out, "%%%d", op->share);
        if (after != NULL && g_array_index(after, gint32, i) >= 0)
            g_string_append_printf(out, "@%d", g_array_index(after, gint32, i));
        for (; syncs != NULL && k < syncs->len; k++) {
            const PpsimCopySync *e = &g_array_index(syncs, PpsimCopySync, k);
            if (e->op != (gint32)i)
                break;
            g_string_append_printf(out, "^%d.%d", e->device, e->index);
        }
    }
}

GString *
ppsim_schedule_to_csv(const PpsimSchedule *sched)
{
    GString *out = g_string_new(NULL);
    for (int d = 0; d < sched->n_devices; d++) {
        gboolean first = TRUE;
        csv_append_ops(out, sched->compute[d], NULL, NULL, &first);
        if (sched->copy[d]->len > 0) {
            g_string_append(out, first ? "|" : ",|");
            first = FALSE;
            csv_append_ops(out, sched->copy[d], sched->copy_after[d], sched->copy_sync[d], &first);
        }
        g_string_append_c(out, '\n');
    }
    return out;
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int line, col;
} CsvLoc;

static gboolean
csv_fail(GError **error, const CsvLoc *loc, const char *cell, const char *why)
{
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE, "%s:%d:%d: %s '%s'", loc->name,
                loc->line, loc->col, why, cell);
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
 * cell's cross-device waits `^r.i` are appended to @syncs (.op left for the caller). */
static gboolean
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
static gboolean
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
    switch (code) {
    case 'F':
        kind = PPSIM_OP_F;
        break;
    case 'I':
        kind = PPSIM_OP_B;
        break;
    case 'W':
        kind = PPSIM_OP_W;
        break;
    case 'B':
        kind = PPSIM_OP_BW;
        break;
    case 'R':
        kind = PPSIM_OP_R;
        break;
    case 'O':
        kind = PPSIM_OP_OFF;
        break;
    case 'L':
        kind = PPSIM_OP_RL;
        break;
    default:
        return FALSE;
    }
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

/* What the reader builds, one row (device) at a time. */
typedef struct {
    const char *name;
    GPtrArray *compute, *copy, *copy_after, *copy_sync; /* [rows] GArray */
    GArray *sync_at;    /* CsvLoc per copy_sync entry of every row, in reading order */
    GArray *cell_syncs; /* PpsimCopySync: the waits of the cell being read */
    GArray *stage_row;  /* gint32 per stage: its row, -1 none yet */
    int max_stage, max_mb, last_row, n_cells;
    guint n_compute;  /* compute ops placed in the current row */
    GError *deferred; /* first placement error, reported once the whole file parsed */
} CsvReader;

static void
csv_defer(CsvReader *rd, int line, int col, const PpsimOp *op, const char *why)
{
    if (rd->deferred != NULL)
        return;
    g_autoptr(GString) what = g_string_new(NULL);
    ppsim_op_describe(what, op);
    g_set_error(&rd->deferred, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE, "%s:%d:%d: '%s' %s",
                rd->name, line, col, what->str, why);
}

/* Places one op of @row (a copy-stream op when @copy, i.e. after a '|' cell), with the
 * cross-device waits in @syncs (nullable). */
static void
csv_add(CsvReader *rd, int row, int line, int col, gboolean copy, const PpsimOp *op, gint32 after,
        const GArray *syncs)
{
    rd->max_stage = MAX(rd->max_stage, op->stage);
    rd->max_mb = MAX(rd->max_mb, op->microbatch);
    rd->last_row = MAX(rd->last_row, row);
    rd->n_cells++;
    if ((guint)op->stage >= rd->stage_row->len) {
        guint old = rd->stage_row->len;
        g_array_set_size(rd->stage_row, op->stage + 1);
        for (guint s = old; s < rd->stage_row->len; s++)
            g_array_index(rd->stage_row, gint32, s) = -1;
    }
    gint32 *dev = &g_array_index(rd->stage_row, gint32, op->stage);
    if (*dev >= 0 && *dev != row) {
        g_autofree char *why = g_strdup_printf(
            "is in row %d but stage %d already appeared in row %d (a stage lives on one "
            "device)",
            row + 1, op->stage, *dev + 1);
        csv_defer(rd, line, col, op, why);
    }
    gboolean copy_kind = ppsim_op_kind_is_copy(op->kind);
    if (copy && !copy_kind)
        csv_defer(rd, line, col, op, "is a compute action after the '|' copy separator");
    *dev = row;
    if (copy_kind) {
        GArray *list = g_ptr_array_index(rd->copy, row);
        for (guint k = 0; syncs != NULL && k < syncs->len; k++) {
            PpsimCopySync e = g_array_index(syncs, PpsimCopySync, k);
            e.op = (gint32)list->len;
            g_array_append_val(g_ptr_array_index(rd->copy_sync, row), e);
            CsvLoc at = {rd->name, line, col};
            g_array_append_val(rd->sync_at, at);
        }
        g_array_append_val(list, *op);
        g_array_append_val(g_ptr_array_index(rd->copy_after, row), after);
    } else {
        /* the row's compute array was sized to its cell count: no growth check needed */
        GArray *compute = g_ptr_array_index(rd->compute, row);
        ((PpsimOp *)(gpointer)compute->data)[rd->n_compute++] = *op;
    }
}

/* Splits @text into cells and places each op in its row as it goes: no per-cell copy for
 * well-formed cells, rows sized from their comma count. */
static gboolean
csv_read(CsvReader *rd, const char *text, gsize len, GError **error)
{
    CsvLoc loc = {rd->name, 1, 1};
    int row = 0;
    gsize pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        gsize eol = nl ? (gsize)(nl - text) : len;
        gsize line_end = eol > pos && text[eol - 1] == '\r' ? eol - 1 : eol;
        guint cells = 1;
        for (gsize c = pos; c < line_end; c++)
            cells += text[c] == ',';
        GArray *compute = g_array_sized_new(FALSE, FALSE, sizeof(PpsimOp), cells);
        g_array_set_size(compute, cells); /* trimmed to the ops placed at the row's end */
        g_ptr_array_add(rd->compute, compute);
        rd->n_compute = 0;
        g_ptr_array_add(rd->copy, g_array_new(FALSE, FALSE, sizeof(PpsimOp)));
        g_ptr_array_add(rd->copy_after, g_array_new(FALSE, FALSE, sizeof(gint32)));
        g_ptr_array_add(rd->copy_sync, g_array_new(FALSE, FALSE, sizeof(PpsimCopySync)));
        gboolean copy = FALSE;
        for (gsize c = pos; c <= line_end;) {
            gsize e = c;
            while (e < line_end && text[e] != ',')
                e++;
            const char *b = text + c, *t = text + e;
            while (b < t && g_ascii_isspace(*b))
                b++;
            while (t > b && g_ascii_isspace(t[-1]))
                t--;
            loc.col = (int)(c - pos) + 1;
            PpsimOp op;
            gint32 after;
            if (b == t) {
                /* empty cell: an idle step */
            } else if (csv_parse_cell_fast(b, t, &op, &after)) {
                csv_add(rd, row, loc.line, loc.col, copy, &op, after, NULL);
            } else {
                g_autofree char *cell = g_strndup(b, t - b);
                gboolean skip;
                if (strcmp(cell, "|") == 0) {
                    copy = TRUE;
                } else if (g_ascii_strcasecmp(cell, "none") != 0) {
                    g_array_set_size(rd->cell_syncs, 0);
                    if (!csv_parse_cell(cell, &loc, &op, &after, rd->cell_syncs, &skip, error))
                        return FALSE;
                    if (!skip)
                        csv_add(rd, row, loc.line, loc.col, copy, &op, after, rd->cell_syncs);
                }
            }
            c = e + 1;
        }
        g_array_set_size(compute, rd->n_compute);
        row++;
        loc.line++;
        pos = eol + 1;
    }
    return TRUE;
}

/* Every cross-device wait `^r.i` names another row that has a copy action i. */
static gboolean
csv_check_syncs(const CsvReader *rd, int n_rows, GError **error)
{
    guint at = 0;
    for (int row = 0; row < (int)rd->copy_sync->len; row++) {
        const GArray *syncs = g_ptr_array_index(rd->copy_sync, row);
        for (guint k = 0; k < syncs->len; k++, at++) {
            const PpsimCopySync *e = &g_array_index(syncs, PpsimCopySync, k);
            const CsvLoc *loc = &g_array_index(rd->sync_at, CsvLoc, at);
            const char *why = NULL;
            if (e->device == row)
                why = "a copy action cannot wait for its own row (the copy stream is in order)";
            else if (e->device >= n_rows)
                why = "the wait names a row the file does not have";
            else if (e->index >= (gint32)((GArray *)g_ptr_array_index(rd->copy, e->device))->len)
                why = "the wait names a copy action its row does not have";
            if (why == NULL)
                continue;
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                        "%s:%d:%d: ^%d.%d: %s (rows are 0-based; copy actions are counted "
                        "from 0 after the row's '|')",
                        loc->name, loc->line, loc->col, e->device, e->index, why);
            return FALSE;
        }
    }
    return TRUE;
}

static void
csv_reader_clear(CsvReader *rd)
{
    g_ptr_array_unref(rd->compute);
    g_ptr_array_unref(rd->copy);
    g_ptr_array_unref(rd->copy_after);
    g_ptr_array_unref(rd->copy_sync);
    g_array_unref(rd->sync_at);
    g_array_unref(rd->cell_syncs);
    g_array_unref(rd->stage_row);
    g_clear_error(&rd->deferred);
}

PpsimSchedule *
ppsim_schedule_from_csv(const char *text, gsize len, const char *display_name, GError **error)
{
    const char *name = display_name ? display_name : "<schedule>";
    CsvReader rd = {.name = name,
                    .compute = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref),
                    .copy = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref),
                    .copy_after = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref),
                    .copy_sync = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref),
                    .sync_at = g_array_new(FALSE, FALSE, sizeof(CsvLoc)),
                    .cell_syncs = g_array_new(FALSE, FALSE, sizeof(PpsimCopySync)),
                    .stage_row = g_array_new(FALSE, FALSE, sizeof(gint32)),
                    .max_stage = -1,
                    .max_mb = -1,
                    .last_row = -1};
    if (!csv_read(&rd, text, len, error)) {
        csv_reader_clear(&rd);
        return NULL;
    }
    if (rd.n_cells == 0 || rd.max_mb < 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                    "%s: no forward or backward action found", name);
        csv_reader_clear(&rd);
        return NULL;
    }
    if (rd.deferred != NULL) {
        g_propagate_error(error, g_steal_pointer(&rd.deferred));
        csv_reader_clear(&rd);
        return NULL;
    }
    int n_rows = rd.last_row + 1; /* trailing blank lines are not devices */
    if (!csv_check_syncs(&rd, n_rows, error)) {
        csv_reader_clear(&rd);
        return NULL;
    }
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(n_rows, rd.max_stage + 1, rd.max_mb + 1);
    for (int d = 0; d < n_rows; d++) {
        g_array_unref(sched->compute[d]);
        g_array_unref(sched->copy[d]);
        g_array_unref(sched->copy_after[d]);
        g_array_unref(sched->copy_sync[d]);
        sched->compute[d] = g_array_ref(g_ptr_array_index(rd.compute, d));
        sched->copy[d] = g_array_ref(g_ptr_array_index(rd.copy, d));
        sched->copy_after[d] = g_array_ref(g_ptr_array_index(rd.copy_after, d));
        sched->copy_sync[d] = g_array_ref(g_ptr_array_index(rd.copy_sync, d));
    }
    for (int s = 0; s <= rd.max_stage; s++)
        sched->stage_device[s] = g_array_index(rd.stage_row, gint32, s);
    csv_reader_clear(&rd);
    for (int s = 0; s <= rd.max_stage; s++)
        if (sched->stage_device[s] < 0) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                        "%s: stage %d appears in no row (stages must be 0..%d)", name, s,
                        rd.max_stage);
            return NULL;
        }
    return g_steal_pointer(&sched);
}
