/* cost-repeat.c: costs of a schedule whose stages repeat a pipeline's (DualPipe's reverse
 * direction runs the same layers as the forward one); see cost-model.h. */
#include "cost/cost-model.h"

void
ppsim_costs_repeat(PpsimCosts *c, int times)
{
    g_return_if_fail(times >= 1);
    int n = c->n_stages;
    c->stage = g_renew(PpsimStageCost, c->stage, (gsize)n * times);
    c->est = g_renew(PpsimStageEstimate, c->est, (gsize)n * times);
    for (int k = 1; k < times; k++)
        for (int s = 0; s < n; s++) {
            c->stage[k * n + s] = c->stage[s];
            c->est[k * n + s] = c->est[s];
        }
    c->n_stages = n * times;
    c->estimates.n_stages = c->n_stages;
    c->estimates.stage = c->est;
}
