/* cbc-load.c: COIN-OR CBC's C API, loaded when a MILP is first solved.
 *
 * Built when meson found the library's SONAME (meson.build defines PPSIM_CBC_SONAME): ppsim
 * is then not linked with CBC, and the CBC and Clp functions milp-cbc.c calls are defined here,
 * each forwarding to the one of that name in the library, opened (with everything it needs: Clp,
 * Cgl, Osi, CoinUtils, libstdc++, LAPACK, ...) on the first call. Every run that solves no MILP
 * starts without loading them. The prototypes come from CBC's header, so a mismatch does not
 * compile. A library that cannot be opened at that point (removed since the build) makes
 * ppsim_milp_cbc_load() fail with a GError, which ppsim_milp_solve() hands to its caller (the
 * unlinked program would not have started at all).
 */
#include "milp/milp-internal.h"
#include "util/ppsim-error.h"
#include <glib.h>
#include <coin/Cbc_C_Interface.h>
#include <coin/Clp_C_Interface.h>
#include <dlfcn.h>
#include <string.h>

/* (return type, name, parameters, arguments) of every function milp-cbc.c uses; V() for those
 * returning void. */
#define CBC_FUNCTIONS(R, V)                                                                        \
    R(Cbc_Model *, Cbc_newModel, (void), ())                                                       \
    V(Cbc_deleteModel, (Cbc_Model * m), (m))                                                       \
    V(Cbc_addCol,                                                                                  \
      (Cbc_Model * m, const char *name, double lb, double ub, double obj, char is_int, int nz,     \
       int *rows, double *coefs),                                                                  \
      (m, name, lb, ub, obj, is_int, nz, rows, coefs))                                             \
    V(Cbc_addRow,                                                                                  \
      (Cbc_Model * m, const char *name, int nz, const int *cols, const double *coefs, char sense,  \
       double rhs),                                                                                \
      (m, name, nz, cols, coefs, sense, rhs))                                                      \
    V(Cbc_loadProblem,                                                                             \
      (Cbc_Model * m, const int nc, const int nr, const CoinBigIndex *start, const int *index,     \
       const double *value, const double *collb, const double *colub, const double *obj,           \
       const double *rowlb, const double *rowub),                                                  \
      (m, nc, nr, start, index, value, collb, colub, obj, rowlb, rowub))                           \
    V(Cbc_setInteger, (Cbc_Model * m, int col), (m, col))                                          \
    R(Clp_Simplex *, Clp_newModel, (void), ())                                                     \
    V(Clp_deleteModel, (Clp_Simplex * m), (m))                                                     \
    V(Clp_setLogLevel, (Clp_Simplex * m, int level), (m, level))                                   \
    V(Clp_loadProblem,                                                                             \
      (Clp_Simplex * m, const int nc, const int nr, const CoinBigIndex *start, const int *index,   \
       const double *value, const double *collb, const double *colub, const double *obj,           \
       const double *rowlb, const double *rowub),                                                  \
      (m, nc, nr, start, index, value, collb, colub, obj, rowlb, rowub))                           \
    R(int, Clp_dual, (Clp_Simplex * m, int values_pass), (m, values_pass))                         \
    R(int, Clp_isProvenOptimal, (Clp_Simplex * m), (m))                                            \
    R(double, Clp_objectiveValue, (Clp_Simplex * m), (m))                                          \
    V(Cbc_setMIPStartI, (Cbc_Model * m, int count, const int cols[], const double values[]),       \
      (m, count, cols, values))                                                                    \
    V(Cbc_setLogLevel, (Cbc_Model * m, int level), (m, level))                                     \
    V(Cbc_setParameter, (Cbc_Model * m, const char *name, const char *value), (m, name, value))    \
    V(Cbc_setMaximumSeconds, (Cbc_Model * m, double seconds), (m, seconds))                        \
    V(Cbc_setMaximumNodes, (Cbc_Model * m, int nodes), (m, nodes))                                 \
    V(Cbc_setAllowableFractionGap, (Cbc_Model * m, double gap), (m, gap))                          \
    R(int, Cbc_solve, (Cbc_Model * m), (m))                                                        \
    R(int, Cbc_status, (Cbc_Model * m), (m))                                                       \
    R(int, Cbc_isAbandoned, (Cbc_Model * m), (m))                                                  \
    R(int, Cbc_numberSavedSolutions, (Cbc_Model * m), (m))                                         \
    R(int, Cbc_isProvenOptimal, (Cbc_Model * m), (m))                                              \
    R(int, Cbc_isProvenInfeasible, (Cbc_Model * m), (m))                                           \
    R(int, Cbc_isSecondsLimitReached, (Cbc_Model * m), (m))                                        \
    R(double *, Cbc_bestSolution, (Cbc_Model * m), (m))                                            \
    R(const double *, Cbc_getColSolution, (Cbc_Model * m), (m))                                    \
    R(double, Cbc_getObjValue, (Cbc_Model * m), (m))                                               \
    R(double, Cbc_getBestPossibleObjValue, (Cbc_Model * m), (m))

#define CBC_FIELD(ret, name, params, args) ret(*name) params;
#define CBC_FIELD_VOID(name, params, args) void(*name) params;
typedef struct {
    CBC_FUNCTIONS(CBC_FIELD, CBC_FIELD_VOID)
} CbcApi;

static CbcApi cbc_api;
static char *cbc_load_error; /* why the library could not be opened; NULL when it was */

/* Opens the library once (thread-safe: sweeps solve on several threads). Returns FALSE, with
 * cbc_load_error set, when it or one of its functions is missing. */
static gboolean
cbc_open(void)
{
    static gsize loaded;
    if (g_once_init_enter(&loaded)) {
        void *lib = dlopen(PPSIM_CBC_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            cbc_load_error = g_strdup(dlerror());
            /* dlsym's void * to a function pointer: the POSIX idiom, through memcpy */
#define CBC_LOOKUP(name)                                                                           \
    do {                                                                                           \
        void *sym = lib ? dlsym(lib, #name) : NULL;                                                \
        if (lib != NULL && sym == NULL && cbc_load_error == NULL)                                  \
            cbc_load_error = g_strdup("no " #name);                                                \
        memcpy(&cbc_api.name, &sym, sizeof sym);                                                   \
    } while (0);
#define CBC_LOOKUP_R(ret, name, params, args) CBC_LOOKUP(name)
#define CBC_LOOKUP_V(name, params, args) CBC_LOOKUP(name)
        CBC_FUNCTIONS(CBC_LOOKUP_R, CBC_LOOKUP_V)
        g_once_init_leave(&loaded, 1);
    }
    return cbc_load_error == NULL;
}

/* The library's functions: only called after ppsim_milp_cbc_load() succeeded. */
static const CbcApi *
cbc(void)
{
    gboolean ok = cbc_open();
    g_assert(ok);
    return &cbc_api;
}

#define CBC_FORWARD(ret, name, params, args)                                                       \
    ret name params                                                                                \
    {                                                                                              \
        return cbc()->name args;                                                                   \
    }
#define CBC_FORWARD_VOID(name, params, args)                                                       \
    void name params                                                                               \
    {                                                                                              \
        cbc()->name args;                                                                          \
    }
CBC_FUNCTIONS(CBC_FORWARD, CBC_FORWARD_VOID)

gboolean
ppsim_milp_cbc_load(GError **error)
{
    if (cbc_open())
        return TRUE;
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                "cannot load the MILP solver %s: %s", PPSIM_CBC_SONAME, cbc_load_error);
    return FALSE;
}
