/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu-governor.c: pauses the off-CPU events under a switch storm (see
 * off-cpu-governor.h). */
#include "off-cpu-governor.h"

int off_cpu_governor_check(OffCpuGovernor *g, PerfEvents *perf, SamplePump *pump, uint64_t now) {
        const OffCpuTracker *t = sample_pump_get_off_cpu(pump);
        SamplePumpStats st;
        if (!t || !perf)
                return 0;
        sample_pump_get_stats(pump, &st);
        bool lost = st.lost_samples != g->last_lost;
        g->last_lost = st.lost_samples;
        if (g->window_start == 0) {
                g->window_start = now;
                g->window_records = t->switch_records;
        }
        if (g->paused) {
                if (now - g->paused_since < OFF_CPU_PAUSE_NS)
                        return 0;
                int r = perf_events_pause_switches(perf, false);
                if (r < 0)
                        return r;
                g->paused = false;
                g->paused_ns += now - g->paused_since;
                /* intervals that began before now span the pause */
                sample_pump_off_cpu_resumed(pump, now);
                g->window_start = now;
                g->window_records = t->switch_records;
                return 0;
        }
        uint64_t records = t->switch_records - g->window_records, elapsed = now - g->window_start;
        if (elapsed > 0) {
                uint64_t rate = records * 1000000000ull / (elapsed > OFF_CPU_WINDOW_NS ? elapsed : OFF_CPU_WINDOW_NS);
                if (rate > g->peak_records_per_s)
                        g->peak_records_per_s = rate;
        }
        if (records <= OFF_CPU_WINDOW_RECORDS && !lost) {
                if (elapsed >= OFF_CPU_WINDOW_NS) {
                        g->window_start = now;
                        g->window_records = t->switch_records;
                }
                return 0;
        }
        int r = perf_events_pause_switches(perf, true);
        if (r < 0)
                return r;
        g->paused = true;
        g->paused_since = now;
        g->pauses++;
        return 0;
}

void off_cpu_governor_end(OffCpuGovernor *g, uint64_t now) {
        if (!g->paused)
                return;
        g->paused_ns += now - g->paused_since;
        g->paused = false;
}
