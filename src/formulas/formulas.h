/* formulas.h: published bubble and peak-activation predictions, each citing its source,
 * to check simulated timelines against. Pure functions; generators and the engine never
 * call them.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    int p, v, m;
    double t_f, t_b, t_w; /* per op on one stage (chunk), any time unit */
    double act, act_w;    /* memory allocated by F, and what W still holds after B */
    double t_fb;          /* an overlapped F&B pair ([DUALPIPE] "F&B"); 0 = F+B+W */
} PpsimFormulaInput;

typedef struct {
    const char *source;     /* "[ZB] Table 2" ... */
    const char *convention; /* how "bubble" is counted by the source */
    const char *exact_when; /* assumptions under which the numbers are exact */
    gboolean exact;         /* the assumptions hold for this input */
    double span;            /* predicted max over devices of (end - first start) */
    double work;            /* the busy time the bubble is counted against: m v (F+B+W), or
                             * for schedules with F&B pairs the busiest-paired device's */
    double bubble;          /* predicted idle time inside that span (span - work) */
    double bubble_rate;     /* bubble / span: [ZB] §5.3's bubble rate */
    double bubble_fraction; /* bubble / ideal: [NAR21] §2.2.1's fraction */
    int n_devices;          /* devices whose peak is predicted: 0 .. n_devices - 1 (p, or 1 when the
                             * source gives device 0 only) */
    double *peak;           /* [p] predicted peak activation per device, memory units */
} PpsimFormula;

/* Fills @out for schedule @name; FALSE when ppsim knows no formula for it. The caller frees
 * out->peak with g_free. */
gboolean ppsim_formula_predict(const char *name, const PpsimFormulaInput *in, PpsimFormula *out);

/* Schedules that have a formula, NULL-terminated. */
const char *const *ppsim_formula_schedules(void);

G_END_DECLS
