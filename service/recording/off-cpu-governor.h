/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu-governor.h: keeps an off-CPU recording's cost bounded under a
 * storm of context switches (docs/off-cpu.md). After every drain it looks
 * at the current window (OFF_CPU_WINDOW_NS) of each kind of off-CPU event:
 * - switch records: past OFF_CPU_WINDOW_RECORDS in a window, or at any
 *   lost record, the switch records pause (intervals are not seen);
 * - switch stacks: past the recording's frequency per second (what CPU
 *   sampling costs), the stack samples pause (intervals are still timed,
 *   without a stack); they run only while the last whole window of switch
 *   records was under that rate (the kernel takes one at every switch-out:
 *   a storm would fill the rings before a drain could stop them).
 * Per CPU (system-wide) the stack samples are not paused by a storm but
 * taken at every Nth switch-out, N chosen from the last window's switch
 * records so that about the budget (frequency per second) is taken.
 * A pause lasts OFF_CPU_PAUSE_NS, then the events run a window again to
 * look. Switches are thus sampled in time, the CPU sampling going on; the
 * capture says for how long each kind was paused. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "perf.h"
#include "pump.h"

/* 50000 switch records a second, looked at in 100 ms windows. */
#define OFF_CPU_WINDOW_NS (100u * 1000u * 1000u)
#define OFF_CPU_WINDOW_RECORDS 5000u
#define OFF_CPU_PAUSE_NS (1900u * 1000u * 1000u)

/* One kind of off-CPU events and its pauses. */
typedef struct OffCpuValve {
        uint64_t window_start, window_count; /* the running window: its start, the count before it */
        bool paused;
        uint64_t paused_since; /* CLOCK_MONOTONIC ns */
        uint64_t paused_ns;    /* in all */
        uint64_t pauses;
        uint64_t peak_per_s; /* the busiest window's rate */
        uint64_t last_rate;  /* the last whole window's, per second (UINT64_MAX: none yet) */
} OffCpuValve;

typedef struct OffCpuGovernor {
        OffCpuValve records, stacks;
        uint64_t last_lost;
        bool per_cpu; /* the events are per CPU (system): the stacks' period adapts */
        uint32_t n_cpus;
        uint64_t stack_period; /* per CPU: a stack at every stack_period-th switch-out */
        uint64_t max_stack_period;
} OffCpuGovernor;

#define OFF_CPU_MAX_STACK_PERIOD 100000u

/* After a drain (now: CLOCK_MONOTONIC ns; frequency: the recording's CPU
 * samples per second). Returns 0 or a negative errno from an ioctl. */
int off_cpu_governor_check(OffCpuGovernor *g, PerfEvents *perf, SamplePump *pump, uint32_t frequency, uint64_t now);

/* When the off-CPU events start (now), the switch records running and the
 * stacks paused until a window of records shows no storm. */
void off_cpu_governor_start(OffCpuGovernor *g, bool per_cpu, uint64_t now);

/* At the end of sampling (now): a pause that runs is counted until now. */
void off_cpu_governor_end(OffCpuGovernor *g, uint64_t now);
