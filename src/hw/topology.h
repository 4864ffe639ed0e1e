/* topology.h: the modelled hardware as links and endpoints (src/README.md "Semantics").
 *
 * Endpoints are GPUs and one host per node. A route between two endpoints is the list of
 * directed links it crosses: NVLink/NVSwitch inside a node, PCIe (GPU port, then the shared
 * switch uplink) to the host, and NIC-to-NIC across nodes. Links are full duplex: each
 * direction is its own link. Built once from the scenario; read-only afterwards.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_LINK_NVLINK,
    PPSIM_LINK_PCIE,        /* GPU <-> its PCIe switch */
    PPSIM_LINK_PCIE_UPLINK, /* PCIe switch <-> host root complex */
    PPSIM_LINK_NIC,         /* GPU's NIC <-> network */
} PpsimLinkKind;

typedef struct {
    PpsimLinkKind kind;
    double bytes_per_s;
    double shared_efficiency; /* capacity factor while flows of 2+ GPUs cross it (uplinks) */
    char *name;               /* "gpu3.nvlink.out", "node0.pcie-sw1.up", ... */
} PpsimLink;

typedef struct {
    int n_gpus;
    int gpus_per_node;
    int n_nodes;
    int gpus_per_switch;
    GArray *links; /* PpsimLink */
    /* link ids per GPU: [gpu][0=out,1=in] */
    int (*nvlink)[2];
    int (*pcie)[2];
    int (*nic)[2];
    int (*uplink)[2]; /* per switch */
    PpsimTime nvlink_latency_ps, pcie_latency_ps, network_latency_ps;
} PpsimTopology;

/* Endpoint ids: GPUs are 0..n_gpus-1; the host of node k is n_gpus + k. */
static inline int
ppsim_topology_host_endpoint(const PpsimTopology *topo, int node)
{
    return topo->n_gpus + node;
}

/* Endpoints standing for @gpu's peers in other data-parallel replicas, which are not
 * simulated: a flow to (from) one crosses only @gpu's own side of the route: its NVLink port
 * out (in), or with @across_nodes its PCIe link and NIC. Ids follow the hosts. */
static inline int
ppsim_topology_remote_endpoint(const PpsimTopology *topo, int gpu, gboolean across_nodes)
{
    return topo->n_gpus + topo->n_nodes + 2 * gpu + (across_nodes ? 1 : 0);
}

/* A topology for @n_gpus GPUs laid out as @hw says (gpus_per_node per node).
 * Returns: (transfer full). */
PpsimTopology *ppsim_topology_new(const PpsimHardware *hw, int n_gpus);
void ppsim_topology_free(PpsimTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimTopology, ppsim_topology_free)

/* Fills @links (at most 4 ids) with the route from endpoint @src to @dst and returns the
 * count; *@latency_ps gets the route's latency. src == dst gives 0 links. */
int ppsim_topology_route(const PpsimTopology *topo, int src, int dst, int links[4],
                         PpsimTime *latency_ps);

/* The PCIe switch of @gpu: slots within a node are grouped @gpus_per_switch at a time and a
 * switch never straddles nodes. Pure, so the cost model can tell generators which devices
 * share a host link. */
static inline int
ppsim_pcie_switch_index(int gpus_per_node, int gpus_per_switch, int gpu)
{
    gpus_per_node = MAX(gpus_per_node, 1);
    gpus_per_switch = MAX(gpus_per_switch, 1);
    int per_node = (gpus_per_node + gpus_per_switch - 1) / gpus_per_switch;
    return gpu / gpus_per_node * per_node + gpu % gpus_per_node / gpus_per_switch;
}

/* A switch uplink's bandwidth per direction (unset: the GPU link's) and its shared
 * efficiency (unset: 1), as the topology builds them; pure, for the cost model too. */
static inline double
ppsim_pcie_uplink_bytes_per_s(const PpsimHardware *hw)
{
    return hw->pcie_uplink_bytes_per_s > 0 ? hw->pcie_uplink_bytes_per_s : hw->pcie_bytes_per_s;
}

static inline double
ppsim_pcie_shared_efficiency(const PpsimHardware *hw)
{
    return hw->pcie_shared_efficiency > 0 ? hw->pcie_shared_efficiency : 1.0;
}

int ppsim_topology_node_of(const PpsimTopology *topo, int gpu);
int ppsim_topology_switch_of(const PpsimTopology *topo, int gpu);

G_END_DECLS
