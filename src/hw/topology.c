/* topology.c: links and routes of the modelled nodes; see topology.h.
 *
 * Per GPU: an NVLink port (NVSwitch is modelled as non-blocking, so two GPU ports bound an
 * intra-node transfer), a PCIe link to its switch, and a NIC. Per PCIe switch: one uplink to
 * the host shared by the gpus_per_switch GPUs behind it (DGX A100: 2, [VENG], [PO] App. D).
 * Inter-node traffic crosses the sender's PCIe link to its NIC (the NIC sits behind the same
 * switch, [GDS]), both NICs, and the receiver's PCIe link.
 */
#include "hw/topology.h"

static int
topology_add_link(PpsimTopology *topo, PpsimLinkKind kind, double bytes_per_s, char *name)
{
    PpsimLink link = {
        .kind = kind, .bytes_per_s = bytes_per_s, .shared_efficiency = 1.0, .name = name};
    g_array_append_val(topo->links, link);
    return topo->links->len - 1;
}

static void
topology_add_pair(PpsimTopology *topo, int ids[2], PpsimLinkKind kind, double bytes_per_s,
                  const char *owner, const char *what)
{
    ids[0] = topology_add_link(topo, kind, bytes_per_s, g_strdup_printf("%s.%s.out", owner, what));
    ids[1] = topology_add_link(topo, kind, bytes_per_s, g_strdup_printf("%s.%s.in", owner, what));
}

PpsimTopology *
ppsim_topology_new(const PpsimHardware *hw, int n_gpus)
{
    PpsimTopology *topo = g_new0(PpsimTopology, 1);
    topo->n_gpus = n_gpus;
    topo->gpus_per_node = MAX(hw->gpus_per_node, 1);
    topo->n_nodes = (n_gpus + topo->gpus_per_node - 1) / topo->gpus_per_node;
    topo->gpus_per_switch = MAX(hw->pcie_gpus_per_switch, 1);
    topo->links = g_array_new(FALSE, FALSE, sizeof(PpsimLink));
    topo->nvlink = g_malloc_n(n_gpus, sizeof(int[2]));
    topo->pcie = g_malloc_n(n_gpus, sizeof(int[2]));
    topo->nic = g_malloc_n(n_gpus, sizeof(int[2]));
    int n_switches = (n_gpus + topo->gpus_per_switch - 1) / topo->gpus_per_switch;
    topo->uplink = g_malloc_n(MAX(n_switches, 1), sizeof(int[2]));
    for (int g = 0; g < n_gpus; g++) {
        g_autofree char *owner = g_strdup_printf("gpu%d", g);
        topology_add_pair(topo, topo->nvlink[g], PPSIM_LINK_NVLINK, hw->nvlink_bytes_per_s, owner,
                          "nvlink");
        topology_add_pair(topo, topo->pcie[g], PPSIM_LINK_PCIE, hw->pcie_bytes_per_s, owner,
                          "pcie");
        topology_add_pair(topo, topo->nic[g], PPSIM_LINK_NIC, hw->network_bytes_per_s, owner,
                          "nic");
    }
    for (int sw = 0; sw < n_switches; sw++) {
        g_autofree char *owner = g_strdup_printf("pcie-switch%d", sw);
        topology_add_pair(topo, topo->uplink[sw], PPSIM_LINK_PCIE_UPLINK,
                          ppsim_pcie_uplink_bytes_per_s(hw), owner, "uplink");
        for (int dir = 0; dir < 2; dir++)
            g_array_index(topo->links, PpsimLink, topo->uplink[sw][dir]).shared_efficiency =
                ppsim_pcie_shared_efficiency(hw);
    }
    topo->nvlink_latency_ps = hw->nvlink_latency_ps;
    topo->pcie_latency_ps = hw->pcie_latency_ps;
    topo->network_latency_ps = hw->network_latency_ps;
    return topo;
}

void
ppsim_topology_free(PpsimTopology *topo)
{
    if (topo == NULL)
        return;
    for (guint i = 0; i < topo->links->len; i++)
        g_free(g_array_index(topo->links, PpsimLink, i).name);
    g_array_free(topo->links, TRUE);
    g_free(topo->nvlink);
    g_free(topo->pcie);
    g_free(topo->nic);
    g_free(topo->uplink);
    g_free(topo);
}

int
ppsim_topology_node_of(const PpsimTopology *topo, int gpu)
{
    return gpu / topo->gpus_per_node;
}

int
ppsim_topology_switch_of(const PpsimTopology *topo, int gpu)
{
    return ppsim_pcie_switch_index(topo->gpus_per_node, topo->gpus_per_switch, gpu);
}

int
ppsim_topology_route(const PpsimTopology *topo, int src, int dst, int links[4],
                     PpsimTime *latency_ps)
{
    int n = 0;
    *latency_ps = 0;
    if (src == dst)
        return 0;
    int first_remote = topo->n_gpus + topo->n_nodes;
    if (src >= first_remote || dst >= first_remote) { /* a peer in another DP replica */
        gboolean out = dst >= first_remote;
        int r = (out ? dst : src) - first_remote, gpu = r / 2, dir = out ? 0 : 1;
        if (r % 2 == 1) {
            links[n++] = out ? topo->pcie[gpu][0] : topo->nic[gpu][1];
            links[n++] = out ? topo->nic[gpu][0] : topo->pcie[gpu][1];
            *latency_ps = topo->network_latency_ps;
        } else {
            links[n++] = topo->nvlink[gpu][dir];
            *latency_ps = topo->nvlink_latency_ps;
        }
        return n;
    }
    gboolean src_host = src >= topo->n_gpus, dst_host = dst >= topo->n_gpus;
    g_assert(!(src_host && dst_host));
    if (src_host || dst_host) {
        int gpu = src_host ? dst : src;
        int sw = ppsim_topology_switch_of(topo, gpu);
        if (src_host) { /* H2D: down the uplink, then the GPU's PCIe link */
            links[n++] = topo->uplink[sw][1];
            links[n++] = topo->pcie[gpu][1];
        } else {
            links[n++] = topo->pcie[gpu][0];
            links[n++] = topo->uplink[sw][0];
        }
        *latency_ps = topo->pcie_latency_ps;
    } else if (ppsim_topology_node_of(topo, src) == ppsim_topology_node_of(topo, dst)) {
        links[n++] = topo->nvlink[src][0];
        links[n++] = topo->nvlink[dst][1];
        *latency_ps = topo->nvlink_latency_ps;
    } else {
        links[n++] = topo->pcie[src][0];
        links[n++] = topo->nic[src][0];
        links[n++] = topo->nic[dst][1];
        links[n++] = topo->pcie[dst][1];
        *latency_ps = topo->network_latency_ps;
    }
    return n;
}
