/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sandbox-launch.c: bubblewrap launcher (see sandbox-launch.h). */
#include "sandbox-launch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic.h"

/* build_tree_path next to the running program's folder in a build tree, so a
 * private periscoped started from a build finds its own helpers. */
static char *build_tree_program_path(const char *build_tree_path) {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
                return NULL;
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (!slash)
                return NULL;
        *slash = 0;
        _cleanup_free_ char *candidate = NULL;
        if (asprintf(&candidate, "%s/../%s", self, build_tree_path) < 0)
                return NULL;
        if (access(candidate, X_OK) < 0)
                return NULL;
        return realpath(candidate, NULL);
}

char *sandbox_program_path(const char *explicit_path, const char *env_var, const char *build_tree_path,
                           const char *installed) {
        const char *p = explicit_path;
        if (!p)
                p = getenv(env_var);
        if (!p) {
                char *built = build_tree_program_path(build_tree_path);
                if (built)
                        return built;
                p = installed;
        }
        return realpath(p, NULL);
}

/* No --disable-userns: it writes /proc/sys/user/max_user_namespaces,
 * read-only in containers (systemd-nspawn, Podman, Docker, toolbox); the
 * system call filter denies every new namespace, user namespaces too
 * (sandbox-seccomp.c). No /proc: nothing in a sandbox reads it, and a
 * container whose /proc/sys is a read-only bind (Podman, Docker) leaves no
 * procfs the kernel lets a user namespace mount. */
size_t sandbox_argv_head(const SandboxLaunch *l, char **argv, SandboxArgvStrings *strings) {
        /* option and argument on one line */
        /* clang-format off */
        static const char *const head[] = {
                "bwrap",
                /* every namespace but cgroup's (the unit's RestrictNamespaces=
                 * allows none: nothing here reads cgroups) and the network's,
                 * added below unless the sandbox shares it */
                "--unshare-user",
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-uts",
                "--new-session",
                "--die-with-parent",
                "--cap-drop", "ALL",
                "--clearenv",
                "--ro-bind", "/usr", "/usr",
                "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64",
                "--symlink", "usr/bin", "/bin",
                "--symlink", "usr/sbin", "/sbin",
                "--dev", "/dev",
                "--tmpfs", "/tmp",
        };
        /* clang-format on */
        size_t i = 0;
        for (; i < ELEMENTSOF(head); i++)
                argv[i] = (char *) head[i];
#ifdef PERISCOPE_SANITIZED
        /* sanitizer runtimes read their options from /proc/self/environ and
         * the process's layout from /proc/self/maps */
        argv[i++] = "--proc";
        argv[i++] = "/proc";
#endif
        if (!l->share_network)
                argv[i++] = "--unshare-net";
        snprintf(strings->seccomp_fd, sizeof strings->seccomp_fd, "%zu", 3 + l->n_fds);
        argv[i++] = "--seccomp";
        argv[i++] = strings->seccomp_fd;
        /* sanitizer builds: keep the runtime's options (leak checking cannot
         * ptrace inside the sandbox) */
        const char *ao = getenv("ASAN_OPTIONS");
        const char *uo = getenv("UBSAN_OPTIONS");
        if (ao) {
                snprintf(strings->asan_options, sizeof strings->asan_options, "%s:detect_leaks=0", ao);
                argv[i++] = "--setenv";
                argv[i++] = "ASAN_OPTIONS";
                argv[i++] = strings->asan_options;
        }
        if (uo) {
                argv[i++] = "--setenv";
                argv[i++] = "UBSAN_OPTIONS";
                argv[i++] = (char *) uo;
        }
        return i;
}

/* Runs in the vfork()ed child: fds first (stderr too, when the caller
 * reads it), then the uid, then limits, then exec bwrap. The fds are
 * moved before RLIMIT_NOFILE is lowered: a daemon holding thousands of
 * pinned files has every low number taken, and F_DUPFD past a lowered
 * limit fails with EMFILE. Only async-signal-safe calls. */
