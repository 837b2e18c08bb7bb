/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-ownership.c: whether a process belongs to a caller (see
 * process-ownership.h). */
#include "process-ownership.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "basic.h"

/* The kernel nests user namespaces at most 32 deep. */
#define USERNS_MAX_DEPTH 33
#define PROC_STATUS_MAX (64u * 1024u)

ProcessOwnership process_ownership_decide(uid_t caller, const ProcessCreds *c) {
        if (c->ruid == caller && c->euid == caller && c->suid == caller && c->fsuid == caller)
                /* /proc/PID of a process that is not dumpable is owned by the
                 * root of its namespace (0 on the host), not by its euid. */
                return c->dump_owner == caller ? PROCESS_OWNED : PROCESS_NOT_DUMPABLE;
        if (caller == 0 || !c->in_child_userns || c->userns_owner != caller)
                return PROCESS_FOREIGN;
        /* Host root never belongs to a user, whatever a namespace maps. */
        if (c->ruid == 0 || c->euid == 0 || c->suid == 0 || c->fsuid == 0)
                return PROCESS_FOREIGN;
        /* A sub-uid process that is not dumpable (setuid exec inside the
         * container) has /proc/PID owned by the container's root instead. */
        return c->dump_owner == c->euid ? PROCESS_OWNED_VIA_USERNS : PROCESS_NOT_DUMPABLE;
}

/* Whether the namespace fd is the initial one: the identity we were given,
 * or one whose parent we may not see (the root of our own scope). */
static int userns_is_initial(int fd, dev_t initial_dev, ino_t initial_ino, bool *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_dev == initial_dev && st.st_ino == initial_ino) {
                *ret = true;
                return 0;
        }
        int parent = ioctl(fd, NS_GET_PARENT);
        if (parent >= 0) {
                safe_close(parent);
                *ret = false;
                return 0;
        }
        if (errno != EPERM)
                return -errno;
        *ret = true;
        return 0;
}

int userns_top_owner(int ns_fd, dev_t initial_dev, ino_t initial_ino, bool *ret_in_child, uid_t *ret_owner) {
        bool initial;
        int r = userns_is_initial(ns_fd, initial_dev, initial_ino, &initial);
        if (r < 0)
                return r;
        if (initial) {
                *ret_in_child = false;
                return 0;
        }
        _cleanup_close_ int cur = fcntl(ns_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return -errno;
        for (int depth = 0;; depth++) {
                if (depth >= USERNS_MAX_DEPTH)
                        return -ELOOP;
                _cleanup_close_ int parent = ioctl(cur, NS_GET_PARENT);
                if (parent < 0)
                        return -errno;
                r = userns_is_initial(parent, initial_dev, initial_ino, &initial);
                if (r < 0)
                        return r;
                if (initial)
                        break;
                safe_close(cur);
                cur = TAKE_FD(parent);
        }
        uid_t owner;
        if (ioctl(cur, NS_GET_OWNER_UID, &owner) < 0)
                return -errno;
        *ret_in_child = true;
        *ret_owner = owner;
        return 0;
}

/* The identity of the initial user namespace: pid 1's, or ours when pid 1's
 * cannot be seen (the private, unprivileged periscoped). */
static int initial_userns(dev_t *ret_dev, ino_t *ret_ino) {
        struct stat st;
        if (stat("/proc/1/ns/user", &st) < 0 && stat("/proc/self/ns/user", &st) < 0)
                return -errno;
        *ret_dev = st.st_dev;
        *ret_ino = st.st_ino;
        return 0;
}

static int gone_or(int err) {
        return err == ENOENT || err == ESRCH ? -ESRCH : -err;
}

static int parse_status_uids(const char *status, ProcessCreds *c) {
        const char *p = strstr(status, "\nUid:");
        unsigned ruid, euid, suid, fsuid;
        if (!p || sscanf(p + 5, "%u %u %u %u", &ruid, &euid, &suid, &fsuid) != 4)
                return -EBADMSG;
        c->ruid = ruid;
        c->euid = euid;
        c->suid = suid;
        c->fsuid = fsuid;
        return 0;
}

int process_creds_read(pid_t pid, ProcessCreds *ret) {
        ProcessCreds c = {};
        char path[64];
        struct stat before, after;
        dev_t idev = 0;
        ino_t iino = 0;
        int r;

        if (pid <= 0)
                return -ESRCH;
        r = initial_userns(&idev, &iino);
        if (r < 0)
                return r;
        /* Every read below goes through this directory: if pid is reused,
         * lookups in it fail instead of reaching the new process. */
        snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        _cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return gone_or(errno);
        if (fstatat(dir, "status", &before, 0) < 0)
                return gone_or(errno);
        _cleanup_free_ char *status = NULL;
        r = read_file_bounded(dir, "status", PROC_STATUS_MAX, true, &status, NULL);
        if (r < 0)
                return gone_or(-r);
        r = parse_status_uids(status, &c);
        if (r < 0)
                return r;
        /* The namespace fd is opened once and walked with ioctls. A process
         * whose namespace cannot be opened gets only the plain-uid rule. */
        _cleanup_close_ int ns = openat(dir, "ns/user", O_RDONLY | O_CLOEXEC);
        if (ns >= 0) {
                r = userns_top_owner(ns, idev, iino, &c.in_child_userns, &c.userns_owner);
                if (r < 0)
                        c.in_child_userns = false;
        }
        /* Still the same, still alive, and no credential change while we looked. */
        if (fstatat(dir, "status", &after, 0) < 0)
                return gone_or(errno);
        if (before.st_uid != after.st_uid)
                return -EBUSY;
        c.dump_owner = after.st_uid;
        *ret = c;
        return 0;
}

ProcessOwnership process_ownership(uid_t caller, pid_t pid, ProcessCreds *ret_creds) {
        ProcessCreds c;
        int r = process_creds_read(pid, &c);
        if (r == -ESRCH)
                return PROCESS_GONE;
        if (r < 0)
                return PROCESS_UNVERIFIED;
        if (ret_creds)
                *ret_creds = c;
        return caller == 0 ? PROCESS_OWNED : process_ownership_decide(caller, &c);
}

bool process_owned_by(pid_t pid, uid_t uid) {
        ProcessOwnership o = process_ownership(uid, pid, NULL);
        return o == PROCESS_OWNED || o == PROCESS_OWNED_VIA_USERNS;
}

int process_recheck_after_open(uid_t caller, pid_t pid, const char *what) {
        ProcessOwnership o = process_ownership(caller, pid, NULL);
        if (o == PROCESS_OWNED || o == PROCESS_OWNED_VIA_USERNS)
                return 0;
        if (o == PROCESS_GONE)
                return -ESRCH;
        log_notice("%s of process %d closed: the process is no longer uid %u's (%s); "
                   "did it exec a set-id program after the first check?",
                   what, (int) pid, (unsigned) caller, process_ownership_to_string(o));
        return -EPERM;
}

const char *process_ownership_to_string(ProcessOwnership o) {
        switch (o) {
        case PROCESS_OWNED:
                return "yours";
        case PROCESS_OWNED_VIA_USERNS:
                return "yours, in a user namespace you own";
        case PROCESS_NOT_DUMPABLE:
                return "not dumpable: a setuid/setgid program, or one that protects itself";
        case PROCESS_FOREIGN:
                return "not yours";
        case PROCESS_GONE:
                return "gone";
        case PROCESS_UNVERIFIED:
                return "not verified: its credentials could not be read, or changed while being read";
        }
        return "unknown";
}
