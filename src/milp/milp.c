/* milp.c: the model as plain arrays, handed to CBC's C API only when solving; see milp.h.
 *
 * Keeping the model outside CBC means it can be built (and tested) without the solver,
 * and one solve is one short-lived Cbc_Model: CBC's documentation warns that a model's
 * arrays are not valid for reuse after Cbc_solve().
 */
#include "milp/milp.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <stdio.h>
#ifdef PPSIM_HAVE_CBC
#include <coin/Cbc_C_Interface.h>
#endif

typedef struct {
    double lower, upper, objective;
    gboolean integer;
    gboolean has_start;
    double start;
} MilpCol;

struct PpsimMilp {
    GArray *cols;      /* MilpCol */
    GArray *row_beg;   /* int: first entry of each row, plus one past the end */
    GArray *row_idx;   /* int */
    GArray *row_val;   /* double */
    GArray *row_sense; /* char */
    GArray *row_rhs;   /* double */
};

gboolean
ppsim_milp_available(void)
{
#ifdef PPSIM_HAVE_CBC
    return TRUE;
#else
    return FALSE;
#endif
}

PpsimMilp *
ppsim_milp_new(void)
{
    PpsimMilp *milp = g_new0(PpsimMilp, 1);
    milp->cols = g_array_new(FALSE, FALSE, sizeof(MilpCol));
    milp->row_beg = g_array_new(FALSE, FALSE, sizeof(int));
    milp->row_idx = g_array_new(FALSE, FALSE, sizeof(int));
    milp->row_val = g_array_new(FALSE, FALSE, sizeof(double));
    milp->row_sense = g_array_new(FALSE, FALSE, sizeof(char));
    milp->row_rhs = g_array_new(FALSE, FALSE, sizeof(double));
    int zero = 0;
    g_array_append_val(milp->row_beg, zero);
    return milp;
}

void
ppsim_milp_free(PpsimMilp *milp)
{
    if (milp == NULL)
        return;
    g_array_free(milp->cols, TRUE);
    g_array_free(milp->row_beg, TRUE);
    g_array_free(milp->row_idx, TRUE);
    g_array_free(milp->row_val, TRUE);
    g_array_free(milp->row_sense, TRUE);
    g_array_free(milp->row_rhs, TRUE);
    g_free(milp);
}

int
ppsim_milp_add_col(PpsimMilp *milp, double lower, double upper, double objective, gboolean integer)
{
    MilpCol c = {lower, upper, objective, integer, FALSE, 0};
    g_array_append_val(milp->cols, c);
    return (int)milp->cols->len - 1;
}

int
ppsim_milp_add_row(PpsimMilp *milp, int nz, const int *cols, const double *coefs, char sense,
                   double rhs)
{
    g_return_val_if_fail(sense == 'L' || sense == 'G' || sense == 'E', -1);
    for (int k = 0; k < nz; k++) {
        g_return_val_if_fail(cols[k] >= 0 && cols[k] < (int)milp->cols->len, -1);
        if (coefs[k] == 0)
            continue;
        g_array_append_val(milp->row_idx, cols[k]);
        g_array_append_val(milp->row_val, coefs[k]);
    }
    int end = (int)milp->row_idx->len;
    g_array_append_val(milp->row_beg, end);
    g_array_append_val(milp->row_sense, sense);
    g_array_append_val(milp->row_rhs, rhs);
    return (int)milp->row_sense->len - 1;
}

int
ppsim_milp_n_cols(const PpsimMilp *milp)
{
    return (int)milp->cols->len;
}

int
ppsim_milp_n_rows(const PpsimMilp *milp)
{
    return (int)milp->row_sense->len;
}

void
ppsim_milp_set_start(PpsimMilp *milp, int col, double value)
{
    g_return_if_fail(col >= 0 && col < (int)milp->cols->len);
    MilpCol *c = &g_array_index(milp->cols, MilpCol, col);
    c->has_start = TRUE;
    c->start = value;
}

void
ppsim_milp_result_clear(PpsimMilpResult *res)
{
    g_clear_pointer(&res->x, g_free);
}

const char *
ppsim_milp_status_name(const PpsimMilpResult *res)
{
    switch (res->status) {
    case PPSIM_MILP_OPTIMAL:
        return "optimal";
    case PPSIM_MILP_LIMIT:
        return res->time_limit_hit ? "time_limit" : "node_limit";
    case PPSIM_MILP_NO_SOLUTION:
        return "no_solution";
    case PPSIM_MILP_INFEASIBLE:
        return "infeasible";
    }
    return "unknown";
}

