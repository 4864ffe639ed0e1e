/* formulas.c: the published closed forms, each with its source. The "span" of
 * a device is end - first start; [ZB] §5.3 measures bubbles against the longest stage's
 * execution time, and for 1F1B, GPipe and interleaved the first device's span is the whole
 * iteration, so one quantity covers every row. All rows assume uniform stages and free
 * communication (p2p = 0), as the papers' tables do.
 */
#include "formulas/formulas.h"

static const char *const with_formula[] = {"1f1b",  "gpipe",    "interleaved", "zb-h1", "zb-h2",
                                           "zb-v",  "v-half",   "v-min",       "gis",   "gis-h",
                                           "tpipe", "dualpipe", "dualpipev",   NULL};

const char *const *
ppsim_formula_schedules(void)
{
    return with_formula;
}

static void
formula_finish(const PpsimFormulaInput *in, PpsimFormula *out)
{
    double work = out->work > 0 ? out->work : in->m * in->v * (in->t_f + in->t_b + in->t_w);
    out->work = work;
    out->bubble = out->span - work;
    out->bubble_rate = out->span > 0 ? out->bubble / out->span : 0;
    out->bubble_fraction = work > 0 ? out->bubble / work : 0;
}

/* 1F1B: (m+p-1)(T_F+T_B+T_W) also for m < p ([ZB] App. H; [NAR21] §2.2.1); rank d holds
 * min(p-d, m) microbatches ([MEG] warm-up + 1). */
