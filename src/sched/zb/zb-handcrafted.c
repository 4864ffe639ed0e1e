/* zb-handcrafted.c: ZB-H1 and ZB-H2 share one construction ([ZB] §2, Fig. 3): 1F1B with the
 * backward split into B (activation gradient) and W (weight gradient), where W passes are
 * held back to fill the bubbles 1F1B leaves. Rank r (0-indexed) keeps r * w_delay_per_rank Ws
 * pending, which is what [ZB] §2.3's worker memory (p-i+1)M_B + (i-1)M_W (ZB-H1) and
 * (2p-2i+1)M_B + (2i-2)M_W (ZB-H2) count (i = r + 1); ZB-H2 also runs p - r - 1 more
 * warm-up forwards so that no rank waits for its first B.
 */
#include "sched/zb/zb-handcrafted.h"

PpsimSchedule *
ppsim_zb_handcrafted(int p, int m, int extra_warmup_per_rank, int w_delay_per_rank)
{
    PpsimSchedule *s = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(s);
    for (int r = 0; r < p; r++) {
        int warmup = MIN((p - r - 1) * (1 + extra_warmup_per_rank), m);
        int delay = r * w_delay_per_rank;
        int f = 0, b = 0, w = 0;
        for (; f < warmup; f++)
            ppsim_schedule_push(s, r, PPSIM_OP_F, r, f);
        for (; f < m; f++) {
            ppsim_schedule_push(s, r, PPSIM_OP_F, r, f);
            ppsim_schedule_push(s, r, PPSIM_OP_B, r, b++);
            if (b - w > delay)
                ppsim_schedule_push(s, r, PPSIM_OP_W, r, w++);
        }
        while (b < m) {
            ppsim_schedule_push(s, r, PPSIM_OP_B, r, b++);
            if (b - w > delay)
                ppsim_schedule_push(s, r, PPSIM_OP_W, r, w++);
        }
        while (w < m)
            ppsim_schedule_push(s, r, PPSIM_OP_W, r, w++);
    }
    return s;
}
