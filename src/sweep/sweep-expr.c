/* sweep-expr.c: the constraint expressions of sweeps; see sweep.h.
 *
 * A recursive-descent parser into a flat array of nodes, evaluated on doubles. Grammar,
 * loosest first: || (or), && (and), ! (not), comparisons == != < <= > >=, + -, * / %,
 * unary -, then numbers, names and parentheses. Names are key paths or short aliases.
 */
#include "sweep/sweep.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <math.h>
#include <string.h>

typedef enum {
    N_NUM,
    N_NAME,
    N_NEG,
    N_NOT,
    N_BIN,
} NodeKind;

typedef struct {
    NodeKind kind;
    int op; /* N_BIN: the operator's token, see below */
    int a, b;
    double num;
    char *name; /* N_NAME: resolved key path */
} Node;

/* two-character operators get codes above 255 */
enum { OP_EQ = 256, OP_NE, OP_LE, OP_GE, OP_AND, OP_OR };

struct PpsimSweepExpr {
    char *text;
    GArray *nodes; /* Node */
    int root;
};

typedef struct {
    const char *text, *at;
    GArray *nodes;
    GError **error;
    gboolean failed;
} ExprParser;

static const struct {
    const char *alias, *path;
} expr_aliases[] = {
    {"m", "training.microbatches"}, {"p", "training.pp"},
    {"pp", "training.pp"},          {"v", "training.chunks"},
    {"chunks", "training.chunks"},  {"mbs", "training.microbatch_size"},
    {"layers", "model.layers"},     {"hidden", "model.hidden"},
    {"heads", "model.heads"},       {"seq_len", "model.seq_len"},
    {"tp", "parallel.tp"},          {"dp", "parallel.dp"},
    {"zero", "parallel.zero"},
};

static int
expr_fail(ExprParser *P, const char *what)
{
    if (!P->failed) {
        g_autofree char *q = ppsim_quote(P->text);
        g_set_error(P->error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE,
                    "constraint '%s', column %d: %s", q, (int)(P->at - P->text) + 1, what);
    }
    P->failed = TRUE;
    return -1;
}

static int
expr_node(ExprParser *P, Node n)
{
    g_array_append_val(P->nodes, n);
    return (int)P->nodes->len - 1;
}

static void
expr_space(ExprParser *P)
{
    while (*P->at == ' ' || *P->at == '\t')
        P->at++;
}

/* Consumes @tok (with a word boundary for words) if it comes next. */
static gboolean
expr_accept(ExprParser *P, const char *tok)
{
    expr_space(P);
    gsize n = strlen(tok);
    if (strncmp(P->at, tok, n) != 0)
        return FALSE;
    if (g_ascii_isalpha(tok[0]) && (g_ascii_isalnum(P->at[n]) || P->at[n] == '_'))
        return FALSE;
    P->at += n;
    return TRUE;
}

static int expr_or(ExprParser *P);

static int
expr_primary(ExprParser *P)
{
    expr_space(P);
    if (expr_accept(P, "(")) {
        int e = expr_or(P);
        if (!expr_accept(P, ")"))
            return expr_fail(P, "expected ')'");
        return e;
    }
    if (g_ascii_isdigit(*P->at) || *P->at == '.') {
        char *end = NULL;
        double v = g_ascii_strtod(P->at, &end);
        if (end == P->at || !isfinite(v))
            return expr_fail(P, "bad number");
        P->at = end;
        return expr_node(P, (Node){.kind = N_NUM, .num = v});
    }
    if (g_ascii_isalpha(*P->at) || *P->at == '_') {
        const char *start = P->at;
        while (g_ascii_isalnum(*P->at) || *P->at == '_' || *P->at == '.')
            P->at++;
        g_autofree char *name = g_strndup(start, P->at - start);
        const char *path = name;
        for (guint i = 0; i < G_N_ELEMENTS(expr_aliases); i++)
            if (strcmp(name, expr_aliases[i].alias) == 0)
                path = expr_aliases[i].path;
        return expr_node(P, (Node){.kind = N_NAME, .name = g_strdup(path)});
    }
    return expr_fail(P, *P->at ? "expected a number, a name or '('" : "unexpected end");
}

static int
expr_unary(ExprParser *P)
{
    if (expr_accept(P, "-")) {
        int a = expr_unary(P);
        return a < 0 ? a : expr_node(P, (Node){.kind = N_NEG, .a = a});
    }
    return expr_primary(P);
}

static int
expr_binary(ExprParser *P, int a, int op, int (*next)(ExprParser *))
{
    int b = next(P);
    if (a < 0 || b < 0)
        return -1;
    return expr_node(P, (Node){.kind = N_BIN, .op = op, .a = a, .b = b});
}

static int
expr_mul(ExprParser *P)
{
    int a = expr_unary(P);
    for (;;) {
        if (expr_accept(P, "*"))
            a = expr_binary(P, a, '*', expr_unary);
        else if (expr_accept(P, "/"))
            a = expr_binary(P, a, '/', expr_unary);
        else if (expr_accept(P, "%"))
            a = expr_binary(P, a, '%', expr_unary);
        else
            return a;
    }
}

