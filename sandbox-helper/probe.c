/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe.c: --probe: reports file, network and capability access from inside
 * the sandbox, so a test can check the launcher's confinement for real. */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"

/* What /proc/self/status would say, asked of the kernel directly: the
 * sandbox has no /proc (sanitizer builds aside). */
static void probe_credentials(FILE *out) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        if (syscall(SYS_capget, &h, d) < 0) {
                fprintf(out, "CapEff: unreadable (%s)\nCapPrm: unreadable (%s)\n", strerror(errno), strerror(errno));
        } else {
                fprintf(out, "CapEff: %016llx\n", (unsigned long long) d[1].effective << 32 | d[0].effective);
                fprintf(out, "CapPrm: %016llx\n", (unsigned long long) d[1].permitted << 32 | d[0].permitted);
        }
        int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        if (r < 0)
                fprintf(out, "NoNewPrivs: unreadable (%s)\n", strerror(errno));
        else
                fprintf(out, "NoNewPrivs: %d\n", r);
        struct rlimit rl;
        if (getrlimit(RLIMIT_NPROC, &rl) < 0)
                fprintf(out, "RLIMIT_NPROC: unreadable (%s)\n", strerror(errno));
        else if (rl.rlim_cur == RLIM_INFINITY)
                fprintf(out, "RLIMIT_NPROC: unlimited\n");
        else
                fprintf(out, "RLIMIT_NPROC: %llu\n", (unsigned long long) rl.rlim_cur);
        /* 2 in filter mode (when the filter allows the call itself) */
        r = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        if (r < 0)
                fprintf(out, "Seccomp: unreadable (%s)\n", strerror(errno));
        else
                fprintf(out, "Seccomp: %d\n", r);
}

static void probe_result(FILE *out, const char *what, long r) {
        if (r >= 0)
                fprintf(out, "syscall %s: allowed\n", what);
        else
                fprintf(out, "syscall %s: %s\n", what, strerror(errno));
}

/* Tries calls the sandbox's filter denies, each in a child so one that is
 * allowed (a broken filter) changes nothing of the probe itself. */
static void probe_syscalls(FILE *out) {
        struct perf_event_attr pe = { .type = PERF_TYPE_SOFTWARE, .size = sizeof pe, .config = PERF_COUNT_SW_CPU_CLOCK };
        struct {
                const char *what;
                int call;
        } calls[] = {
                { "unshare(CLONE_NEWUSER)", 0 }, { "clone(CLONE_NEWUSER)", 1 }, { "ptrace(PTRACE_TRACEME)", 2 },
                { "mount", 3 }, { "bpf", 4 }, { "perf_event_open", 5 }, { "keyctl", 6 },
                { "socket(AF_INET)", 7 }, { "socket(AF_NETLINK)", 8 }, { "socket(AF_UNIX)", 9 },
        };
        fflush(out);
        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                pid_t pid = fork();
                if (pid < 0) {
                        fprintf(out, "syscall %s: cannot fork (%s)\n", calls[i].what, strerror(errno));
                        continue;
                }
                if (pid == 0) {
                        long r = -1;
                        switch (calls[i].call) {
                        case 0: r = unshare(CLONE_NEWUSER); break;
                        case 1: r = syscall(SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0);
                                if (r == 0)
                                        _exit(0);
                                break;
                        case 2: r = ptrace(PTRACE_TRACEME, 0, NULL, NULL); break;
                        case 3: r = mount("none", "/tmp", "tmpfs", 0, NULL); break;
                        case 4: r = syscall(SYS_bpf, 0, NULL, 0); break;
                        case 5: r = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0); break;
                        case 6: r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0); break;
                        case 7: r = socket(AF_INET, SOCK_STREAM, 0); break;
                        case 8: r = socket(AF_NETLINK, SOCK_RAW, 0); break;
                        case 9: r = socket(AF_UNIX, SOCK_STREAM, 0); break;
                        }
                        probe_result(out, calls[i].what, r);
                        fflush(out);
                        _exit(0);
                }
                int status;
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                if (!WIFEXITED(status))
                        fprintf(out, "syscall %s: killed\n", calls[i].what);
                fflush(out);
        }
}

int helper_probe(char *const *paths, size_t n_paths, int port, FILE *out) {
        fprintf(out, "uid: %u\n", (unsigned) getuid());
        probe_credentials(out);
        probe_syscalls(out);
        for (size_t i = 0; i < n_paths; i++) {
                _cleanup_close_ int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0)
                        fprintf(out, "open %s: ok\n", paths[i]);
                else
                        fprintf(out, "open %s: %s\n", paths[i], strerror(errno));
        }
        if (port > 0) {
                _cleanup_close_ int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (s < 0)
                        fprintf(out, "connect 127.0.0.1:%d: %s\n", port, strerror(errno));
                else {
                        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
                        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                        if (connect(s, (struct sockaddr *) &sa, sizeof sa) == 0)
                                fprintf(out, "connect 127.0.0.1:%d: ok\n", port);
                        else
                                fprintf(out, "connect 127.0.0.1:%d: %s\n", port, strerror(errno));
                }
        }
        fflush(out);
        return 0;
}
