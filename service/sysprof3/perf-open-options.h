/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-open-options.h: PerfEventOpen's a{sv} of perf_event_attr fields as
 * Sysprof sends them (3.46: comm, clockid, use_clockid, config, disabled,
 * exclude_idle, mmap, wakeup_events, sample_id_all, sample_period,
 * sample_type, task, type; 48 adds mmap2, build_id, sample_stack_user,
 * sample_regs_user), decoded into an attr and then narrowed to what the
 * caller may see: software or hardware sampling only, no kernel or
 * hypervisor part unless allowed, no inheritance, bounded rates and sizes.
 * Pure functions over plain data: unit-tested without D-Bus. */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Smallest sampling period accepted (nanoseconds for the clock events,
 * events for the others): 100 kHz per CPU at most. */
#define PERF_OPEN_MIN_PERIOD 10000u
#define PERF_OPEN_MAX_WAKEUP_EVENTS 100000u
#define PERF_OPEN_MAX_STACK_USER 65528u

/* One option as read from D-Bus: its key, D-Bus type ('b', 'u', 'i', 't')
 * and value. */
typedef struct PerfOpenOption {
        const char *key;
        char type;
        uint64_t value;            /* b: 0/1; u, t: as is; i: sign-extended */
} PerfOpenOption;

/* Sets the attr field `option` names. Unknown keys and wrong types are
 * refused: -EINVAL with a message in ret_why (docs/ARCHITECTURE.md). */
int perf_open_option_apply(struct perf_event_attr *attr, const PerfOpenOption *option, char **ret_why);

/* Checks the decoded attr and forces what the caller may not choose:
 * exclude_hv always, exclude_kernel and exclude_callchain_kernel unless
 * `kernel`, no inherit, CLOCK_MONOTONIC unless another clock was asked
 * for. Refuses (-EINVAL/-EPERM with ret_why) event types other than software
 * and hardware, sample fields that carry more than addresses, registers
 * and stacks, periods below PERF_OPEN_MIN_PERIOD, frequencies, oversized
 * stacks and wakeups. */
int perf_open_attr_restrict(struct perf_event_attr *attr, bool kernel, char **ret_why);

/* Checks pid, cpu and flags of the call: pid a process (> 0) or -1 with a
 * cpu for the whole system (the daemon's own pid 0 never), cpu -1 or below
 * n_cpus, flags only PERF_FLAG_FD_CLOEXEC. */
int perf_open_target_check(int32_t pid, int32_t cpu, uint64_t flags, int n_cpus, char **ret_why);
