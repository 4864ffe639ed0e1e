/* schedule-csv.c: schedules as PyTorch pipelining CSV (DESIGN 6); see schedule.h.
 *
 * Row r lists rank r's actions in order, one per cell: <stage><kind><microbatch>, kind F
 * (forward), I (backward for inputs), W (backward for weights), B (full backward), stage the
 * global stage index. Empty cells (idle steps) are skipped. PyTorch's communication and FSDP
 * actions (SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD) are accepted and
 * ignored: ppsim derives transfers from dependencies. ppsim's extensions: R (recompute), O
 * (offload) and L (reload) take a microbatch; <stage>S is the stage's optimizer step and
 * <stage>SC the same on a host CPU worker. A cell `|` separates the compute actions from
 * the copy-stream actions (O, L) of the same rank.
 */
#include "sched/schedule.h"
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
    default:
        g_assert_not_reached();
    }
}

static void
csv_append_ops(GString *out, const GArray *ops, const GArray *after, gboolean *first)
{
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (!*first)
            g_string_append_c(out, ',');
        *first = FALSE;
        g_string_append_printf(out, "%d%s", op->stage, csv_kind_code(op));
        if (op->kind != PPSIM_OP_OPT)
            g_string_append_printf(out, "%d", op->microbatch);
        if (after != NULL && g_array_index(after, gint32, i) >= 0)
            g_string_append_printf(out, "@%d", g_array_index(after, gint32, i));
    }
}

GString *
ppsim_schedule_to_csv(const PpsimSchedule *sched)
{
    GString *out = g_string_new(NULL);
    for (int d = 0; d < sched->n_devices; d++) {
        gboolean first = TRUE;
        csv_append_ops(out, sched->compute[d], NULL, &first);
        if (sched->copy[d]->len > 0) {
            g_string_append(out, first ? "|" : ",|");
            first = FALSE;
            csv_append_ops(out, sched->copy[d], sched->copy_after[d], &first);
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

/* Parses one trimmed, non-empty cell. *@skip is set for ignored communication actions. */
static gboolean
csv_parse_cell(const char *cell, const CsvLoc *loc, PpsimOp *op, gint32 *after, gboolean *skip,
               GError **error)
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
                 {"O", PPSIM_OP_OFF, 0},
                 {"L", PPSIM_OP_RL, 0}};
    int k = -1;
    for (guint i = 0; i < G_N_ELEMENTS(kinds) && k < 0; i++)
        if (g_str_has_prefix(p, kinds[i].code))
            k = i;
    if (k < 0)
        return csv_fail(error, loc, cell,
                        "unknown action kind (expected F, I, W, B, R, O, L, S or SC) in");
    p += strlen(kinds[k].code);
    gint64 mb = -1;
    if (kinds[k].kind == PPSIM_OP_OPT) {
        if (*p != '\0')
            return csv_fail(error, loc, cell, "an optimizer step takes no microbatch, got");
    } else {
        if (!g_ascii_isdigit(*p))
            return csv_fail(error, loc, cell, "missing microbatch number in");
        mb = g_ascii_strtoll(p, &end, 10);
        gboolean copy = kinds[k].kind == PPSIM_OP_OFF || kinds[k].kind == PPSIM_OP_RL;
        if (copy && *end == '@') {
            char *anchor_end = NULL;
            gint64 a = g_ascii_strtoll(end + 1, &anchor_end, 10);
            if (anchor_end == end + 1 || *anchor_end != '\0' || a < 0 || a > G_MAXINT32 / 2)
                return csv_fail(error, loc, cell, "bad anchor (expected @<compute index>) in");
            *after = (gint32)a;
            end = anchor_end;
        }
        if (*end != '\0')
            return csv_fail(error, loc, cell, "trailing characters in action");
    }
    if (stage > G_MAXINT32 / 2 || mb > G_MAXINT32 / 2)
        return csv_fail(error, loc, cell, "number too large in action");
    *op = (PpsimOp){.kind = kinds[k].kind,
                    .flags = kinds[k].flags,
                    .stage = (gint32)stage,
                    .microbatch = (gint32)mb};
    return TRUE;
}

typedef struct {
    PpsimOp op;
    gint32 after; /* copy ops: anchor, -1 none */
    gint32 row;
    gint32 copy;
    gint32 line, col;
} CsvCell;

/* Splits @text into cells; records each op with its row and location. */
static gboolean
csv_tokenize(const char *text, gsize len, const char *name, GArray *cells, int *n_rows,
             GError **error)
{
    CsvLoc loc = {name, 1, 1};
    int row = 0;
    gsize pos = 0;
    while (pos < len) {
        gsize eol = pos;
        while (eol < len && text[eol] != '\n')
            eol++;
        gsize line_end = eol > pos && text[eol - 1] == '\r' ? eol - 1 : eol;
        gboolean copy = FALSE;
        for (gsize c = pos; c <= line_end;) {
            gsize e = c;
            while (e < line_end && text[e] != ',')
                e++;
            g_autofree char *cell = g_strstrip(g_strndup(text + c, e - c));
            loc.col = (int)(c - pos) + 1;
            if (strcmp(cell, "|") == 0) {
                copy = TRUE;
            } else if (*cell != '\0' && g_ascii_strcasecmp(cell, "none") != 0) {
                CsvCell cc = {.row = row, .copy = copy, .line = loc.line, .col = loc.col};
                gboolean skip;
                if (!csv_parse_cell(cell, &loc, &cc.op, &cc.after, &skip, error))
                    return FALSE;
                if (!skip)
                    g_array_append_val(cells, cc);
            }
            c = e + 1;
        }
        row++;
        loc.line++;
        pos = eol + 1;
    }
    *n_rows = row;
    return TRUE;
}

static gboolean
csv_cell_fail(GError **error, const char *name, const CsvCell *c, const char *why)
{
    g_autoptr(GString) what = g_string_new(NULL);
    ppsim_op_describe(what, &c->op);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE, "%s:%d:%d: '%s' %s", name,
                c->line, c->col, what->str, why);
    return FALSE;
}

