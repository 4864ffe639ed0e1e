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

/* Opens CBC's library now when it is loaded on first use (cbc-load.c): called before a fork,
 * so that the child never runs the dynamic loader (another thread may hold its lock). */
#ifdef PPSIM_CBC_SONAME
void ppsim_milp_cbc_load(void);
#else
static inline void
ppsim_milp_cbc_load(void)
{
}
#endif

G_END_DECLS
