/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-ownership.h: whether a process belongs to a non-root caller, so
 * that the caller may profile it without polkit. It does when its uids are
 * the caller's, or when it lives in a user namespace whose top ancestor below
 * the initial one is owned by the caller (a rootless container: its processes
 * run under the caller's uid or sub-uids). In both cases the kernel already
 * gives the caller ptrace rights over it (same uid, or CAP_SYS_PTRACE in a
 * namespace it owns), so profiling grants nothing new. A process that is not
 * dumpable (setuid/setgid exec, prctl) is never the caller's. Ownership is
 * decided from the kernel's namespace ioctls, never from /etc/subuid. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef enum ProcessOwnership {
        PROCESS_OWNED,               /* every uid is the caller's, and dumpable */
        PROCESS_OWNED_VIA_USERNS,    /* in a user namespace the caller owns, and dumpable */
        PROCESS_NOT_DUMPABLE,        /* would be the caller's, but is not dumpable */
        PROCESS_FOREIGN,             /* another user's (or root's) */
        PROCESS_GONE,                /* no such process (any more) */
        PROCESS_UNVERIFIED,          /* its credentials could not be read, or changed while read */
} ProcessOwnership;

/* What the kernel says about one process, read at one moment. */
typedef struct ProcessCreds {
        uid_t ruid, euid, suid, fsuid;  /* "Uid:" of /proc/PID/status */
        uid_t dump_owner;               /* owner of the /proc/PID entries: the euid when dumpable, else the
                                         * root of the namespace it exec'd in (or 0) */
        bool in_child_userns;           /* its user namespace is below the initial one */
        uid_t userns_owner;             /* owner of its namespace's ancestor just below the
                                         * initial one (valid when in_child_userns) */
} ProcessCreds;

/* The decision from creds alone, for caller uid (pure; unit-tested). */
ProcessOwnership process_ownership_decide(uid_t caller, const ProcessCreds *creds);

/* Reads pid's creds, every file through one /proc/PID directory fd so that
 * all of them describe the same process even if pid is reused meanwhile.
 * Returns 0, -ESRCH when the process is gone, or another negative errno. */
int process_creds_read(pid_t pid, ProcessCreds *ret);

/* The owner of the user namespace ns_fd (an fd of /proc/PID/ns/user) at the
 * top of its chain below the initial namespace (whose identity is
 * initial_dev/initial_ino). *ret_in_child is false when ns_fd is the initial
 * namespace itself. Returns 0 or a negative errno. */
int userns_top_owner(int ns_fd, dev_t initial_dev, ino_t initial_ino, bool *ret_in_child, uid_t *ret_owner);

/* Reads and decides: the ownership of pid for caller uid (root: always
 * PROCESS_OWNED while the process exists). */
ProcessOwnership process_ownership(uid_t caller, pid_t pid, ProcessCreds *ret_creds);

/* Whether uid may record process pid without polkit: its uids are uid's,
 * or it runs in a user namespace uid owns (a rootless container, sub-uids
 * included), and it is dumpable. */
bool process_owned_by(pid_t pid, uid_t uid);

/* The check again, after an fd was opened on pid for a caller that is not
 * root: a perf event, a /proc file (`what` names it for the log). The
 * kernel opens both under the target's exec lock (exec_update_lock, held
 * by an exec from its new mm to its new credentials), so a check made once
 * the fd exists sees every exec the open did not: with the opener's
 * CAP_PERFMON and the daemon's CAP_SYS_PTRACE the kernel's own ptrace check
 * passes for any process, and a set-id program exec'd after the first
 * check would otherwise be the caller's to watch. Returns 0 when pid is
 * still caller's (process_owned_by()), -ESRCH when it is gone, -EPERM when
 * it is not caller's (any more), logged here once; the caller then closes
 * (or revokes) what it opened. */
int process_recheck_after_open(uid_t caller, pid_t pid, const char *what);

/* A short explanation for messages ("runs as uid 1001"...). */
const char *process_ownership_to_string(ProcessOwnership o);
