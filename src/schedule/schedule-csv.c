/* schedule-csv.c: reading schedules as PyTorch pipelining CSV (scenarios/README.md "Schedules as
 * data"); see schedule.h; schedule-csv-write.c writes them.
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
 * copy action: the cross-device events of [PO] App. D). A cell `<s>F<j>+<s'>B<j'>` is an F&B
 * pair: the forward and the full backward overlapped as one op ([DUALPIPE] "F&B").
 *
 * Two pipelines (schedule.h pipe_stages, DualPipe's two directions) are read from the
 * microbatches: when S is even and some microbatch has a forward at stage S/2 but none at
 * stage 0, stages [0, S/2) and [S/2, S) are two pipelines.
 *
 * Limits, so that hostile files fail fast: at most 1 GiB; a stage or microbatch number above
 * half the file's size is refused at its cell (stages 0..s, and the forwards of microbatches
 * 0..j, each need a cell); no more rows than stages; and S x m past 2^20 slots with fewer
 * forwards than that is refused before the checker sizes its tables by it. Blank lines cost
 * no memory.
 */
#include "schedule/schedule-csv-internal.h"
#include "util/ppsim-error.h"
#include "util/read-file.h"

#include <stdlib.h>
#include <string.h>

/* Largest schedule file read: far beyond the 2^23 ops of one run, and line numbers fit an int. */
#define CSV_MAX_BYTES PPSIM_CSV_MAX_BYTES
/* Below this many (stage, microbatch) slots the checker's tables are cheap: a missing forward
 * is left to it, which names the op. */
#define CSV_SMALL_TABLE 1048576.0

/* One row (device) with at least one action; rows without any take no memory while reading. */
typedef struct {
    int row; /* 0-based line index */
    GArray *compute, *copy, *copy_after, *copy_sync, *compute_wait;
} CsvRow;

