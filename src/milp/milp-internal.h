/* milp-internal.h: the model's arrays, shared by milp.c (building) and milp-cbc.c
 * (solving). Internal to src/milp/. */
#pragma once

#include "milp/milp.h"

G_BEGIN_DECLS

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

/* Opens CBC's library now when it is loaded on first use (cbc-load.c): called before any
 * solve, and so before a fork (the child never runs the dynamic loader: another thread may
 * hold its lock). Returns FALSE with @error set when the library cannot be opened. */
#ifdef PPSIM_CBC_SONAME
gboolean ppsim_milp_cbc_load(GError **error);
#else
static inline gboolean
ppsim_milp_cbc_load(GError **error)
{
    (void)error;
    return TRUE;
}
#endif

G_END_DECLS
