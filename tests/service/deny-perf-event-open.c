/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* deny-perf-event-open: runs a program under a seccomp filter that answers
 * perf_event_open with EPERM (as systemd's SystemCallFilter= with
 * SystemCallErrorNumber=EPERM does), everything else allowed.
 * Usage: deny-perf-event-open PROGRAM ARGS... */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "deny-perf-event-open: add this architecture's AUDIT_ARCH_"
#endif

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s PROGRAM ARGS...\n", argv[0]);
                return 2;
        }
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                perror("deny-perf-event-open: seccomp");
                return 1;
        }
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        return 127;
}
