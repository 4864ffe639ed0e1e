/* generator.h: the generator plug-in class and its options.
 *
 * Generators are pure: a pipeline shape, validated options and cost estimates in, schedule
 * IR out; they know nothing of hardware. Registering one is one line in
 * src/sched/meson.build.
 */
#pragma once

#include <glib.h>
#include "cost/cost-estimates.h"
#include "schedule/schedule.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_OPTION_INT,
    PPSIM_OPTION_DOUBLE,
    PPSIM_OPTION_STRING,
} PpsimOptionType;

/* One generator option (YAML key under `schedule: {name: ..., key: value}`). */
typedef struct {
    const char *name;
    PpsimOptionType type;
    const char *default_value; /* as text; NULL means "not set" */
    const char *help;
} PpsimOptionSpec;

/* Options after validation against a generator's table (options.c). */
typedef struct PpsimOptions PpsimOptions;

gboolean ppsim_options_is_set(const PpsimOptions *opts, const char *name);
gint64 ppsim_options_get_int(const PpsimOptions *opts, const char *name);
double ppsim_options_get_double(const PpsimOptions *opts, const char *name);
const char *ppsim_options_get_string(const PpsimOptions *opts, const char *name);

/* Reads string option @name as a recompute mode ([TP] §6's baselines): "none"; a ratio in
 * (0, 1], the share of each stage's activation recomputed before its backward, returned in
 * percent (1..100) in @share_pct; or, when @allow_t_recomp, "t-recomp" (@t_recomp: the
 * shallowest chunk recomputed whole, [TP] §4.2). Errors name the option and the rule. */
gboolean ppsim_options_get_recompute(const PpsimOptions *opts, const char *name,
                                     gboolean allow_t_recomp, int *share_pct, gboolean *t_recomp,
                                     GError **error);

/* Shape of the pipeline a generator must fill. */
typedef struct {
    int p; /* devices */
    int v; /* chunks (virtual stages) per device */
    int m; /* microbatches */
} PpsimPipelineShape;

/* One thing a generator chose that the user did not set (a default it computed, a plan it
 * picked): shown in the text header and in JSON `choices` (value) and `choice_notes` (why),
 * so no choice is invisible. */
typedef struct {
    char *key;   /* usually the option's name, e.g. "co_schedule" */
    char *value; /* what was used, as the option would be written, e.g. "independent" */
    char *note;  /* why, e.g. "auto, fastest by replay: ..." */
} PpsimChoice;

/* Appends a choice to @choices (a GArray of PpsimChoice; nullable: then nothing happens).
 * A later choice with the same key replaces the earlier one. */
void ppsim_choice_add(GArray *choices, const char *key, const char *value, const char *note_fmt,
                      ...) G_GNUC_PRINTF(4, 5);
/* A GArray of PpsimChoice that frees its strings. */
GArray *ppsim_choices_new(void);

/* Replays @candidate on the run's modelled hardware: its makespan and whether every device
 * stays within the memory limit. Provided by the runner so that a generator can choose
 * between plans it cannot rank from estimates alone (e.g. PipeOffload's co-schedules on a
 * shared PCIe switch); the generator still learns nothing of the hardware but these two
 * numbers. The runner may keep the replay of the best candidate so far and use it as the
 * run's when the generator returns an equal schedule, so a generator should return the
 * candidate it measured as is rather than rebuild it. */
typedef gboolean (*PpsimMeasureFunc)(const PpsimSchedule *candidate, PpsimTime *makespan_ps,
                                     gboolean *fits, gpointer user_data, GError **error);

/* What a solver-backed generator (optpipe) says about how it made its schedule; reported
 * per result (text, and JSON `solver`). Plain data, no pointers. */
typedef struct {
    gboolean present;
    char path[32];        /* which path produced the schedule: "milp", "warm-start", "heuristic" */
    char status[32];      /* the returned schedule's: the solver status ("optimal",
                           * "time_limit", ...) when it is the solver's, "warm-start" when it
                           * is not (or "optimal" when the bound proves it), "not-run" */
    char milp_status[32]; /* the solver's own status ("" when it did not run) */
    char note[128];       /* why the path was taken, when not the MILP's ("" otherwise) */
    char warning[256];    /* for stderr: e.g. a corrupt cache entry ignored ("" if none) */
    double objective_ms;  /* the returned schedule's objective (NAN: none) */
    double milp_objective_ms; /* the solver's incumbent's objective (NAN: none or not run) */
    double bound_ms;          /* best lower bound (NAN: none) */
    double gap;               /* (objective - bound) / objective (NAN: none) */
    double seconds;           /* solver wall time (not deterministic) */
} PpsimSolverReport;

