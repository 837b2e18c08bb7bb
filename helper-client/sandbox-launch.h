/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sandbox-launch.h: starts a program under bubblewrap for the daemon: the
 * helper (helper-client.c) and the debuginfod fetcher (debuginfod-fetch.c).
 * The child gets exactly the fds it is given (at 3, 4, …), resource
 * limits set after they are in place, optionally another uid, dies with
 * the daemon, and runs the system call filter of sandbox-seccomp.h. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sandbox-seccomp.h"

/* The options every sandbox starts with: new user, IPC, PID, UTS and
 * (unless share_network) network namespaces, all capabilities dropped, a
 * new session, dying with the daemon, an empty environment, /usr read-only
 * as the whole system, its own /dev and /tmp, no /proc (sanitizer builds:
 * its own). Followed by "--seccomp" and the filter's fd number, which
 * sandbox_argv_head() fills in; the filter denies new namespaces of every
 * kind, user namespaces too. */
#define SANDBOX_ARGV_HEAD_MAX 48

typedef struct SandboxLaunch {
        const char *bwrap_path;    /* NULL: /usr/bin/bwrap */
        SandboxSeccompProfile seccomp;
        bool share_network;        /* the daemon's network namespace (the debuginfod fetcher) */
        const int *fds;            /* placed at 3, 4, … in this order; -1: /dev/null */
        size_t n_fds;
        int stdout_fd;             /* -1: /dev/null */
        int stderr_fd;             /* > 2: the sandbox's stderr (a pipe the daemon reads); else the caller's own */
        uid_t uid;                 /* switch to uid/gid before exec; (uid_t) -1: stay */
        gid_t gid;
        uint64_t memory_limit;     /* RLIMIT_AS; 0: none (sanitizer builds never set it) */
        unsigned cpu_seconds;      /* RLIMIT_CPU */
        unsigned max_files;        /* RLIMIT_NOFILE */
        /* RLIMIT_NPROC, when the sandbox takes a uid of its own (uid above):
         * the kernel counts every process and thread of that uid (all
         * sandboxes of that uid together, bwrap's own included), so this
         * bounds them all. A sandbox that keeps the caller's uid keeps its
         * limit: there the count is the caller's whole session's. 0: none. */
        unsigned max_processes;
} SandboxLaunch;

/* RLIMIT_NPROC of a sandbox under its own system uid: every sandbox of
 * that uid at once (three processes each: bwrap, its pid 1, the program)
 * with room for many recordings' helpers, yet a fork bomb stops here. */
#define SANDBOX_MAX_PROCESSES 512

/* Strings the command line points into; lives as long as the argv. */
typedef struct SandboxArgvStrings {
        char seccomp_fd[16];
        char asan_options[512];
} SandboxArgvStrings;

/* Writes the common head of a bwrap command line into argv (room for
 * SANDBOX_ARGV_HEAD_MAX entries): the options above, the seccomp filter's
 * fd (the one after the launch's own, as sandbox_spawn() places it), and in
 * sanitizer builds the runtime's options. Returns how many it wrote. */
size_t sandbox_argv_head(const SandboxLaunch *l, char **argv, SandboxArgvStrings *strings);

/* The absolute path of a program to run in a sandbox: explicit when not
 * NULL, else $env_var, else build_tree_path relative to the folder above the
 * running program's (build/service/periscoped finds
 * build/sandbox-helper/periscope-helper), else installed. NULL with errno
 * set when it does not exist. */
char *sandbox_program_path(const char *explicit_path, const char *env_var, const char *build_tree_path,
                           const char *installed);

/* The uid and gid a sandbox runs as: when the caller is root, the system
 * user `name` (systemd-sysusers creates it, systemd/periscope.sysusers),
 * else fallback_id for both (an id that owns nothing: the sandbox never runs
 * as root, whose owner rights reach every root-owned file it can see);
 * (uid_t) -1 (stay) when the caller is not root, whose own uid it keeps. */
void sandbox_user(const char *name, uid_t fallback_id, uid_t *ret_uid, gid_t *ret_gid);

/* The exit status of a sandbox that could not take its uid (no CAP_SETUID
 * or CAP_SETGID). */
#define SANDBOX_EXIT_NO_UID 126

/* A pipe for a sandbox's stderr: ret[0], non-blocking, for the caller to
 * read; ret[1] for SandboxLaunch.stderr_fd. Both close-on-exec and above 2. */
int sandbox_stderr_pipe(int ret[2]);

/* Forks and execs bwrap with argv (NULL-terminated, argv[0] "bwrap"). */
int sandbox_spawn(const SandboxLaunch *l, char *const *argv, pid_t *ret);
