/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-perf-diagnose.c: perf_event_open refusals name their cause
 * (service/perf/perf-diagnose.h). The decision, with forced
 * perf_event_paranoid values and capability sets (Debian's paranoid 3 needs
 * Debian's kernel); then real refusals from this kernel: a child without
 * capabilities asking for another user's process, and a child under a
 * seccomp filter that answers EPERM, each explained by the wrapper that
 * reads the process's own state. Needs root (as ./test.sh runs it). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf.h"
#include "test-check.h"

static const char *explain(int err, PerfOpenEnvironment env) {
        static char buf[1024];
        return perf_explain_open_error_env(err, &env, buf, sizeof(buf));
}

/* Whether text says part (want) or not (!want); a failure names the line. */
static void check_says(const char *text, const char *part, bool want, int line) {
        if (!text) {
                fail("line %d: no text", line);
                return;
        }
        if ((strstr(text, part) != NULL) != want)
                fail("line %d: '%s' %s '%s'", line, text, want ? "does not say" : "says", part);
}
#define CHECK_HAS(text, part) check_says((text), (part), true, __LINE__)
#define CHECK_LACKS(text, part) check_says((text), (part), false, __LINE__)

/* Debian's kernel at its default, periscoped with CAP_PERFMON under its filter. */
static const PerfOpenEnvironment debian = {
        .paranoid_known = true, .paranoid = 3, .caps_known = true, .cap_perfmon = true, .seccomp = 2
};

/* Debian's kernel at its default: CAP_PERFMON is not enough. */
TEST(paranoid_3_needs_sys_admin) {
        const char *t = explain(-EACCES, debian);
        CHECK_HAS(t, "Permission denied: ");
        CHECK_HAS(t, "kernel.perf_event_paranoid=3");
        CHECK_HAS(t, "CAP_SYS_ADMIN");
        CHECK_HAS(t, "sysctl kernel.perf_event_paranoid=2");
        CHECK_LACKS(t, "not yours");
        CHECK_LACKS(t, "seccomp");
        /* The same for EPERM, and a positive errno. */
        CHECK_HAS(explain(EPERM, debian), "kernel.perf_event_paranoid=3");
        /* With CAP_SYS_ADMIN paranoid 3 is not the cause: the filter may be. */
        PerfOpenEnvironment admin = debian;
        admin.cap_sys_admin = true;
        t = explain(-EACCES, admin);
        CHECK_LACKS(t, "perf_event_paranoid=2`");
        CHECK_HAS(t, "seccomp filter");
        CHECK_HAS(t, "CAP_SYS_ADMIN");
        /* Capabilities unknown at paranoid 4: still paranoid, hedged. */
        PerfOpenEnvironment unknown = { .paranoid_known = true, .paranoid = 4, .seccomp = -1 };
        t = explain(-EACCES, unknown);
        CHECK_HAS(t, "kernel.perf_event_paranoid=4");
        CHECK_HAS(t, "may not have");
}

/* Paranoid 2 without CAP_PERFMON (a daemon started without it). */
TEST(paranoid_2_without_perfmon) {
        const char *t;
        PerfOpenEnvironment nocap = { .paranoid_known = true, .paranoid = 2, .caps_known = true, .seccomp = 0 };
        t = explain(-EACCES, nocap);
        CHECK_HAS(t, "no CAP_PERFMON");
        CHECK_HAS(t, "kernel.perf_event_paranoid=2");
        CHECK_LACKS(t, "seccomp");
        /* CAP_SYS_ADMIN alone counts as the privilege (perfmon_capable()). */
        nocap.cap_sys_admin = true;
        CHECK_LACKS(explain(-EACCES, nocap), "no CAP_PERFMON");
}

/* Capabilities there, paranoid 2: a seccomp filter, or not. */
TEST(seccomp_or_security_module) {
        const char *t;
        PerfOpenEnvironment filtered = {
                .paranoid_known = true, .paranoid = 2, .caps_known = true, .cap_perfmon = true, .seccomp = 2
        };
        t = explain(-EPERM, filtered);
        CHECK_HAS(t, "Operation not permitted: ");
        CHECK_HAS(t, "seccomp filter");
        CHECK_HAS(t, "SystemCallFilter=");
        CHECK_LACKS(t, "sysctl");
        filtered.seccomp = 0;
        t = explain(-EPERM, filtered);
        CHECK_LACKS(t, "seccomp");
        CHECK_HAS(t, "security module");
}

TEST(paranoid_unreadable) {
        PerfOpenEnvironment blind = { .caps_known = true, .cap_perfmon = true, .seccomp = 2 };
        CHECK_HAS(explain(-EACCES, blind), "kernel.perf_event_paranoid (unreadable)");
}

/* Other errors keep their own causes. */
TEST(other_errors_own_causes) {
        CHECK_HAS(explain(-EMFILE, debian), "record fewer threads");
        CHECK_HAS(explain(-ESRCH, debian), "exited");
        CHECK_HAS(explain(-ENOENT, debian), "does not support");
        CHECK_HAS(explain(-EINVAL, debian), "perf_event_max_sample_rate");
        CHECK_HAS(explain(-ENOSYS, debian), "seccomp");
        CHECK(strcmp(explain(-ENOMEM, debian), strerror(ENOMEM)) == 0);
}

/* A short buffer is cut, NUL-terminated. */
TEST(short_buffer_cut) {
        char small[16];
        memset(small, 'x', sizeof(small));
        perf_explain_open_error_env(-EACCES, &debian, small, sizeof(small));
        CHECK(strlen(small) == sizeof(small) - 1);
}

/* This process's own state as the wrapper reads it (root: every capability,
 * as ./test.sh runs it; the paranoid value as /proc says). */
TEST(own_environment) {
        PerfOpenEnvironment env;
        perf_open_environment_read(&env);
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        int paranoid;
        CHECK(f && fscanf(f, "%d", &paranoid) == 1);
        if (f)
                fclose(f);
        CHECK(env.paranoid_known && env.paranoid == paranoid);
        CHECK(env.caps_known);
        CHECK_MSG(geteuid() != 0 || (env.cap_perfmon && env.cap_sys_admin), "root without CAP_PERFMON/CAP_SYS_ADMIN?");
        CHECK(env.seccomp >= 0);
}

static int open_cpu_clock(pid_t pid) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_CPU_CLOCK,
                .sample_period = 1000000,
                .exclude_kernel = 1,
                .disabled = 1,
        };
        long fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
                close((int) fd);
        return fd < 0 ? -errno : 0;
}