typedef struct {
    const PpsimOptions *options;     /* never NULL */
    const PpsimCostEstimates *costs; /* never NULL */
    GArray *choices;                 /* PpsimChoice out; nullable (ppsim_choice_add copes) */
    PpsimMeasureFunc measure;        /* nullable: no replay available (a generator called on
                                      * its own); generators then fall back to a rule */
    gpointer measure_data;
    PpsimSolverReport *solver; /* nullable: where solver-backed generators report */
} PpsimScheduleParams;

typedef gboolean (*PpsimGenerateFunc)(const PpsimPipelineShape *shape,
                                      const PpsimScheduleParams *params, PpsimSchedule **out,
                                      GError **error);

typedef struct {
    const char *name;      /* kebab-case key for CLI and YAML, e.g. "zb-h1" */
    const char *summary;   /* one line for `ppsim list schedules` */
    const char *reference; /* citation key (README References), e.g. "[ZB] Table 2" */
    int chunks;            /* fixed v (1 for 1F1B, 2 for V-shapes); 0 = training.chunks */
    int pipes;             /* 0 or 1: one pipeline through the p*v stages; 2: two pipelines of p*v/2
                            * stages (schedule.h pipe_stages), the second running the same layers as the
                            * first (DualPipe): its estimates repeat the first's */
    const PpsimOptionSpec *options; /* table closed by {NULL}; nullable */
    PpsimGenerateFunc generate;
} PpsimScheduleClass;

/* The scenario's memory limit as device @device's activation budget: memory_limit minus the
 * static memory (weights, gradients, optimizer states) of the stages @stage_device puts on
 * it, in memory units. Meaningful only when costs->memory_limit_set. (memory-cap.c) */
gint64 ppsim_memory_cap_budget(const PpsimCostEstimates *costs, const int *stage_device,
                               int n_stages, int device);

/* The default cap of generators that take one: when the scenario set memory.limit, fills
 * @limit[n_devices] with each device's activation budget and sets *@applied; else leaves
 * @limit alone and clears *@applied. Errors (PPSIM_SCHED_ERROR_UNSUPPORTED, prefixed by
 * @what): a budget below one microbatch's activation of all the device's stages, naming the
 * smallest feasible memory.limit. */
gboolean ppsim_memory_cap_default(const PpsimCostEstimates *costs, const int *stage_device,
                                  int n_stages, int n_devices, gint64 *limit, gboolean *applied,
                                  const char *what, GError **error);

/* Records in @choices (nullable) the activation cap a generator took from memory.limit:
 * @limit[n_devices] per device (the smallest is shown), or NULL for none. */
void ppsim_memory_cap_note(GArray *choices, const PpsimCostEstimates *costs, const gint64 *limit,
                           int n_devices);

/* @amount of memory units as text in the run's unit ("3 units", "12.50 GiB").
 * Returns: (transfer full). */
char *ppsim_memory_cap_format(const PpsimCostEstimates *costs, gint64 amount);

/* The help text of the `budget` option (see ppsim_search_budget_get). */
#define PPSIM_SEARCH_BUDGET_HELP                                                                   \
    "how many simulated ops the search's candidates may spend, the most promising first: "         \
    "auto (the full search while p*m <= 4096, else about half a second's worth; a cut is "         \
    "reported with the distance to a makespan lower bound), unlimited (or 0: the full search), "   \
    "or a number"

/* The `budget` option of a searching generator (string, default "auto"): how many ops its
 * candidate simulations may spend. "auto" gives @auto_value (and sets *@is_auto), "unlimited"
 * or 0 gives 0 (the full search), else a whole number. Errors name @what. (search-budget.c) */
gboolean ppsim_search_budget_get(const PpsimOptions *opts, const char *what, gint64 auto_value,
                                 gint64 *budget, gboolean *is_auto, GError **error);

/* A lower bound on the makespan of any schedule of @m microbatches on @costs with stages
 * placed by @stage_device: the largest of each device's total compute plus the earliest
 * start of its first op (the forward fill ahead of it), and one microbatch's chain of
 * forwards, backwards and stage 0's W. (search-budget.c) */
PpsimTime ppsim_makespan_lower_bound(const PpsimCostEstimates *costs, const int *stage_device,
                                     int n_stages, int n_devices, int m);

/* Records in @choices (nullable) that the budget (@is_auto: the default) cut a search: the
 * budget, how many of the @n_total candidates ran, and how far the estimated @makespan is
 * from @lower_bound. */
void ppsim_search_budget_note(GArray *choices, gint64 budget, gboolean is_auto, int n_run,
                              int n_total, PpsimTime makespan, PpsimTime lower_bound);

/* Validates @values (PpsimOptionValue array from the scenario, nullable) against @klass's
 * table; errors name the option's "file:line:col" via @display_name and carry a did-you-mean.
 * Returns: (transfer full) (nullable). */
PpsimOptions *ppsim_options_new(const PpsimScheduleClass *klass, const GArray *values,
                                const char *display_name, GError **error);
void ppsim_options_free(PpsimOptions *opts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimOptions, ppsim_options_free)

G_END_DECLS
