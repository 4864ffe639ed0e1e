/* milp.c: the model as plain arrays (milp-internal.h), handed to CBC only when solving
 * (milp-cbc.c); see milp.h.
 *
 * Keeping the model outside CBC means it can be built (and tested) without the solver,
 * and one solve is one short-lived Cbc_Model: CBC's documentation warns that a model's
 * arrays are not valid for reuse after Cbc_solve().
 */
#include "milp/milp-internal.h"

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
    if (res->died)
        return "crashed";
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
