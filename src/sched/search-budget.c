/* search-budget.c: the `budget` option of the searching generators (zb, zb-v, v-half,
 * v-min), a makespan lower bound to judge a cut search by, and the choice that reports it;
 * see generator.h.
 */
#include "sched/generator.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <errno.h>

gboolean
ppsim_search_budget_get(const PpsimOptions *opts, const char *what, gint64 auto_value,
                        gint64 *budget, gboolean *is_auto, GError **error)
{
    const char *text = ppsim_options_get_string(opts, "budget");
    *is_auto = text == NULL || g_strcmp0(text, "auto") == 0;
    if (*is_auto) {
        *budget = auto_value;
        return TRUE;
    }
    if (g_strcmp0(text, "unlimited") == 0) {
        *budget = 0;
        return TRUE;
    }
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(v >= 0) || v > 1e18 ||
        v != (double)(gint64)v) {
        g_autofree char *q_text = ppsim_quote(text);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "%s: option 'budget' must be auto, unlimited or a whole number of simulated "
                    "ops >= 0 (0: unlimited), got '%s'",
                    what, q_text);
        return FALSE;
    }
    *budget = (gint64)v;
    return TRUE;
}

PpsimTime
ppsim_makespan_lower_bound(const PpsimCostEstimates *c, const int *stage_device, int n_stages,
                           int n_devices, int m)
{
    /* head[d]: the earliest start of any op on device d, the F of microbatch 0 on its first
     * stage after every earlier stage's (and the hops between devices) */
    g_autofree PpsimTime *head = g_new(PpsimTime, n_devices);
    g_autofree PpsimTime *work = g_new0(PpsimTime, n_devices);
    for (int d = 0; d < n_devices; d++)
        head[d] = -1;
    PpsimTime t = 0, chain = 0;
    for (int s = 0; s < n_stages; s++) {
        const PpsimStageEstimate *st = &c->stage[s];
        int d = stage_device[s];
        if (s > 0 && stage_device[s - 1] != d)
            t += c->comm_ps;
        if (head[d] < 0)
            head[d] = t;
        t += st->f_ps;
        work[d] += (PpsimTime)m * (st->f_ps + st->b_ps + st->w_ps);
    }
    /* one microbatch's chain: every F, every B back, then stage 0's W */
    chain = t;
    for (int s = n_stages - 1; s >= 0; s--) {
        chain += c->stage[s].b_ps;
        if (s > 0 && stage_device[s - 1] != stage_device[s])
            chain += c->comm_ps;
    }
    chain += c->stage[0].w_ps;
    PpsimTime bound = chain;
    for (int d = 0; d < n_devices; d++)
        if (head[d] >= 0)
            bound = MAX(bound, head[d] + work[d]);
    return bound;
}

void
ppsim_search_budget_note(GArray *choices, gint64 budget, gboolean is_auto, int n_run, int n_total,
                         PpsimTime makespan, PpsimTime lower_bound)
{
    char value[32];
    g_snprintf(value, sizeof value, "%" G_GINT64_FORMAT, budget);
    double gap = lower_bound > 0 ? 100.0 * (double)(makespan - lower_bound) / lower_bound : 0;
    ppsim_choice_add(choices, "budget", value,
                     "%scut after %d of %d candidates%s; estimated makespan within %.1f%% of a "
                     "lower bound (the busiest device's compute after its earliest start); "
                     "budget: unlimited searches in full",
                     is_auto ? "auto, " : "", n_run, n_total,
                     n_run == n_total ? " and in the refinement" : "", gap);
}
