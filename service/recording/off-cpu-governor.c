/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu-governor.c: pauses the off-CPU events under a switch storm (see
 * off-cpu-governor.h). */
#include "off-cpu-governor.h"

#include <unistd.h>

/* One kind: count is its running total, budget its most per window, over
 * set by the caller (lost records). Returns 1 when it resumed now. */
static int valve_check(OffCpuValve *v, PerfEvents *perf, int kind, uint64_t count, uint64_t budget, bool over,
                       uint64_t now) {
        if (v->window_start == 0) {
                v->window_start = now;
                v->window_count = count;
        }
        if (v->paused) {
                /* the pause at the start (none counted yet) ends at once */
                if (v->pauses > 0 && now - v->paused_since < OFF_CPU_PAUSE_NS)
                        return 0;
                int r = perf_events_pause_switches(perf, kind, false);
                if (r < 0)
                        return r;
                v->paused = false;
                if (v->pauses > 0) /* the wait at the start is no storm's */
                        v->paused_ns += now - v->paused_since;
                v->window_start = now;
                v->window_count = count;
                v->last_rate = UINT64_MAX; /* unknown until a window passed */
                return 1;
        }
        uint64_t n = count - v->window_count, elapsed = now - v->window_start;
        uint64_t rate = n * 1000000000ull / (elapsed > OFF_CPU_WINDOW_NS ? elapsed : OFF_CPU_WINDOW_NS);
        if (rate > v->peak_per_s)
                v->peak_per_s = rate;
        if (n <= budget && !over) {
                if (elapsed >= OFF_CPU_WINDOW_NS) {
                        v->last_rate = rate;
                        v->window_start = now;
                        v->window_count = count;
                }
                return 0;
        }
        int r = perf_events_pause_switches(perf, kind, true);
        if (r < 0)
                return r;
        v->paused = true;
        v->paused_since = now;
        v->pauses++;
        return 0;
}

int off_cpu_governor_check(OffCpuGovernor *g, PerfEvents *perf, SamplePump *pump, uint32_t frequency, uint64_t now) {
        const OffCpuTracker *t = sample_pump_get_off_cpu(pump);
        SamplePumpStats st;
        if (!t || !perf)
                return 0;
        sample_pump_get_stats(pump, &st);
        bool lost = st.lost_samples != g->last_lost;
        g->last_lost = st.lost_samples;
        int r = valve_check(&g->records, perf, PERF_EVENTS_SWITCH_RECORDS, t->switch_records, OFF_CPU_WINDOW_RECORDS,
                            lost, now);
        if (r < 0)
                return r;
        /* intervals that began before now span the pause */
        if (r > 0)
                sample_pump_off_cpu_resumed(pump, now);
        /* A stack sample costs what a CPU sample does, and the kernel takes
         * one at every switch-out: more than the governor could stop in
         * time under a storm. Per task they run only while the last whole
         * window of switch records says there are fewer switch-outs (half
         * the records) than the recording's frequency; per CPU they run at
         * a period that keeps them about there. */
        uint64_t stack_budget = (uint64_t) frequency * OFF_CPU_WINDOW_NS / 1000000000ull;
        uint64_t per_s = frequency;
        bool unknown = g->records.last_rate == UINT64_MAX; /* no whole window of records yet */
        bool storm = g->records.paused || (!unknown && g->records.last_rate / 2 > per_s);
        if (g->per_cpu && !g->records.paused && !unknown) {
                uint64_t want = (g->records.last_rate / 2 + per_s - 1) / per_s;
                want = want < 1 ? 1 : want > OFF_CPU_MAX_STACK_PERIOD ? OFF_CPU_MAX_STACK_PERIOD : want;
                if (want != g->stack_period) {
                        r = perf_events_set_switch_period(perf, want);
                        if (r < 0)
                                return r;
                        g->stack_period = want;
                        if (want > g->max_stack_period)
                                g->max_stack_period = want;
                }
                storm = false;
        }
        if (storm && !g->stacks.paused) {
                r = perf_events_pause_switches(perf, PERF_EVENTS_SWITCH_STACKS, true);
                if (r < 0)
                        return r;
                g->stacks.paused = true;
                g->stacks.paused_since = now;
                g->stacks.pauses++;
                return 0;
        }
        if (storm) {
                /* a storm from the start: the pause at the start is its */
                if (g->stacks.pauses == 0)
                        g->stacks.pauses = 1;
                return 0;
        }
        if (unknown)
                return 0; /* stacks wait for a window that says there is no storm */
        r = valve_check(&g->stacks, perf, PERF_EVENTS_SWITCH_STACKS, t->switch_samples,
                        stack_budget > 0 ? stack_budget : 1, lost, now);
        return r < 0 ? r : 0;
}

static void valve_end(OffCpuValve *v, uint64_t now) {
        if (!v->paused)
                return;
        if (v->pauses > 0)
                v->paused_ns += now - v->paused_since;
        v->paused = false;
}

void off_cpu_governor_end(OffCpuGovernor *g, uint64_t now) {
        valve_end(&g->records, now);
        valve_end(&g->stacks, now);
}

void off_cpu_governor_start(OffCpuGovernor *g, bool per_cpu, uint64_t now) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        *g = (OffCpuGovernor){ .per_cpu = per_cpu, .n_cpus = n > 0 && n < 65536 ? (uint32_t) n : 1, .stack_period = 1 };
        g->records.window_start = now;
        g->records.last_rate = UINT64_MAX;
        /* resumed as soon as a window of records shows no storm */
        g->stacks.paused = true;
        g->stacks.paused_since = now;
}
