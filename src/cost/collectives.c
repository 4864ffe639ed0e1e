/* collectives.c: NCCL-style collectives; see collectives.h.
 *
 * Ring all-reduce = reduce-scatter + all-gather, n-1 steps each; NCCL's double binary tree
 * reaches every rank in about log2 n steps up and as many down at the
 * same bus bandwidth for large messages, so it wins on latency alone; NCCL's tuner picks
 * the faster per size, as min() does here.
 */
#include "cost/collectives.h"

#include <math.h>

static double
bw_term(const PpsimCommLink *link, double bytes)
{
    return link->bus_bytes_per_s > 0 ? bytes / link->bus_bytes_per_s : 0.0;
}

double
ppsim_coll_allreduce_s(const PpsimCommLink *link, double bytes, int n)
{
    if (n <= 1 || bytes <= 0)
        return 0.0;
    double data = bw_term(link, 2.0 * (n - 1) / n * bytes);
    double ring = 2.0 * (n - 1) * link->alpha_s + data;
    double tree = 2.0 * ceil(log2((double)n)) * link->alpha_s + data;
    return MIN(ring, tree);
}

double
ppsim_coll_allgather_s(const PpsimCommLink *link, double bytes, int n)
{
    if (n <= 1 || bytes <= 0)
        return 0.0;
    return (n - 1) * link->alpha_s + bw_term(link, (double)(n - 1) / n * bytes);
}

double
ppsim_coll_reduce_scatter_s(const PpsimCommLink *link, double bytes, int n)
{
    return ppsim_coll_allgather_s(link, bytes, n);
}

double
ppsim_coll_alltoall_s(const PpsimCommLink *link, double bytes, int n)
{
    return ppsim_coll_allgather_s(link, bytes, n);
}

double
ppsim_coll_allreduce_hier_s(const PpsimCommLink *intra, const PpsimCommLink *inter, double bytes,
                            int n, int local)
{
    if (n <= 1 || bytes <= 0)
        return 0.0;
    if (local >= n)
        return ppsim_coll_allreduce_s(intra, bytes, n);
    if (local <= 1)
        return ppsim_coll_allreduce_s(inter, bytes, n);
    return ppsim_coll_reduce_scatter_s(intra, bytes, local) +
           ppsim_coll_allreduce_s(inter, bytes / local, n / local) +
           ppsim_coll_allgather_s(intra, bytes, local);
}
