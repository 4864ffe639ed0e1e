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

G_END_DECLS
