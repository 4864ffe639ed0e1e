/* collectives.h: NCCL-style collective times (pure functions).
 *
 * Each collective over n ranks costs alpha per algorithm step plus its bytes over the
 * ranks' bus bandwidth (nccl-tests' busbw, [NCCL-TESTS] PERFORMANCE.md: all-reduce moves
 * 2(n-1)/n of the buffer through each rank, all-gather, reduce-scatter and all-to-all
 * (n-1)/n of it). busbw is the link's line rate times what NCCL achieves of it (a preset
 * constant per transport). All-reduce takes the faster of NCCL's ring (2(n-1) latency
 * steps) and tree (2 log2 n steps) algorithms, so small messages are latency-bound.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    double bus_bytes_per_s; /* busbw one rank achieves on this transport */
    double alpha_s;         /* per algorithm step (s) */
} PpsimCommLink;

/* Seconds of an all-reduce of @bytes (the buffer each rank holds) over @n ranks. */
double ppsim_coll_allreduce_s(const PpsimCommLink *link, double bytes, int n);
/* Seconds of an all-gather whose output (= a reduce-scatter whose input) is @bytes. */
double ppsim_coll_allgather_s(const PpsimCommLink *link, double bytes, int n);
double ppsim_coll_reduce_scatter_s(const PpsimCommLink *link, double bytes, int n);
/* Seconds of an all-to-all in which each rank holds @bytes and keeps 1/n of them (expert
 * dispatch/combine): (n-1) steps, (n-1)/n x bytes over busbw. */
double ppsim_coll_alltoall_s(const PpsimCommLink *link, double bytes, int n);
/* Hierarchical all-reduce of @bytes over @n ranks, @local of them on each node: a
 * reduce-scatter among the node's ranks on @intra, an all-reduce of the 1/local shard
 * across the n/local nodes on @inter, an all-gather back on @intra. With local <= 1 it is a
 * flat all-reduce on @inter; with local >= n, one on @intra. */
double ppsim_coll_allreduce_hier_s(const PpsimCommLink *intra, const PpsimCommLink *inter,
                                   double bytes, int n, int local);

G_END_DECLS
