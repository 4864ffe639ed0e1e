/* milp-cbc.c: solving a model with COIN-OR CBC's C API under a hard wall-clock limit; see
 * milp.h.
 *
 * CBC checks its own time limit only here and there: the root node (its LP, cut rounds and
 * heuristics) can run on long after it, and on a loaded machine a 1 s limit took up to
 * 2.25 s. So the solve runs in a child process (fork) that sends what it learns through a
 * pipe, and the caller stops waiting at the deadline and kills it:
 *
 *   - the child first solves the LP relaxation and sends its optimum, a lower bound that
 *     is there even if nothing else comes back;
 *   - it then runs CBC with CBC's own limit set a little before the caller's deadline
 *     (soft_limit()), so that a search that gets past the root returns its incumbent by
 *     itself, and sends CBC's answer;
 *   - when the deadline passes first, the caller kills the child and reports a time limit
 *     with no incumbent of the solver's own (cut_off) and the LP bound; callers then keep
 *     their MIP start, which is never worse.
 *
 * CBC 2.10's C API has no incumbent callback (its message callback sees only the messages
 * of the model handed to it, not those of the branch-and-bound copy that finds incumbents,
 * and its cut callback sees node LPs, not incumbents), so incumbents cannot be streamed one
 * by one: what CBC finds at a root node that runs past the deadline is lost.
 *
 * A child that dies (CBC crashing, or killed by someone) is neither a crash of ppsim nor an
 * error: the result says so (died) with the LP bound if it came, and callers keep their MIP
 * start, as at the deadline. Test hook: PPSIM_TEST_CBC_SIGNAL=N makes the child raise signal N
 * once the LP bound is sent, in the middle of the solve. Where fork() fails the
 * solve runs in this process with CBC's own, soft, limit. Determinism: the child runs the
 * same CBC search as an in-process solve would, so whenever CBC returns by itself (proved,
 * node limit, gap) the answer is the same on every run.
 */
#include "milp/milp-internal.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef PPSIM_HAVE_CBC
#include <coin/Cbc_C_Interface.h>
#include <coin/Clp_C_Interface.h>
#include <float.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#endif

#ifdef PPSIM_HAVE_CBC
/* The model as the column-major arrays that CBC's and Clp's loadProblem() take at once
 * (adding rows one by one took seconds from about 3,000 binaries on). */
typedef struct {
    int n, nr;
    CoinBigIndex *start; /* [n + 1] */
    int *index;          /* [nz] rows */
    double *value;       /* [nz] */
    double *collb, *colub, *obj, *rowlb, *rowub;
} MilpArrays;

static void
milp_arrays(const PpsimMilp *milp, MilpArrays *a)
{
    int n = a->n = (int)milp->cols->len, nr = a->nr = (int)milp->row_sense->len;
    const int *beg = (const int *)(void *)milp->row_beg->data;
    const int *idx = (const int *)(void *)milp->row_idx->data;
    const double *val = (const double *)(void *)milp->row_val->data;
    gsize nz = (gsize)beg[nr], cols = (gsize)n, rows = (gsize)MAX(nr, 1);
    a->start = g_new0(CoinBigIndex, cols + 1);
    a->index = g_new(int, MAX(nz, 1));
    a->value = g_new(double, MAX(nz, 1));
    for (gsize k = 0; k < nz; k++)
        a->start[idx[k] + 1]++;
    for (int j = 0; j < n; j++)
        a->start[j + 1] += a->start[j];
    g_autofree CoinBigIndex *fill = g_memdup2(a->start, (cols + 1) * sizeof(CoinBigIndex));
    for (int r = 0; r < nr; r++) /* rows in order within each column */
        for (int k = beg[r]; k < beg[r + 1]; k++) {
            CoinBigIndex at = fill[idx[k]]++;
            a->index[at] = r;
            a->value[at] = val[k];
        }
    a->collb = g_new(double, cols + 1), a->colub = g_new(double, cols + 1);
    a->obj = g_new(double, cols + 1);
    for (int j = 0; j < n; j++) {
        const MilpCol *c = &g_array_index(milp->cols, MilpCol, j);
        a->collb[j] = isinf(c->lower) ? -DBL_MAX : c->lower;
        a->colub[j] = isinf(c->upper) ? DBL_MAX : c->upper;
        a->obj[j] = c->objective;
    }
    a->rowlb = g_new(double, rows), a->rowub = g_new(double, rows);
    for (int r = 0; r < nr; r++) {
        char sense = g_array_index(milp->row_sense, char, r);
        double rhs = g_array_index(milp->row_rhs, double, r);
        a->rowlb[r] = sense == 'L' ? -DBL_MAX : rhs;
        a->rowub[r] = sense == 'G' ? DBL_MAX : rhs;
    }
}

