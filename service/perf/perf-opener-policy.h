/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-opener-policy.h: what the perf opener (perf-opener.h) agrees to
 * open: the union of the events periscoped asks for, a recording's
 * (perf-events.c: cpu-clock sampling, per task with inherit or per CPU) and
 * the sysprofd drop-in's (service/sysprof3/perf-open-options.c: software
 * and generic hardware sampling events, already narrowed for the caller).
 * Not a policy on who may profile what, which the daemon decides: a limit
 * on what a daemon gone wrong could ask of the process that may hold
 * CAP_SYS_ADMIN. A pure function over the request, unit-tested alone. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "perf-opener.h"

/* Smallest sampling period, largest wakeup count and user stack copy
 * served (the drop-in's own limits, perf-open-options.h, are the same). */
#define PERF_OPENER_MIN_PERIOD 10000u
#define PERF_OPENER_MAX_WAKEUP_EVENTS 100000u
#define PERF_OPENER_MAX_STACK_USER 65528u

/* Checks q, from a process other than self (the opener's pid: it never
 * samples itself). 0 when served; -EBADRQC with the reason in ret_why
 * otherwise: another attr size, an event type or config
 * periscoped never opens (breakpoints, tracepoints, raw, cache and PMU
 * events...), sample fields beyond addresses, registers and the user
 * stack, any attr bit or field periscoped never sets (sigtrap,
 * enable_on_exec, pinned, precise_ip, branch stacks, aux...), a group fd,
 * flags but PERF_FLAG_FD_CLOEXEC, pid 0 or self. */
int perf_opener_check(const PerfOpenerRequest *q, pid_t self, char **ret_why);