/* What the reader builds, one row (device) at a time. */
typedef struct {
    const char *name;
    GArray *rows;       /* CsvRow, rows with actions only, in file order */
    GArray *sync_at;    /* CsvLoc per copy_sync entry of every row, in reading order */
    GArray *wait_at;    /* CsvLoc per compute_wait entry of every row, in reading order */
    GArray *cell_syncs; /* PpsimCopySync: the waits of the cell being read */
    GArray *stage_row;  /* gint32 per stage: its row, -1 none yet */
    int max_stage, max_mb, last_row, n_cells, n_forward;
    guint n_compute;       /* compute ops placed in the current row */
    guint row_cells;       /* cells of the current line (sizes its compute array) */
    gint64 largest_number; /* largest stage or microbatch number the file's size allows */
    GError *deferred;      /* first placement error, reported once the whole file parsed */
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

/* The entry of @row, created on its first action. */
static CsvRow *
csv_row(CsvReader *rd, int row)
{
    if (rd->rows->len > 0) {
        CsvRow *last = &g_array_index(rd->rows, CsvRow, rd->rows->len - 1);
        if (last->row == row)
            return last;
    }
    CsvRow r = {.row = row,
                .compute = g_array_sized_new(FALSE, FALSE, sizeof(PpsimOp), rd->row_cells),
                .copy = g_array_new(FALSE, FALSE, sizeof(PpsimOp)),
                .copy_after = g_array_new(FALSE, FALSE, sizeof(gint32)),
                .copy_sync = g_array_new(FALSE, FALSE, sizeof(PpsimCopySync)),
                .compute_wait = g_array_new(FALSE, FALSE, sizeof(PpsimComputeWait))};
    g_array_set_size(r.compute, rd->row_cells); /* trimmed to the ops placed at the row's end */
    rd->n_compute = 0;
    g_array_append_val(rd->rows, r);
    return &g_array_index(rd->rows, CsvRow, rd->rows->len - 1);
}

static void
csv_row_clear(gpointer data)
{
    CsvRow *r = data;
    g_array_unref(r->compute);
    g_array_unref(r->copy);
    g_array_unref(r->copy_after);
    g_array_unref(r->copy_sync);
    g_array_unref(r->compute_wait);
}

/* A stage or microbatch number the file cannot be valid with: stages 0..s each need a cell,
 * and so do the forwards of microbatches 0..j, each cell taking two bytes or more. Refusing
 * it here keeps memory proportional to the file (the stage map grows with s). */
static gboolean
csv_check_numbers(const CsvReader *rd, const CsvLoc *loc, const char *b, const char *t,
                  const PpsimOp *op, GError **error)
{
    if (op->stage <= rd->largest_number && op->microbatch <= rd->largest_number)
        return TRUE;
    g_autofree char *cell = g_strndup(b, t - b);
    g_autofree char *why = g_strdup_printf(
        "%s number larger than a file of this size can use (every %s from 0 up needs an "
        "action; the largest possible here is %" G_GINT64_FORMAT ") in",
        op->stage > rd->largest_number ? "stage" : "microbatch",
        op->stage > rd->largest_number ? "stage" : "microbatch", rd->largest_number);
    return csv_fail(error, loc, cell, why);
}

/* Notes @op of @row in the file's totals and maps its stage to @row (a stage seen in
 * another row is an error, reported once the whole file is read). */
static inline void
csv_note(CsvReader *rd, int row, int line, int col, const PpsimOp *op)
{
    rd->max_stage = MAX(rd->max_stage, op->stage);
    rd->max_mb = MAX(rd->max_mb, op->microbatch);
    rd->last_row = MAX(rd->last_row, row);
    rd->n_cells++;
    rd->n_forward += op->kind == PPSIM_OP_F;
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
    *dev = row;
}

/* Places one op of @row (a copy-stream op when @copy, i.e. after a '|' cell), with the
 * cross-device waits in @syncs (nullable); for a compute op, @after >= 0 is the copy action
 * of the row it waits for (`&i`). */
static void
csv_add(CsvReader *rd, int row, int line, int col, gboolean copy, const PpsimOp *op, gint32 after,
        const GArray *syncs)
{
    CsvRow *r = csv_row(rd, row);
    csv_note(rd, row, line, col, op);
    gboolean copy_kind = ppsim_op_kind_is_copy(op->kind);
    if (copy && !copy_kind)
        csv_defer(rd, line, col, op, "is a compute action after the '|' copy separator");
    if (copy_kind) {
        for (guint k = 0; syncs != NULL && k < syncs->len; k++) {
            PpsimCopySync e = g_array_index(syncs, PpsimCopySync, k);
            e.op = (gint32)r->copy->len;
            g_array_append_val(r->copy_sync, e);
            CsvLoc at = {rd->name, line, col};
            g_array_append_val(rd->sync_at, at);
        }
        g_array_append_val(r->copy, *op);
        g_array_append_val(r->copy_after, after);
    } else {
        if (after >= 0) {
            PpsimComputeWait w = {(gint32)rd->n_compute, after};
            g_array_append_val(r->compute_wait, w);
            CsvLoc at = {rd->name, line, col};
            g_array_append_val(rd->wait_at, at);
        }
        /* the row's compute array was sized to its cell count: no growth check needed */
        ((PpsimOp *)(gpointer)r->compute->data)[rd->n_compute++] = *op;
    }
}

/* An F&B pair cell `<F action>+<B action>` (schedule.h PPSIM_OP_FLAG_OVERLAP): a forward
 * and a full backward overlapped as one op. */
static gboolean
csv_pair(CsvReader *rd, int row, const CsvLoc *loc, char *cell, char *plus, GError **error)
{
    PpsimOp half[2];
    gint32 after;
    gboolean skip = FALSE;
    g_autofree char *whole = g_strdup(cell);
    *plus = '\0';
    const char *text[2] = {cell, plus + 1};
    for (int k = 0; k < 2; k++) {
        g_array_set_size(rd->cell_syncs, 0);
        if (*text[k] == '\0' || strchr(text[k], '+') != NULL ||
            !csv_parse_cell(text[k], loc, &half[k], &after, rd->cell_syncs, &skip, error) || skip ||
            half[k].kind != (k == 0 ? PPSIM_OP_F : PPSIM_OP_BW)) {
            g_clear_error(error);
            return csv_fail(error, loc, whole,
                            "an F&B pair is a forward and a full backward, as in 0F3+7B1; got");
        }
        if (!csv_check_numbers(rd, loc, whole, whole + strlen(whole), &half[k], error))
            return FALSE;
    }
    for (int k = 0; k < 2; k++) {
        half[k].flags |= PPSIM_OP_FLAG_OVERLAP;
        csv_add(rd, row, loc->line, loc->col, FALSE, &half[k], -1, NULL);
    }
    return TRUE;
}

/* One cell [@c, @e) of @row the general way: trimmed, then the fast reader, the '|'
 * separator, `none`, or the full grammar with its error messages. */
static gboolean
csv_cell(CsvReader *rd, int row, const CsvLoc *loc, const char *c, const char *e, gboolean *copy,
         GError **error)
{
    const char *b = c, *t = e;
    while (b < t && g_ascii_isspace(*b))
        b++;
    while (t > b && g_ascii_isspace(t[-1]))
        t--;
    PpsimOp op;
    gint32 after;
    if (b == t)
        return TRUE; /* empty cell: an idle step */
    if (csv_parse_cell_fast(b, t, &op, &after)) {
        if (!csv_check_numbers(rd, loc, b, t, &op, error))
            return FALSE;
        csv_add(rd, row, loc->line, loc->col, *copy, &op, after, NULL);
        return TRUE;
    }
    g_autofree char *cell = g_strndup(b, t - b);
    gboolean skip;
    char *plus = strchr(cell, '+');
    if (plus != NULL && !*copy)
        return csv_pair(rd, row, loc, cell, plus, error);
    if (strcmp(cell, "|") == 0) {
        *copy = TRUE;
    } else if (g_ascii_strcasecmp(cell, "none") != 0) {
        g_array_set_size(rd->cell_syncs, 0);
        if (!csv_parse_cell(cell, loc, &op, &after, rd->cell_syncs, &skip, error))
            return FALSE;
        if (!skip && !csv_check_numbers(rd, loc, b, t, &op, error))
            return FALSE;
        if (!skip)
            csv_add(rd, row, loc->line, loc->col, *copy, &op, after, rd->cell_syncs);
    }
    return TRUE;
}

/* Splits @text into cells and places each op in its row as it goes: one pass over each
 * line for its cells, the common compute cell read and placed in place, rows sized from
 * their comma count. */
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
        const char *c = text + pos, *end = text + line_end;
        rd->row_cells = 1 + csv_count_commas(c, end);
        for (const char *q = c; (q = memchr(q, '+', end - q)) != NULL; q++)
            rd->row_cells++; /* an F&B pair cell holds two ops */
        gboolean copy = FALSE;
        CsvRow *r = NULL;       /* this row's entry, once it has an action */
        gint32 last_stage = -1; /* the stage of its last compute cell read in place */
        while (c < end) {
            const char *cell = c;
            PpsimOp first; /* the row's first action, read before its entry exists */
            if (!copy) {   /* read the common cell straight into the row's next slot */
                PpsimOp *op =
                    r != NULL ? &((PpsimOp *)(gpointer)r->compute->data)[rd->n_compute] : &first;
                if (csv_compute_cell(&c, end, op) && op->stage <= rd->largest_number &&
                    op->microbatch <= rd->largest_number) {
                    if (r == NULL) {
                        r = csv_row(rd, row);
                        op = &((PpsimOp *)(gpointer)r->compute->data)[rd->n_compute];
                        *op = first;
                    }
                    /* csv_add for it, its stage checked once per run of equal stages */
                    if (op->stage != last_stage) {
                        csv_note(rd, row, loc.line, (int)(cell - text - pos) + 1, op);
                        last_stage = op->stage;
                    } else {
                        rd->max_mb = MAX(rd->max_mb, op->microbatch);
                        rd->n_cells++;
                        rd->n_forward += op->kind == PPSIM_OP_F;
                    }
                    rd->n_compute++;
                    c++; /* the comma (or one past the end of the line) */
                    continue;
                }
            }
            c = cell;
            const char *e = memchr(c, ',', end - c);
            e = e ? e : end;
            loc.col = (int)(c - text - pos) + 1;
            if (!csv_cell(rd, row, &loc, c, e, &copy, error))
                return FALSE;
            c = e + 1;
            r = NULL; /* csv_add may have grown rd->rows */
            last_stage = -1;
        }
        if (rd->rows->len > 0) {
            CsvRow *last = &g_array_index(rd->rows, CsvRow, rd->rows->len - 1);
            if (last->row == row)
                g_array_set_size(last->compute, rd->n_compute);
        }
        row++;
        loc.line++;
        pos = eol + 1;
    }
    return TRUE;
}

