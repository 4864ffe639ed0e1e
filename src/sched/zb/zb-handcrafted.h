/* zb-handcrafted.h: the shared body of the handcrafted Zero Bubble schedules (internal). */
#pragma once

#include "sched/generator.h"

/* 1F1B with B/W split where rank r (0-indexed) runs @warmup_extra(r) more warm-up forwards
 * than 1F1B's p - r - 1 and keeps its W passes @w_delay(r) steps behind its B passes, then
 * drains B/W pairs and the delayed Ws ([ZB] §2.1-2.2). */
PpsimSchedule *ppsim_zb_handcrafted(int p, int m, int extra_warmup_per_rank, int w_delay_per_rank);