static void
milp_arrays_clear(MilpArrays *a)
{
    g_free(a->start), g_free(a->index), g_free(a->value);
    g_free(a->collb), g_free(a->colub), g_free(a->obj), g_free(a->rowlb), g_free(a->rowub);
}

/* Loads the model into a new Cbc_Model. */
static Cbc_Model *
milp_to_cbc(const PpsimMilp *milp)
{
    MilpArrays a;
    milp_arrays(milp, &a);
    Cbc_Model *model = Cbc_newModel();
    Cbc_loadProblem(model, a.n, a.nr, a.start, a.index, a.value, a.collb, a.colub, a.obj, a.rowlb,
                    a.rowub);
    for (int j = 0; j < a.n; j++)
        if (g_array_index(milp->cols, MilpCol, j).integer)
            Cbc_setInteger(model, j);
    milp_arrays_clear(&a);
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

/* A Cbc_Model of @milp with @opts and CBC's own time limit @soft_s (<= 0: none). */
static Cbc_Model *
milp_configure(const PpsimMilp *milp, const PpsimMilpOptions *opts, double soft_s)
{
    Cbc_Model *model = milp_to_cbc(milp);
    char text[32];
    Cbc_setLogLevel(model, 0);
    snprintf(text, sizeof text, "%d", MAX(1, opts->threads));
    Cbc_setParameter(model, "threads", text);
    Cbc_setParameter(model, "timeMode", "elapsed"); /* wall clock, as reported */
    /* CBC 2.10.8 crashes in CglPreProcess::postProcess when the time limit stops a search on a
     * preprocessed model (seen at 5,000 binaries); without preprocessing it does not, and
     * the limit is honoured */
    Cbc_setParameter(model, "preprocess", "off");
    if (opts->light) {
        Cbc_setParameter(model, "cuts", "off");
        Cbc_setParameter(model, "strong", "0");
    }
    if (soft_s > 0)
        Cbc_setMaximumSeconds(model, soft_s);
    if (opts->node_limit > 0)
        Cbc_setMaximumNodes(model, (int)MIN(opts->node_limit, G_MAXINT));
    if (opts->gap > 0)
        Cbc_setAllowableFractionGap(model, opts->gap);
    milp_set_start(milp, model);
    return model;
}

/* What a finished Cbc_Model says: fills @out (x in a new array) and returns 0, or CBC's
 * status when it abandoned the search (-1 if it gave none). */
static int
milp_collect(Cbc_Model *model, int n, PpsimMilpResult *out)
{
    int status = Cbc_status(model);
    if (Cbc_isAbandoned(model) || status == 2)
        return status == 0 ? -1 : status;
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
    }
    return 0;
}

/* The solve in this process, CBC's time limit as the only one (fork() failed). */
static int
milp_solve_here(const PpsimMilp *milp, const PpsimMilpOptions *opts, PpsimMilpResult *out)
{
    Cbc_Model *model = milp_configure(milp, opts, opts->time_limit_s);
    int rc = Cbc_solve(model);
    int bad = rc > 1 ? rc : milp_collect(model, (int)milp->cols->len, out);
    Cbc_deleteModel(model);
    return bad;
}

/* ---- the child process ---- */

/* Records on the pipe: one kind byte, then the payload. */
enum {
    REC_BOUND = 'b', /* double: a lower bound */
    REC_END = 'e',   /* EndRecord, then n_cols doubles when has_x */
};

typedef struct {
    int bad; /* milp_collect's: CBC abandoned the search */
    int status, time_limit_hit, has_x;
    double objective, bound;
} EndRecord;

static void
child_write(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3); /* the caller has gone */
        p += w, len -= (size_t)w;
    }
}

/* CBC's own time limit for a search starting now, when the caller's deadline is @t0 +
 * @limit_s (monotonic µs, seconds): CBC stops a search only where it checks its clock, and
 * then takes a while to wrap up (0.2-0.5 s measured on 4-8 devices; more where a root node
 * runs long), so it is asked to stop MIN(30% of the limit, 1 s) early, to return its
 * incumbent before the deadline kills it. At least 1 ms (0 would mean no limit). */