/* Every cross-device wait `^r.i` names another row that has a copy action i. */
static gboolean
csv_check_syncs(const CsvReader *rd, const PpsimSchedule *sched, GError **error)
{
    guint at = 0;
    for (int row = 0; row < sched->n_devices; row++) {
        const GArray *syncs = sched->copy_sync[row];
        for (guint k = 0; k < syncs->len; k++, at++) {
            const PpsimCopySync *e = &g_array_index(syncs, PpsimCopySync, k);
            const CsvLoc *loc = &g_array_index(rd->sync_at, CsvLoc, at);
            const char *why = NULL;
            if (e->device == row)
                why = "a copy action cannot wait for its own row (the copy stream is in order)";
            else if (e->device >= sched->n_devices)
                why = "the wait names a row the file does not have";
            else if (e->index >= (gint32)sched->copy[e->device]->len)
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

/* Every compute action's wait `&i` names a copy action of its own row. */
static gboolean
csv_check_waits(const CsvReader *rd, const PpsimSchedule *sched, GError **error)
{
    guint at = 0;
    for (int row = 0; row < sched->n_devices; row++) {
        const GArray *waits = sched->compute_wait[row];
        for (guint k = 0; k < waits->len; k++, at++) {
            const PpsimComputeWait *e = &g_array_index(waits, PpsimComputeWait, k);
            if (e->index < (gint32)sched->copy[row]->len)
                continue;
            const CsvLoc *loc = &g_array_index(rd->wait_at, CsvLoc, at);
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                        "%s:%d:%d: &%d: the wait names a copy action its row does not have "
                        "(copy actions are counted from 0 after the row's '|')",
                        loc->name, loc->line, loc->col, e->index);
            return FALSE;
        }
    }
    return TRUE;
}

static void
csv_reader_clear(CsvReader *rd)
{
    g_array_unref(rd->rows);
    g_array_unref(rd->wait_at);
    g_array_unref(rd->sync_at);
    g_array_unref(rd->cell_syncs);
    g_array_unref(rd->stage_row);
    g_clear_error(&rd->deferred);
}

/* The checks on the whole file's shape, before anything is sized by it. */
static gboolean
csv_check_shape(const CsvReader *rd, GError **error)
{
    if (rd->n_cells == 0 || rd->max_mb < 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                    "%s: no forward or backward action found", rd->name);
        return FALSE;
    }
    if (rd->deferred != NULL) {
        g_propagate_error(error, g_error_copy(rd->deferred));
        return FALSE;
    }
    int n_stages = rd->max_stage + 1;
    if (rd->last_row >= n_stages) {
        /* every row (device) holds a stage of its own: more rows than stages leave one idle */
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                    "%s:%d:1: row %d, but the file has only %d stage%s (every row is a device "
                    "and needs a stage; blank lines count as rows)",
                    rd->name, rd->last_row + 1, rd->last_row + 1, n_stages,
                    n_stages == 1 ? "" : "s");
        return FALSE;
    }
    /* Each (stage, microbatch) needs its forward; the checker's tables have S x m slots, so a
     * file far short of that is refused here (small ones get the checker's precise message). */
    double slots = (double)n_stages * (rd->max_mb + 1);
    if (slots > rd->n_forward && slots > CSV_SMALL_TABLE) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                    "%s: %d stages x %d microbatches need %.0f forward actions (one per stage "
                    "and microbatch), but the file has %d",
                    rd->name, n_stages, rd->max_mb + 1, slots, rd->n_forward);
        return FALSE;
    }
    return TRUE;
}