/* In a child: how perf_event_open on pid refuses, and the explanation, in
 * the pipe; "OPENED" when it did not refuse. */
static void refuse_in_child(int how, pid_t target, char *out, size_t n) {
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
                close(p[0]);
                if (how == 0 && setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0) {
                        /* no capabilities left (uid changed from 0) */
                } else if (how == 1) {
                        struct sock_filter filter[] = {
                                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                        };
                        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
                        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                                _exit(2);
                } else
                        _exit(2);
                char buf[1024];
                int r = open_cpu_clock(target);
                if (r == 0)
                        snprintf(buf, sizeof(buf), "OPENED");
                else
                        perf_explain_open_error(r, buf, sizeof(buf));
                if (write(p[1], buf, strlen(buf)) < 0)
                        _exit(3);
                _exit(0);
        }
        close(p[1]);
        ssize_t len = 0, k;
        while (len < (ssize_t) n - 1 && (k = read(p[0], out + len, n - 1 - (size_t) len)) > 0)
                len += k;
        out[len < 0 ? 0 : len] = '\0';
        close(p[0]);
        int status;
        CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* uid 65534 without capabilities, asking for pid 1 (root's): the kernel's
 * ptrace check refuses; the cause is the missing CAP_PERFMON (or Debian's
 * paranoid 3, where that comes first). */
TEST(real_refusal_without_capabilities) {
        char out[1024];
        refuse_in_child(0, 1, out, sizeof(out));
        printf("no capabilities: %s\n", out);
        CHECK_HAS(out, "Permission denied: ");
        PerfOpenEnvironment env;
        perf_open_environment_read(&env);
        CHECK_HAS(out, env.paranoid > 2 ? "CAP_SYS_ADMIN" : "no CAP_PERFMON");
        CHECK_LACKS(out, "seccomp");
}

/* root with every capability, under a filter answering EPERM. */
TEST(real_refusal_under_seccomp) {
        char out[1024];
        PerfOpenEnvironment env;
        perf_open_environment_read(&env);
        refuse_in_child(1, getpid(), out, sizeof(out));
        printf("seccomp filter: %s\n", out);
        CHECK_HAS(out, "Operation not permitted: ");
        if (env.paranoid <= 2)
                CHECK_HAS(out, "seccomp filter");
        CHECK_LACKS(out, "no CAP_PERFMON");
}

int main(int argc, char **argv) {
        if (geteuid() != 0) {
                fprintf(stderr, "FAIL: needs root (uid changes and every capability), as ./test.sh runs it\n");
                return 1;
        }
        return test_main(argc, argv);
}