static double
soft_limit(gint64 t0, double limit_s)
{
    double left = limit_s - MIN(0.3 * limit_s, 1.0) - (g_get_monotonic_time() - t0) / 1e6;
    return MAX(left, 1e-3);
}

/* The LP relaxation's optimum, by Clp's dual simplex (as CBC's root LP; CBC's own LP path,
 * Clp's default initial solve, took seconds where this takes milliseconds), sent as a
 * bound when proved. */
static void
child_relaxation(const PpsimMilp *milp, int fd)
{
    MilpArrays a;
    milp_arrays(milp, &a);
    Clp_Simplex *lp = Clp_newModel();
    Clp_setLogLevel(lp, 0);
    Clp_loadProblem(lp, a.n, a.nr, a.start, a.index, a.value, a.collb, a.colub, a.obj, a.rowlb,
                    a.rowub);
    milp_arrays_clear(&a);
    Clp_dual(lp, 0);
    if (Clp_isProvenOptimal(lp)) {
        char rec[1 + sizeof(double)];
        double v = Clp_objectiveValue(lp);
        rec[0] = REC_BOUND;
        memcpy(rec + 1, &v, sizeof v);
        child_write(fd, rec, sizeof rec);
    }
    Clp_deleteModel(lp);
}

static void G_GNUC_NORETURN
child_run(const PpsimMilp *milp, const PpsimMilpOptions *opts, int fd, pid_t parent, gint64 t0)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the caller */
#endif
    if (getppid() != parent)
        _exit(4);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) /* whatever CBC prints stays off the caller's output */
        dup2(null, STDOUT_FILENO);
    child_relaxation(milp, fd);
    const char *hook = g_getenv("PPSIM_TEST_CBC_SIGNAL");
    if (hook != NULL && atoi(hook) > 0)
        raise(atoi(hook));
    double soft = opts->time_limit_s > 0 ? soft_limit(t0, opts->time_limit_s) : 0;
    Cbc_Model *model = milp_configure(milp, opts, soft);
    int rc = Cbc_solve(model);
    int n = (int)milp->cols->len;
    PpsimMilpResult res = {.objective = NAN, .bound = NAN};
    int bad = rc > 1 ? rc : milp_collect(model, n, &res);
    EndRecord end = {bad, res.status, res.time_limit_hit, res.x != NULL, res.objective, res.bound};
    char kind = REC_END;
    child_write(fd, &kind, 1);
    child_write(fd, &end, sizeof end);
    if (res.x != NULL)
        child_write(fd, res.x, (size_t)n * sizeof(double));
    _exit(0); /* no atexit handlers, no stdio flush: they belong to the caller */
}

/* ---- the caller's side ---- */

/* Walks the records in @buf: the best bound streamed (*@bound, kept when there is none) and
 * the offset of the complete end record, or -1 (none yet, or cut by the kill). */
static gssize
parent_walk(const GByteArray *buf, int n, double *bound)
{
    gsize at = 0;
    while (at < buf->len) {
        char kind = (char)buf->data[at];
        if (kind == REC_BOUND) {
            double v;
            if (at + 1 + sizeof v > buf->len)
                return -1;
            memcpy(&v, buf->data + at + 1, sizeof v);
            at += 1 + sizeof v;
            if (isnan(*bound) || v > *bound)
                *bound = v;
            continue;
        }
        EndRecord end;
        if (kind != REC_END || at + 1 + sizeof end > buf->len)
            return -1;
        memcpy(&end, buf->data + at + 1, sizeof end);
        gsize xs = end.has_x ? (gsize)n * sizeof(double) : 0;
        return at + 1 + sizeof end + xs <= buf->len ? (gssize)at : -1;
    }
    return -1;
}

/* Reads the child's records until its end record is complete, it closes the pipe, or
 * @deadline (monotonic µs, 0: none) passes. Returns FALSE on the deadline. (The end record,
 * not the end of the pipe, is what counts: a child forked meanwhile by another thread of
 * this process holds a copy of the pipe's write end.) */
static gboolean
parent_read(int fd, gint64 deadline, int n, GByteArray *buf)
{
    char chunk[1 << 16];
    double bound = NAN;
    for (;;) {
        int timeout = -1;
        if (deadline > 0) {
            gint64 left = deadline - g_get_monotonic_time();
            if (left <= 0)
                return FALSE;
            timeout = (int)MIN((left + 999) / 1000, G_MAXINT);
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, timeout);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return FALSE; /* cannot wait: treated as the deadline */
        if (r == 0)
            continue; /* the loop's clock check decides */
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return TRUE;
        g_byte_array_append(buf, (const guint8 *)chunk, (guint)got);
        if (parent_walk(buf, n, &bound) >= 0)
            return TRUE;
    }
}

