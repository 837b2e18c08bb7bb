/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-diagnose.h: why perf_event_open refused. The errno alone does not
 * say: EACCES/EPERM come from perf_event_paranoid (above 2 Debian's kernels
 * want CAP_SYS_ADMIN), from a missing CAP_PERFMON, or from a seccomp filter
 * or security module. The explanation names the cause and what an
 * administrator can do about it; it does not depend on how the event was
 * opened (the caller passes the errno and, for tests, the environment). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What decides whether perf_event_open is allowed, as seen by the process
 * that opens the events. */
typedef struct PerfOpenEnvironment {
        bool paranoid_known;
        int paranoid; /* /proc/sys/kernel/perf_event_paranoid */
        bool caps_known;
        bool cap_perfmon;   /* in the effective set */
        bool cap_sys_admin; /* in the effective set */
        int seccomp;        /* /proc/self/status "Seccomp:" (0 none, 1 strict, 2 filter); -1 unknown */
        const char *holder; /* who called perf_event_open: "periscoped's perf opener"; NULL: "periscoped" */
} PerfOpenEnvironment;

/* Reads the calling process's environment; what cannot be read is marked
 * unknown. */
void perf_open_environment_read(PerfOpenEnvironment *ret);

/* Writes into buf (n bytes) why perf_event_open failed with err (an errno,
 * either sign) in env: the errno's text and its cause, e.g. "Permission
 * denied: at kernel.perf_event_paranoid=3 (a Debian patch) the kernel allows
 * perf_event_open only with CAP_SYS_ADMIN, ...". Returns buf. */
const char *perf_explain_open_error_env(int err, const PerfOpenEnvironment *env, char *buf, size_t n);

/* The same for this process's environment. */
const char *perf_explain_open_error(int err, char *buf, size_t n);
