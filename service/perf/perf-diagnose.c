/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-diagnose.c: see perf-diagnose.h. */
#include "perf-diagnose.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static bool cap_in(const struct __user_cap_data_struct data[2], int cap) {
        return data[cap / 32].effective & (UINT32_C(1) << (cap % 32));
}

void perf_open_environment_read(PerfOpenEnvironment *ret) {
        *ret = (PerfOpenEnvironment) { .seccomp = -1 };
        _cleanup_(fclosep) FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        if (f && fscanf(f, "%d", &ret->paranoid) == 1)
                ret->paranoid_known = true;
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct data[2] = {};
        if (syscall(SYS_capget, &header, data) == 0) {
                ret->caps_known = true;
                ret->cap_perfmon = cap_in(data, CAP_PERFMON);
                ret->cap_sys_admin = cap_in(data, CAP_SYS_ADMIN);
        }
        _cleanup_(fclosep) FILE *status = fopen("/proc/self/status", "re");
        char line[256];
        while (status && fgets(line, sizeof(line), status))
                if (sscanf(line, "Seccomp: %d", &ret->seccomp) == 1)
                        break;
}

/* The permission refusals: which of the kernel's checks said no. */
static void explain_refusal(const PerfOpenEnvironment *env, char *buf, size_t n) {
        const char *who = env->holder ? env->holder : "periscoped";
        char paranoid[48] = "kernel.perf_event_paranoid (unreadable)";
        if (env->paranoid_known)
                snprintf(paranoid, sizeof(paranoid), "kernel.perf_event_paranoid=%d", env->paranoid);
        if (env->paranoid_known && env->paranoid > 2 && !(env->caps_known && env->cap_sys_admin)) {
                snprintf(buf, n,
                         "at %s (above 2: a Debian kernel patch) the kernel allows perf_event_open only to a "
                         "process with CAP_SYS_ADMIN, which %s %s%s; whether to allow it with CAP_PERFMON "
                         "(`sysctl kernel.perf_event_paranoid=2`) is the administrator's choice",
                         paranoid, who, env->caps_known ? "does not have" : "may not have",
                         env->holder ? " (is CAP_SYS_ADMIN in the unit's CapabilityBoundingSet=? restart "
                                       "periscoped after adding it)"
                                     : " (run it as root: its perf opener keeps CAP_SYS_ADMIN)");
                return;
        }
        if (env->caps_known && !env->cap_perfmon && !env->cap_sys_admin) {
                snprintf(buf, n,
                         "%s has no CAP_PERFMON in its effective capabilities (nor CAP_SYS_ADMIN, which "
                         "kernels before 5.8 want), so at %s it may open events on its own processes only; "
                         "run it as root with CAP_PERFMON kept (its unit's CapabilityBoundingSet= keeps it)",
                         who, paranoid);
                return;
        }
        char caps[96] = "whatever its capabilities";
        if (env->caps_known)
                snprintf(caps, sizeof(caps), "%s has %s", who, env->cap_sys_admin ? "CAP_SYS_ADMIN" : "CAP_PERFMON");
        if (env->seccomp == 2) {
                snprintf(buf, n,
                         "%s and %s allows it, so a seccomp filter on periscoped (Seccomp: 2 in "
                         "/proc/self/status: a unit's SystemCallFilter=, a container runtime's profile) or a "
                         "security module (SELinux, AppArmor, lockdown) refused the call",
                         caps, paranoid);
                return;
        }
        snprintf(buf, n, "%s and %s allows it, so a security module (SELinux, AppArmor, lockdown) refused the call",
                 caps, paranoid);
}

const char *perf_explain_open_error_env(int err, const PerfOpenEnvironment *env, char *buf, size_t n) {
        if (n == 0)
                return buf;
        err = err < 0 ? -err : err;
        char cause[512];
        switch (err) {
        case EACCES:
        case EPERM:
                explain_refusal(env, cause, sizeof(cause));
                break;
        case EMFILE:
        case ENFILE:
                snprintf(cause, sizeof(cause), "one event per CPU and thread; record fewer threads");
                break;
        case ESRCH:
                snprintf(cause, sizeof(cause), "the process exited");
                break;
        case ENOENT:
        case ENODEV:
        case EOPNOTSUPP:
                snprintf(cause, sizeof(cause), "this kernel or machine does not support the event");
                break;
        case EINVAL:
        case E2BIG:
                snprintf(cause, sizeof(cause),
                         "the kernel refused the event's attributes (a frequency above "
                         "kernel.perf_event_max_sample_rate, or a kernel too old for them)");
                break;
        case ENOSYS:
                snprintf(cause, sizeof(cause),
                         "the kernel has no perf events (CONFIG_PERF_EVENTS), or a seccomp "
                         "filter hides perf_event_open");
                break;
        default:
                snprintf(buf, n, "%s", strerror(err));
                return buf;
        }
        snprintf(buf, n, "%s: %s", strerror(err), cause);
        return buf;
}

const char *perf_explain_open_error(int err, char *buf, size_t n) {
        PerfOpenEnvironment env;
        perf_open_environment_read(&env);
        return perf_explain_open_error_env(err, &env, buf, n);
}
