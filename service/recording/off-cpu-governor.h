/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu-governor.h: keeps an off-CPU recording's cost bounded under a
 * storm of context switches (docs/off-cpu.md). After every drain it looks
 * at the switch records of the current window and at lost records: past
 * the budget (more than OFF_CPU_WINDOW_RECORDS in a window of
 * OFF_CPU_WINDOW_NS, or any lost record) it pauses the off-CPU events (the
 * CPU sampling goes on) for OFF_CPU_PAUSE_NS, then lets them run a window
 * again to look. Switches are thus sampled in time; the capture says for
 * how long they were paused. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "perf.h"
#include "pump.h"

/* 50000 switch records a second, looked at in 100 ms windows. */
#define OFF_CPU_WINDOW_NS (100u * 1000u * 1000u)
#define OFF_CPU_WINDOW_RECORDS 5000u
#define OFF_CPU_PAUSE_NS (900u * 1000u * 1000u)

typedef struct OffCpuGovernor {
        uint64_t window_start, window_records; /* the running window: its start, the records before it */
        uint64_t last_lost;
        bool paused;
        uint64_t paused_since;       /* CLOCK_MONOTONIC ns */
        uint64_t paused_ns;          /* in all, ended pauses */
        uint64_t pauses;
        uint64_t peak_records_per_s; /* the busiest window's rate */
} OffCpuGovernor;

/* After a drain (now: CLOCK_MONOTONIC ns). Returns 0 or a negative errno
 * from the events' ioctl. */
int off_cpu_governor_check(OffCpuGovernor *g, PerfEvents *perf, SamplePump *pump, uint64_t now);

/* At the end of sampling (now): a pause that runs is counted until now. */
void off_cpu_governor_end(OffCpuGovernor *g, uint64_t now);