static void __attribute__((noreturn)) exec_sandbox(const SandboxLaunch *l, int seccomp_fd, char *const *argv) {
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0)
                _exit(127);
        /* move everything above the target numbers first, then onto them */
        size_t n = l->n_fds + 1, base = 3 + n;
        int moved[8];
        if (n > ELEMENTSOF(moved))
                _exit(127);
        for (size_t i = 0; i < n; i++) {
                int fd = i < l->n_fds ? l->fds[i] : seccomp_fd;
                moved[i] = fcntl(fd >= 0 ? fd : devnull, F_DUPFD, (int) base);
                if (moved[i] < 0)
                        _exit(127);
        }
        int out = fcntl(l->stdout_fd >= 0 ? l->stdout_fd : devnull, F_DUPFD, (int) base);
        if (out < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0)
                _exit(127);
        if (l->stderr_fd > 2) {
                int err = fcntl(l->stderr_fd, F_DUPFD, (int) base);
                if (err < 0 || dup2(err, 2) < 0)
                        _exit(127);
        }
        for (size_t i = 0; i < n; i++)
                if (dup2(moved[i], (int) (3 + i)) < 0)
                        _exit(127);
        /* everything else goes: the sandbox sees only 0, 1, 2 and its fds */
        if (close_range((unsigned) base, ~0U, 0) < 0)
                _exit(127);

        /* raw system calls: the vfork()ed child must not run glibc's
         * set*id broadcast to the threads of the process it shares memory with */
        if (l->uid != (uid_t) -1 &&
            (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, l->gid, l->gid, l->gid) < 0 ||
             syscall(SYS_setresuid, l->uid, l->uid, l->uid) < 0))
                _exit(SANDBOX_EXIT_NO_UID);
        /* after the uid: a change of credentials clears the parent-death
         * signal (the parent waits in vfork() until exec, so it is alive) */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(127);

        struct rlimit rl;
#ifndef PERISCOPE_SANITIZED
        /* sanitizer runtimes reserve terabytes of shadow memory: RLIMIT_AS
         * would stop them from starting, so sanitizer builds go without */
        rl = (struct rlimit) { l->memory_limit, l->memory_limit };
        if (l->memory_limit && setrlimit(RLIMIT_AS, &rl) < 0)
                _exit(127);
#endif
        rl = (struct rlimit) { l->cpu_seconds, l->cpu_seconds + 1 };
        if (setrlimit(RLIMIT_CPU, &rl) < 0)
                _exit(127);
        rl = (struct rlimit) { l->max_files, l->max_files };
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                _exit(127);
        rl = (struct rlimit) { l->max_processes, l->max_processes };
        if (l->uid != (uid_t) -1 && l->max_processes > 0 && setrlimit(RLIMIT_NPROC, &rl) < 0)
                _exit(127);
        rl = (struct rlimit) { 0, 0 };
        (void) setrlimit(RLIMIT_CORE, &rl);
        /* the daemon may run at a raised priority; the sandbox's work may not */
        (void) setpriority(PRIO_PROCESS, 0, 0);

        execv(l->bwrap_path ? l->bwrap_path : "/usr/bin/bwrap", argv);
        _exit(127);
}

/* vfork, not fork: the daemon may hold hundreds of MiB, and copying its
 * page tables for fork() stalls its event loop for tens of milliseconds
 * (more in a VM). The child makes only system calls, in exec_sandbox()'s
 * own frame, then execs or _exits. Apart so nothing of the caller's frame
 * lives across the vfork. */
static __attribute__((noinline)) pid_t vfork_sandbox(const SandboxLaunch *l, int seccomp_fd, char *const *argv) {
        pid_t pid = vfork();
        if (pid == 0)
                exec_sandbox(l, seccomp_fd, argv);
        return pid;
}

void sandbox_user(const char *name, uid_t fallback_id, uid_t *ret_uid, gid_t *ret_gid) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (geteuid() != 0) {
                *ret_uid = (uid_t) -1;
                *ret_gid = (gid_t) -1;
        } else if (getpwnam_r(name, &pw, buf, sizeof buf, &res) == 0 && res && pw.pw_uid != 0 && pw.pw_gid != 0) {
                *ret_uid = pw.pw_uid;
                *ret_gid = pw.pw_gid;
        } else {
                *ret_uid = fallback_id;
                *ret_gid = (gid_t) fallback_id;
        }
}

int sandbox_stderr_pipe(int ret[2]) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        int r = 0;
        for (size_t i = 0; i < 2; i++)
                if (p[i] <= 2) {
                        int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
                        if (moved < 0)
                                r = -errno;
                        safe_close(p[i]);
                        p[i] = moved;
                }
        if (r >= 0 && fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
                r = -errno;
        if (r < 0) {
                safe_close(p[0]);
                safe_close(p[1]);
                return r;
        }
        ret[0] = p[0];
        ret[1] = p[1];
        return 0;
}

int sandbox_spawn(const SandboxLaunch *l, char *const *argv, pid_t *ret) {
        _cleanup_close_ int seccomp_fd = sandbox_seccomp_filter_fd(l->seccomp);
        if (seccomp_fd < 0)
                return seccomp_fd;
        pid_t pid = vfork_sandbox(l, seccomp_fd, argv);
        if (pid < 0)
                return -errno;
        *ret = pid;
        return 0;
}