static void
formula_1f1b(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[NAR21] §2.2.1; [ZB] App. H; [MEG] warm-up";
    out->exact_when = "uniform stages, p2p = 0";
    out->exact = in->v == 1;
    out->span = (in->m + in->p - 1) * (in->t_f + in->t_b + in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = MIN(in->p - d, in->m) * in->act;
}

/* GPipe: same bubble as 1F1B; every stage stashes all m microbatches ([NAR21] §2.2.1). */
static void
formula_gpipe(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[NAR21] §2.2.1; [GP] §2.3";
    out->exact_when = "uniform stages, p2p = 0";
    out->exact = in->v == 1;
    out->span = (in->m + in->p - 1) * (in->t_f + in->t_b + in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = in->m * in->act;
}

/* Interleaved 1F1B: bubble (p-1)(t_f+t_b)/v with t = v chunk passes ([NAR21] §2.2.2), so the
 * span is (m v + p - 1)(T_F+T_B+T_W) per chunk; rank d peaks at warm-up + 1 =
 * (v-1)p + 2(p-d) - 1 chunk-activations (DERIVED from [MEG]). Exact for
 * g = p and m a multiple of p. */
static void
formula_interleaved(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[NAR21] §2.2.2; [MEG] warm-up";
    out->exact_when = "uniform chunks, p2p = 0, group size g = p, m a multiple of p";
    out->exact = in->m % in->p == 0;
    out->span = (in->m * in->v + in->p - 1) * (in->t_f + in->t_b + in->t_w);
    for (int d = 0; d < in->p; d++) {
        int inflight = (in->v - 1) * in->p + 2 * (in->p - d) - 1;
        out->peak[d] = MIN(inflight, in->m * in->v) * in->act;
    }
    if (in->v == 1)
        formula_1f1b(in, out);
}

/* ZB-H1: bubble (p-1)(T_F+T_B-T_W); worker i (1-idx) (p-i+1)M_B + (i-1)M_W ([ZB] Table 2,
 * §2.3). */
static void
formula_zb_h1(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[ZB] §2.1, §2.3, Table 2";
    out->exact_when = "uniform stages, p2p = 0, m >= p, T_W <= T_F and T_W <= T_B";
    out->exact = in->m >= in->p && in->t_w <= in->t_f && in->t_w <= in->t_b && in->v == 1;
    out->span = in->m * (in->t_f + in->t_b + in->t_w) + (in->p - 1) * (in->t_f + in->t_b - in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = (in->p - d) * in->act + d * in->act_w;
}

/* ZB-H2: bubble (p-1)(T_F+T_B-2T_W); worker i (2p-2i+1)M_B + (2i-2)M_W ([ZB] Table 2,
 * §2.3). */
static void
formula_zb_h2(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[ZB] §2.2, §2.3, Table 2";
    out->exact_when = "uniform stages, p2p = 0, m >= 2p, T_W <= T_F and T_W <= T_B";
    out->exact = in->m >= 2 * in->p && in->t_w <= in->t_f && in->t_w <= in->t_b && in->v == 1;
    out->span = in->m * (in->t_f + in->t_b + in->t_w) +
                (in->p - 1) * MAX(0.0, in->t_f + in->t_b - 2 * in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = MIN(2 * (in->p - d) - 1, in->m) * in->act + 2 * d * in->act_w;
}

/* ZB-V ([ZB] §6): zero bubble when T_F = T_B = T_W, so every device's span is its work
 * m v (F+B+W); peak p M_B on every device, M_B = the two chunks' activations (2 act here).
 * Exact (ppsim's generator, tested in check-vshape.c) for m >= 2p: the warm-up needs 2p-1
 * forwards of the first chunk on worker 1, which m < 2p does not have. */
static void
formula_zb_v(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[ZB] §6; [ZBREPO] README (ZBV: 0 bubble, 1x activation)";
    out->exact_when = "v = 2, uniform chunks, p2p = 0, T_F = T_B = T_W, m >= 2p";
    out->exact = in->v == 2 && in->t_f == in->t_b && in->t_b == in->t_w && in->m >= 2 * in->p;
    out->span = in->m * in->v * (in->t_f + in->t_b + in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = MIN(in->p, in->m) * 2 * in->act;
}

/* 1F1B's bubble for the same model on p devices, each device's two chunks as one stage:
 * (p-1) x 2 (T_F+T_B+T_W) with chunk times T ([NAR21] §2.2.1). */
static double
bubble_1f1b_vshape(const PpsimFormulaInput *in)
{
    return (in->p - 1) * 2 * (in->t_f + in->t_b + in->t_w);
}

/* V-Half ([CM] Table 1; [ZBREPO] README): bubble about half of 1F1B's when T_F = T_B = T_W,
 * peak (p+2)//2 M_B on every device (the authors' playground cap, [HFSPACE]). Asymptotic:
 * with T_F = T_B = T_W ppsim (and the reference implementation's greedy) measures 3p - 7
 * passes, i.e. 4 passes less than B/2 = 3(p-1), for p = 4, 8, 16. */
static void
formula_v_half(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[CM] §3, Table 1; [ZBREPO] README (V-Half: B/2, 1/2x); [HFSPACE] cap";
    out->exact_when = "never (asymptotic, T_F = T_B = T_W)";
    out->exact = FALSE;
    out->span = in->m * in->v * (in->t_f + in->t_b + in->t_w) + bubble_1f1b_vshape(in) / 2;
    for (int d = 0; d < in->p; d++)
        out->peak[d] = MIN((in->p + 2) / 2, in->m) * 2 * in->act;
}

/* V-Min ([CM] Table 1; [ZBREPO] README): bubble about 2/3 of 1F1B's plus O(n) when T_F =
 * T_B = T_W (it degrades when they differ), peak (p+4)//3 M_B (the playground cap,
 * [HFSPACE]). Asymptotic: ppsim measures 4p - 5 passes or fewer for p = 4, 8, 16 against
 * 2B/3 = 4(p-1). */
static void
formula_v_min(const PpsimFormulaInput *in, PpsimFormula *out)
{
    out->source = "[CM] §3, Table 1; [ZBREPO] README (V-Min: 2B/3 + O(n), 1/3x); [HFSPACE] cap";
    out->exact_when = "never (asymptotic, T_F = T_B = T_W)";
    out->exact = FALSE;
    out->span = in->m * in->v * (in->t_f + in->t_b + in->t_w) + bubble_1f1b_vshape(in) * 2 / 3;
    for (int d = 0; d < in->p; d++)
        out->peak[d] = MIN((in->p + 4) / 3, in->m) * 2 * in->act;
}

/* GIS with group size g ([PO] Table 1, §3.2): bubble (d-1)(T_F+T_B) plus
 * (d-g)(v-1)(T_F+T_B-T_W) for smaller groups; rank r peaks at g(v-1) + d - r
 * chunk-activations (d v on rank 0 for g = d). */
static void
formula_gis_g(const PpsimFormulaInput *in, PpsimFormula *out, int g)
{
    out->source = "[PO] §3.1-3.2, Table 1";
    out->exact_when = "uniform chunks, p2p = 0, m a multiple of g, T_W <= T_F and T_W <= T_B";
    out->exact = in->m % g == 0 && in->t_w <= in->t_f && in->t_w <= in->t_b;
    out->span = in->m * in->v * (in->t_f + in->t_b + in->t_w) + (in->p - 1) * (in->t_f + in->t_b) +
                (in->p - g) * (in->v - 1) * (in->t_f + in->t_b - in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = MIN(g * (in->v - 1) + in->p - d, in->m * in->v) * in->act;
}

static void
formula_gis(const PpsimFormulaInput *in, PpsimFormula *out)
{
    formula_gis_g(in, out, in->p);
}

/* [PO] Table 1 writes GIS-H's extra bubble as ((v-1)d/2)(T_F+T_B-T_W), i.e. g = d/2: exact
 * for even d. For odd d (g = (d+1)/2) the replay is shorter than (d-g)(v-1)(...) predicts
 * (e.g. d = 3, v = 2, m = 6, F:B:W = 2:2:1: 70 vs 71), so it is only an upper bound there. */
static void
formula_gis_h(const PpsimFormulaInput *in, PpsimFormula *out)
{
    formula_gis_g(in, out, (in->p + 1) / 2);
    out->exact_when = "as gis, with d even (g = d/2)";
    out->exact = out->exact && in->p % 2 == 0;
}

static int
ceil_div6(int a)
{
    return a >= 0 ? (a + 5) / 6 : -((-a) / 6);
}

/* T-Pipe ([TP] App. A): with T_B = 2 T_F (fused backward) and T_unit = T_F the iteration
 * takes 6(m + p - 1) T_unit, i.e. 2(m + p - 1)(T_F + T_B + T_W) per chunk; device 0's
 * chunk 1 holds ceil(2/3 + ceil((p-3)/6) + ceil((2p-3)/6) + p/2) microbatches and chunk 2
 * ceil((3p-2)/6) (at most m each). The paper gives only device 0, so only its peak is
 * predicted. Its two chunk peaks coincide for even p; for odd p ppsim's device peak is one
 * lower than their sum (the chunk-2 peak falls between chunk 1's), so those rows are
 * approximate. */
static void
formula_tpipe(const PpsimFormulaInput *in, PpsimFormula *out)
{
    int p = in->p, kf = ceil_div6(p - 3), kb = ceil_div6(2 * p - 3);
    out->source = "[TP] App. A (Eq. 1-2 and the chunk ceilings; makespan 6(m+p-1) T_unit)";
    out->exact_when = "v = 2, fused backward T_B + T_W = 2 T_F, p2p = 0, p even";
    out->exact = in->v == 2 && in->t_b + in->t_w == 2 * in->t_f && p % 2 == 0;
    out->span = 2.0 * (in->m + p - 1) * (in->t_f + in->t_b + in->t_w);
    /* ceil(2/3 + kf + kb + p/2) = kf + kb + ceil((3p + 4)/6) */
    int chunk1 = MIN(kf + kb + (3 * p + 4 + 5) / 6, in->m);
    int chunk2 = MIN((3 * p - 2 + 5) / 6, in->m);
    out->n_devices = 1;
    out->peak[0] = (chunk1 + chunk2) * in->act;
}

/* DualPipe and DualPipeV ([DUALPIPE] README table; [DSV3] §3.2.1 Table 2): bubble
 * (PP/2-1)(F&B + B_full - 3W) with B_full = B + W the full backward, i.e. (P-1)(F&B + B - 2W)
 * with P = PP/2 devices per pipeline half (p/2 for DualPipe, whose PP = p; p for DualPipeV,
 * whose PP = 2p); PP+1 activations on every device (2x parameters for DualPipe, not
 * predicted here). The README counts the bubble against a device's own work; in ppsim's
 * program (dualpipe.h) device h runs 2n - 3P + h + 1 F&B pairs, one fewer on the middle
 * device, n microbatches per chunk, so the devices with the most pairs, 2n - 2P - 1, are the
 * least busy and the span is their work plus the bubble. Exact (tested on PP 4..32, m from
 * 2p) when F = B >= W and F&B >= F + B; an upper bound when B >= F >= W and F&B >= F + B;
 * neither when F > B or F&B < F + B. */
static void
formula_dualpipe_rows(const PpsimFormulaInput *in, PpsimFormula *out, gboolean bidirectional)
{
    int P = bidirectional ? in->p / 2 : in->p, n = bidirectional ? in->m / 2 : in->m;
    double whole = in->t_f + in->t_b + in->t_w, fb = in->t_fb > 0 ? in->t_fb : whole;
    int pairs = MAX(2 * n - 2 * P - 1, 0);
    out->source = bidirectional ? "[DUALPIPE] README table; [DSV3] §3.2.1 Table 2"
                                : "[DUALPIPE] README table (DualPipeV)";
    out->exact_when = bidirectional ? "v = 2, p even, m even, m >= 2p, p2p = 0, F = B >= W, "
                                      "F&B >= F + B"
                                    : "v = 2, m >= 2p, p2p = 0, F = B >= W, F&B >= F + B";
    out->exact = in->v == 2 && in->m >= 2 * in->p && in->t_f == in->t_b && in->t_w <= in->t_f &&
                 fb >= in->t_f + in->t_b && (!bidirectional || (in->p % 2 == 0 && in->m % 2 == 0));
    out->work = 2.0 * n * whole - pairs * (whole - fb);
    out->span = out->work + (P - 1) * (fb + in->t_b - 2 * in->t_w);
    for (int d = 0; d < in->p; d++)
        out->peak[d] = (2 * P + 1) * in->act;
}

static void
formula_dualpipe(const PpsimFormulaInput *in, PpsimFormula *out)
{
    formula_dualpipe_rows(in, out, TRUE);
}

static void
formula_dualpipev(const PpsimFormulaInput *in, PpsimFormula *out)
{
    formula_dualpipe_rows(in, out, FALSE);
}

gboolean
ppsim_formula_predict(const char *name, const PpsimFormulaInput *in, PpsimFormula *out)
{
    static const struct {
        const char *name;
        void (*fill)(const PpsimFormulaInput *, PpsimFormula *);
    } table[] = {{"1f1b", formula_1f1b},
                 {"gpipe", formula_gpipe},
                 {"interleaved", formula_interleaved},
                 {"zb-h1", formula_zb_h1},
                 {"zb-h2", formula_zb_h2},
                 {"zb-v", formula_zb_v},
                 {"v-half", formula_v_half},
                 {"v-min", formula_v_min},
                 {"gis", formula_gis},
                 {"gis-h", formula_gis_h},
                 {"tpipe", formula_tpipe},
                 {"dualpipe", formula_dualpipe},
                 {"dualpipev", formula_dualpipev}};
    for (guint i = 0; i < G_N_ELEMENTS(table); i++) {
        if (g_strcmp0(table[i].name, name) != 0)
            continue;
        *out = (PpsimFormula){.n_devices = in->p,
                              .peak = g_new0(double, in->p),
                              .convention = "span = max device (end - first start); bubble = "
                                            "span - m v (F+B+W); rate = bubble / span [ZB] "
                                            "§5.3; fraction = bubble / ideal [NAR21]"};
        table[i].fill(in, out);
        formula_finish(in, out);
        return TRUE;
    }
    return FALSE;
}