/* Two pipelines when some microbatch starts at stage S/2 and not at stage 0 (see above). */
static void
csv_detect_pipes(PpsimSchedule *sched)
{
    int S = sched->n_stages, m = sched->n_microbatches;
    if (S % 2 != 0)
        return;
    g_autofree guint8 *at = g_new0(guint8, m); /* bit 0: F at stage 0; bit 1: at S/2 */
    for (int d = 0; d < sched->n_devices; d++) {
        const GArray *ops = sched->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (op->kind == PPSIM_OP_F && op->microbatch >= 0 && op->microbatch < m)
                at[op->microbatch] |= op->stage == 0 ? 1 : op->stage == S / 2 ? 2 : 0;
        }
    }
    for (int j = 0; j < m; j++)
        if (at[j] == 2) {
            sched->pipe_stages = S / 2;
            return;
        }
}

PpsimSchedule *
ppsim_schedule_from_csv(const char *text, gsize len, const char *display_name, GError **error)
{
    const char *name = display_name ? display_name : "<schedule>";
    if (len > CSV_MAX_BYTES) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                    "%s: %" G_GSIZE_FORMAT " bytes, more than the %d MiB a schedule file may have",
                    name, len, (int)(CSV_MAX_BYTES >> 20));
        return NULL;
    }
    GError *nul = NULL;
    if (!ppsim_text_check_nul(text, len, name, "a schedule CSV", &nul)) {
        g_set_error_literal(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE, nul->message);
        g_error_free(nul);
        return NULL;
    }
    CsvReader rd = {.name = name,
                    .rows = g_array_new(FALSE, FALSE, sizeof(CsvRow)),
                    .sync_at = g_array_new(FALSE, FALSE, sizeof(CsvLoc)),
                    .wait_at = g_array_new(FALSE, FALSE, sizeof(CsvLoc)),
                    .cell_syncs = g_array_new(FALSE, FALSE, sizeof(PpsimCopySync)),
                    .stage_row = g_array_new(FALSE, FALSE, sizeof(gint32)),
                    .max_stage = -1,
                    .max_mb = -1,
                    .last_row = -1,
                    .largest_number = (gint64)(len / 2)};
    g_array_set_clear_func(rd.rows, csv_row_clear);
    if (!csv_read(&rd, text, len, error) || !csv_check_shape(&rd, error)) {
        csv_reader_clear(&rd);
        return NULL;
    }
    int n_rows = rd.last_row + 1; /* trailing blank lines are not devices */
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(n_rows, rd.max_stage + 1, rd.max_mb + 1);
    for (guint i = 0; i < rd.rows->len; i++) {
        CsvRow *r = &g_array_index(rd.rows, CsvRow, i);
        int d = r->row;
        g_array_unref(sched->compute[d]);
        g_array_unref(sched->copy[d]);
        g_array_unref(sched->copy_after[d]);
        g_array_unref(sched->copy_sync[d]);
        g_array_unref(sched->compute_wait[d]);
        sched->compute[d] = g_array_ref(r->compute);
        sched->copy[d] = g_array_ref(r->copy);
        sched->copy_after[d] = g_array_ref(r->copy_after);
        sched->copy_sync[d] = g_array_ref(r->copy_sync);
        sched->compute_wait[d] = g_array_ref(r->compute_wait);
    }
    for (int s = 0; s <= rd.max_stage; s++)
        sched->stage_device[s] = g_array_index(rd.stage_row, gint32, s);
    gboolean ok = csv_check_syncs(&rd, sched, error) && csv_check_waits(&rd, sched, error);
    csv_reader_clear(&rd);
    if (!ok)
        return NULL;
    csv_detect_pipes(sched);
    for (int s = 0; s < sched->n_stages; s++)
        if (sched->stage_device[s] < 0) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE,
                        "%s: stage %d appears in no row (stages must be 0..%d)", name, s,
                        sched->n_stages - 1);
            return NULL;
        }
    return g_steal_pointer(&sched);
}