PpsimSchedule *
ppsim_schedule_from_csv(const char *text, gsize len, const char *display_name, GError **error)
{
    const char *name = display_name ? display_name : "<schedule>";
    g_autoptr(GArray) cells = g_array_new(FALSE, FALSE, sizeof(CsvCell));
    int n_rows = 0;
    if (!csv_tokenize(text, len, name, cells, &n_rows, error))
        return NULL;
    int max_stage = -1, max_mb = -1, last_row = -1;
    for (guint i = 0; i < cells->len; i++) {
        const CsvCell *c = &g_array_index(cells, CsvCell, i);
        max_stage = MAX(max_stage, c->op.stage);
        max_mb = MAX(max_mb, c->op.microbatch);
        last_row = MAX(last_row, c->row);
    }
    if (cells->len == 0 || max_mb < 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                    "%s: no forward or backward action found", name);
        return NULL;
    }
    n_rows = last_row + 1; /* trailing blank lines are not devices */
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(n_rows, max_stage + 1, max_mb + 1);
    for (guint i = 0; i < cells->len; i++) {
        const CsvCell *c = &g_array_index(cells, CsvCell, i);
        int *dev = &sched->stage_device[c->op.stage];
        if (*dev >= 0 && *dev != c->row) {
            g_autofree char *why = g_strdup_printf(
                "is in row %d but stage %d already appeared in row %d (a stage lives on one "
                "device)",
                c->row + 1, c->op.stage, *dev + 1);
            csv_cell_fail(error, name, c, why);
            return NULL;
        }
        gboolean copy_kind = c->op.kind == PPSIM_OP_OFF || c->op.kind == PPSIM_OP_RL;
        if (c->copy && !copy_kind) {
            csv_cell_fail(error, name, c, "is a compute action after the '|' copy separator");
            return NULL;
        }
        *dev = c->row;
        if (copy_kind)
            ppsim_schedule_push_copy(sched, c->row, c->op, c->after);
        else
            ppsim_schedule_push_op(sched, c->row, c->op);
    }
    for (int s = 0; s <= max_stage; s++)
        if (sched->stage_device[s] < 0) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                        "%s: stage %d appears in no row (stages must be 0..%d)", name, s,
                        max_stage);
            return NULL;
        }
    return g_steal_pointer(&sched);
}