#ifdef PPSIM_HAVE_CBC
/* Loads the model into a new Cbc_Model. */
static Cbc_Model *
milp_to_cbc(const PpsimMilp *milp)
{
    Cbc_Model *model = Cbc_newModel();
    for (guint j = 0; j < milp->cols->len; j++) {
        const MilpCol *c = &g_array_index(milp->cols, MilpCol, j);
        char name[24];
        snprintf(name, sizeof name, "x%u", j);
        Cbc_addCol(model, name, c->lower, c->upper, c->objective, c->integer ? 1 : 0, 0, NULL,
                   NULL);
    }
    const int *beg = (const int *)(void *)milp->row_beg->data;
    for (guint r = 0; r < milp->row_sense->len; r++) {
        char name[24];
        snprintf(name, sizeof name, "r%u", r);
        Cbc_addRow(model, name, beg[r + 1] - beg[r], &g_array_index(milp->row_idx, int, beg[r]),
                   &g_array_index(milp->row_val, double, beg[r]),
                   g_array_index(milp->row_sense, char, r),
                   g_array_index(milp->row_rhs, double, r));
    }
    return model;
}

static void
milp_set_start(const PpsimMilp *milp, Cbc_Model *model)
{
    g_autoptr(GArray) idx = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) val = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint j = 0; j < milp->cols->len; j++) {
        const MilpCol *c = &g_array_index(milp->cols, MilpCol, j);
        if (!c->has_start)
            continue;
        int col = (int)j;
        g_array_append_val(idx, col);
        g_array_append_val(val, c->start);
    }
    if (idx->len > 0)
        Cbc_setMIPStartI(model, (int)idx->len, (const int *)(void *)idx->data,
                         (const double *)(void *)val->data);
}
#endif

gboolean
ppsim_milp_solve(const PpsimMilp *milp, const PpsimMilpOptions *opts, PpsimMilpResult *out,
                 GError **error)
{
    *out = (PpsimMilpResult){.objective = NAN, .bound = NAN, .gap = NAN};
#ifndef PPSIM_HAVE_CBC
    (void)milp;
    (void)opts;
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                "ppsim was built without the CBC MILP solver (coinor-libcbc-dev)");
    return FALSE;
#else
    Cbc_Model *model = milp_to_cbc(milp);
    Cbc_setLogLevel(model, 0);
    char text[32];
    snprintf(text, sizeof text, "%d", MAX(1, opts->threads));
    Cbc_setParameter(model, "threads", text);
    Cbc_setParameter(model, "timeMode", "elapsed"); /* wall clock, as reported */
    /* CBC 2.10.8 crashes in CglPreProcess::postProcess when the time limit stops a search on a
     * preprocessed model (seen at 5,000 binaries); without preprocessing it does not, and
     * the limit is honoured */
    Cbc_setParameter(model, "preprocess", "off");
    if (opts->time_limit_s > 0)
        Cbc_setMaximumSeconds(model, opts->time_limit_s);
    if (opts->node_limit > 0)
        Cbc_setMaximumNodes(model, (int)MIN(opts->node_limit, G_MAXINT));
    if (opts->gap > 0)
        Cbc_setAllowableFractionGap(model, opts->gap);
    milp_set_start(milp, model);
    gint64 t0 = g_get_monotonic_time();
    int rc = Cbc_solve(model);
    out->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    int status = Cbc_status(model);
    if (Cbc_isAbandoned(model) || status == 2 || rc > 1) {
        Cbc_deleteModel(model);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "the MILP solver (CBC) abandoned the search (status %d)", status);
        return FALSE;
    }
    int n = (int)milp->cols->len;
    gboolean has_solution = Cbc_numberSavedSolutions(model) > 0 || Cbc_isProvenOptimal(model);
    const double *x = Cbc_bestSolution(model);
    if (x == NULL && Cbc_isProvenOptimal(model))
        x = Cbc_getColSolution(model); /* no integer column: CBC solved an LP */
    if (Cbc_isProvenInfeasible(model))
        out->status = PPSIM_MILP_INFEASIBLE;
    else if (!has_solution || x == NULL)
        out->status = PPSIM_MILP_NO_SOLUTION;
    else
        out->status = Cbc_isProvenOptimal(model) ? PPSIM_MILP_OPTIMAL : PPSIM_MILP_LIMIT;
    out->time_limit_hit = Cbc_isSecondsLimitReached(model);
    if (out->status == PPSIM_MILP_OPTIMAL || out->status == PPSIM_MILP_LIMIT) {
        out->x = g_memdup2(x, (gsize)n * sizeof(double));
        out->objective = Cbc_getObjValue(model);
        out->bound = Cbc_getBestPossibleObjValue(model);
        if (out->bound > out->objective)
            out->bound = out->objective;
        out->gap =
            fabs(out->objective) > 1e-12 ? (out->objective - out->bound) / fabs(out->objective) : 0;
        if (out->gap < 1e-9) { /* proved within CBC's tolerance: report the bound as reached */
            out->gap = 0;
            out->bound = out->objective;
        }
    }
    Cbc_deleteModel(model);
    return TRUE;
#endif
}
