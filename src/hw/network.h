/* network.h: flows over the topology's links with max-min fair bandwidth sharing.
 *
 * An engine entity. Every start or end of a flow re-runs progressive filling over the flows
 * of the connected component(s) of links it touches (the other rates cannot change) and
 * re-arms one completion event; a stale completion is recognised by its generation number and
 * ignored (lazy cancel).
 */
#pragma once

#include <glib.h>
#include "engine/engine.h"
#include "hw/topology.h"
#include "hw/exec.h"

G_BEGIN_DECLS

typedef struct PpsimNetwork PpsimNetwork;

/* Called when a flow's last byte has left its route; the consumer sees it @latency_ps later. */
typedef void (*PpsimFlowDoneFunc)(gpointer user_data, gint64 cookie, PpsimTime latency_ps,
                                  PpsimEngine *engine);

PpsimNetwork *ppsim_network_new(const PpsimTopology *topo, PpsimEngine *engine,
                                PpsimFlowDoneFunc done, gpointer user_data);
void ppsim_network_free(PpsimNetwork *net);

/* Starts @bytes from endpoint @src to @dst now. A flow with no link to cross (same endpoint
 * or zero bytes) completes at once. */
void ppsim_network_start(PpsimNetwork *net, PpsimEngine *engine, int src, int dst, guint64 bytes,
                         gint64 cookie);

/* Records every completed flow into @records (PpsimFlowRecord; from/to left for the caller
 * to fill from the cookie) when non-NULL. */
void ppsim_network_set_records(PpsimNetwork *net, GArray *records);

G_END_DECLS