static int
expr_add(ExprParser *P)
{
    int a = expr_mul(P);
    for (;;) {
        if (expr_accept(P, "+"))
            a = expr_binary(P, a, '+', expr_mul);
        else if (expr_accept(P, "-"))
            a = expr_binary(P, a, '-', expr_mul);
        else
            return a;
    }
}

static int
expr_cmp(ExprParser *P)
{
    int a = expr_add(P);
    static const struct {
        const char *tok;
        int op;
    } ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"<", '<'}, {">", '>'}};
    for (guint i = 0; i < G_N_ELEMENTS(ops); i++)
        if (expr_accept(P, ops[i].tok))
            return expr_binary(P, a, ops[i].op, expr_add);
    return a;
}

static int
expr_not(ExprParser *P)
{
    if (expr_accept(P, "!") || expr_accept(P, "not")) {
        int a = expr_not(P);
        return a < 0 ? a : expr_node(P, (Node){.kind = N_NOT, .a = a});
    }
    return expr_cmp(P);
}

static int
expr_and(ExprParser *P)
{
    int a = expr_not(P);
    while (expr_accept(P, "&&") || expr_accept(P, "and"))
        a = expr_binary(P, a, OP_AND, expr_not);
    return a;
}

static int
expr_or(ExprParser *P)
{
    int a = expr_and(P);
    while (expr_accept(P, "||") || expr_accept(P, "or"))
        a = expr_binary(P, a, OP_OR, expr_and);
    return a;
}

static void
node_clear(gpointer p)
{
    g_free(((Node *)p)->name);
}

PpsimSweepExpr *
ppsim_sweep_expr_parse(const char *text, GError **error)
{
    g_autoptr(GArray) nodes = g_array_new(FALSE, FALSE, sizeof(Node));
    g_array_set_clear_func(nodes, node_clear);
    ExprParser P = {.text = text, .at = text, .nodes = nodes, .error = error};
    int root = expr_or(&P);
    expr_space(&P);
    if (root >= 0 && *P.at != '\0')
        root = expr_fail(&P, "unexpected text");
    if (root < 0)
        return NULL;
    PpsimSweepExpr *e = g_new0(PpsimSweepExpr, 1);
    e->text = g_strdup(text);
    e->nodes = g_steal_pointer(&nodes);
    e->root = root;
    return e;
}

void
ppsim_sweep_expr_free(PpsimSweepExpr *e)
{
    if (e == NULL)
        return;
    g_free(e->text);
    g_array_unref(e->nodes);
    g_free(e);
}

static gboolean
expr_eval(const PpsimSweepExpr *e, int i, PpsimSweepLookup lookup, gpointer data, double *out,
          GError **error)
{
    const Node *n = &g_array_index(e->nodes, Node, i);
    double a = 0, b = 0;
    switch (n->kind) {
    case N_NUM:
        *out = n->num;
        return TRUE;
    case N_NAME:
        if (!lookup(n->name, out, data)) {
            g_autofree char *q = ppsim_quote(e->text), *qn = ppsim_quote(n->name);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                        "constraint '%s': '%s' names no number of the scenario", q, qn);
            return FALSE;
        }
        return TRUE;
    case N_NEG:
    case N_NOT:
        if (!expr_eval(e, n->a, lookup, data, &a, error))
            return FALSE;
        *out = n->kind == N_NEG ? -a : (a == 0);
        return TRUE;
    case N_BIN:
        break;
    }
    if (!expr_eval(e, n->a, lookup, data, &a, error))
        return FALSE;
    if (n->op == OP_AND && a == 0) { /* short circuit */
        *out = 0;
        return TRUE;
    }
    if (n->op == OP_OR && a != 0) {
        *out = 1;
        return TRUE;
    }
    if (!expr_eval(e, n->b, lookup, data, &b, error))
        return FALSE;
    switch (n->op) {
    case '+':
        *out = a + b;
        break;
    case '-':
        *out = a - b;
        break;
    case '*':
        *out = a * b;
        break;
    case '/':
    case '%':
        if (b == 0) {
            g_autofree char *q = ppsim_quote(e->text);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "constraint '%s': division by zero", q);
            return FALSE;
        }
        *out = n->op == '/' ? a / b : fmod(a, b);
        break;
    case OP_EQ:
        *out = a == b;
        break;
    case OP_NE:
        *out = a != b;
        break;
    case OP_LE:
        *out = a <= b;
        break;
    case OP_GE:
        *out = a >= b;
        break;
    case '<':
        *out = a < b;
        break;
    case '>':
        *out = a > b;
        break;
    case OP_AND:
    case OP_OR:
        *out = b != 0;
        break;
    default:
        g_assert_not_reached();
    }
    return TRUE;
}

gboolean
ppsim_sweep_expr_eval(const PpsimSweepExpr *e, PpsimSweepLookup lookup, gpointer data,
                      gboolean *out, GError **error)
{
    double v = 0;
    if (!expr_eval(e, e->root, lookup, data, &v, error))
        return FALSE;
    *out = v != 0;
    return TRUE;
}