/* Parses @buf into @out: the bounds streamed, and the end record when it came (*@ended).
 * Returns the end record's `bad`. */
static int
parent_parse(const GByteArray *buf, int n, PpsimMilpResult *out, gboolean *ended)
{
    gssize at = parent_walk(buf, n, &out->bound);
    *ended = at >= 0;
    if (at < 0)
        return 0;
    EndRecord end;
    memcpy(&end, buf->data + at + 1, sizeof end);
    out->status = (PpsimMilpStatus)end.status;
    out->time_limit_hit = end.time_limit_hit;
    out->objective = end.objective;
    out->bound = end.bound;
    if (end.has_x)
        out->x = g_memdup2(buf->data + at + 1 + sizeof end, (gsize)n * sizeof(double));
    return end.bad;
}

static gpointer
reap_child(gpointer pid)
{
    while (waitpid(GPOINTER_TO_INT(pid), NULL, 0) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* The solve in a child process, killed at the deadline. Returns FALSE (errno set) when no
 * child could be started; else fills @out and *@bad, or sets @error when the child died. */
static gboolean
milp_solve_child(const PpsimMilp *milp, const PpsimMilpOptions *opts, gint64 t0,
                 PpsimMilpResult *out, int *bad, GError **error)
{
    int fds[2];
    if (pipe(fds) != 0)
        return FALSE;
    pid_t parent = getpid(); /* (the child never flushes the stdio buffers it inherits) */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]), close(fds[1]);
        errno = e;
        return FALSE;
    }
    if (pid == 0) {
        close(fds[0]);
        child_run(milp, opts, fds[1], parent, t0);
    }
    close(fds[1]);
    gint64 deadline = opts->time_limit_s > 0 ? t0 + (gint64)(opts->time_limit_s * 1e6) : 0;
    g_autoptr(GByteArray) buf = g_byte_array_new();
    gboolean done = parent_read(fds[0], deadline, (int)milp->cols->len, buf);
    close(fds[0]);
    int wstatus = 0;
    if (!done) { /* a killed child dies when it next runs: on a loaded machine that can take
                  * tens of ms, so it is reaped on a thread of its own, not waited for */
        kill(pid, SIGKILL);
        g_thread_unref(g_thread_new("ppsim-milp-reap", reap_child, GINT_TO_POINTER(pid)));
    } else
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
            ;
    gboolean ended;
    *bad = parent_parse(buf, (int)milp->cols->len, out, &ended);
    if (ended)
        return TRUE;
    if (!done) { /* the deadline: whatever was streamed, no incumbent */
        out->status = PPSIM_MILP_LIMIT;
        out->time_limit_hit = TRUE;
        out->cut_off = TRUE;
        return TRUE;
    }
    /* the child died before its answer: no incumbent, the LP bound if it was sent */
    (void)error;
    out->status = PPSIM_MILP_NO_SOLUTION;
    out->died = TRUE;
    if (WIFSIGNALED(wstatus))
        g_snprintf(out->died_why, sizeof out->died_why, "killed by signal %d (%s)",
                   WTERMSIG(wstatus), g_strsignal(WTERMSIG(wstatus)));
    else
        g_snprintf(out->died_why, sizeof out->died_why, "exit status %d without an answer",
                   WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    *bad = 0;
    return TRUE;
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
    if (!ppsim_milp_cbc_load(error))
        return FALSE;
    gint64 t0 = g_get_monotonic_time();
    int bad = 0;
    GError *local = NULL;
    if (!milp_solve_child(milp, opts, t0, out, &bad, &local))
        bad = milp_solve_here(milp, opts, out);
    out->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    if (local != NULL) {
        ppsim_milp_result_clear(out);
        g_propagate_error(error, local);
        return FALSE;
    }
    if (bad != 0) {
        ppsim_milp_result_clear(out);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_INVALID,
                    "the MILP solver (CBC) abandoned the search (status %d)", bad);
        return FALSE;
    }
    if (out->x != NULL) {
        if (out->bound > out->objective)
            out->bound = out->objective;
        out->gap =
            fabs(out->objective) > 1e-12 ? (out->objective - out->bound) / fabs(out->objective) : 0;
        if (out->gap < 1e-9) { /* proved within CBC's tolerance: report the bound as reached */
            out->gap = 0;
            out->bound = out->objective;
        }
    }
    return TRUE;
#endif
}
