/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-attach.c: a process's events, opened on the process that was
 * checked (see process-attach.h). */
#include "process-attach.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process-ownership.h"
#include "basic.h"

/* Threads created while /proc/PID/task is read are caught by another read;
 * inherit covers the ones they create after their own events are open. */
#define PROCESS_ATTACH_MAX_TASK_SCANS 8

/* Not reaped yet (a zombie counts): its pid is still its own. */
static bool pidfd_alive(int pidfd) {
        return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

/* Whether thread id tid now belongs to another process than pid. A tid
 * that is simply gone is not: the thread ended (its events died with it),
 * or it exec'd and became pid's leader under pid's id (its events are the
 * ones that go on sampling the new program). */
static bool task_moved(pid_t pid, pid_t tid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        if (!f)
                return false;
        char line[128];
        while (fgets(line, sizeof(line), f)) {
                int tgid;
                if (sscanf(line, "Tgid: %d", &tgid) == 1)
                        return tgid != (int) pid;
        }
        return false;
}

static void revoke_all(PerfEvents *events, const pid_t *tids, size_t n) {
        for (size_t i = 0; i < n; i++)
                (void) perf_events_revoke_task(events, tids[i]);
}

static int start_all(PerfEvents *events, const pid_t *tids, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = perf_events_start_task(events, tids[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int process_attach_events(PerfEvents *events, pid_t pid, bool check_owner, uid_t owner, bool *ret_not_owner) {
        char path[64];
        if (ret_not_owner)
                *ret_not_owner = false;
        if (pid <= 0)
                return -ESRCH;
        long fd = syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
                return errno == ESRCH ? -ESRCH : -errno;
        _cleanup_close_ int pidfd = (int) fd;
        snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        _cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        if (check_owner && !process_owned_by(pid, owner)) {
                if (!pidfd_alive(pidfd))
                        return -ESRCH;
                if (ret_not_owner)
                        *ret_not_owner = true;
                return -EPERM;
        }
        /* Alive after the check and the open: both saw the pidfd's process. */
        if (!pidfd_alive(pidfd))
                return -ESRCH;

        _cleanup_free_ pid_t *seen = NULL;
        size_t n_seen = 0;
        int r = 0;
        for (int round = 0; round < PROCESS_ATTACH_MAX_TASK_SCANS && r >= 0; round++) {
                int tdfd = openat(dir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (tdfd < 0) {
                        r = errno == ENOENT ? -ESRCH : -errno;
                        break;
                }
                DIR *d = fdopendir(tdfd);
                if (!d) {
                        r = -errno;
                        safe_close(tdfd);
                        break;
                }
                bool new_task = false;
                size_t round_start = n_seen;
                struct dirent *de;
                while (r >= 0 && (de = readdir(d))) {
                        pid_t tid;
                        if (!proc_entry_pid(de->d_name, &tid))
                                continue;
                        bool known = false;
                        for (size_t i = 0; i < n_seen && !known; i++)
                                known = seen[i] == tid;
                        if (known)
                                continue;
                        pid_t *s = reallocarray(seen, n_seen + 1, sizeof(pid_t));
                        if (!s) {
                                r = -ENOMEM;
                                break;
                        }
                        seen = s;
                        seen[n_seen++] = tid;
                        new_task = true;
                        r = perf_events_add_task(events, tid);
                        if (r == -ESRCH)
                                r = 0; /* the thread ended meanwhile */
                        /* The thread ended and its id went to another
                         * process between readdir and perf_event_open. */
                        else if (r >= 0 && task_moved(pid, tid))
                                r = perf_events_revoke_task(events, tid) < 0 ? -EIO : 0;
                }
                closedir(d);
                /* This scan's events exist, still stopped: checked again
                 * now, an exec of a set-id program after the first check is
                 * seen (process_recheck_after_open()); then they start. */
                if (r >= 0 && new_task && check_owner) {
                        r = process_recheck_after_open(owner, pid, "perf events");
                        if (r < 0)
                                revoke_all(events, seen, n_seen);
                        if (r == -EPERM && ret_not_owner)
                                *ret_not_owner = true;
                }
                if (r >= 0 && new_task)
                        r = start_all(events, seen + round_start, n_seen - round_start);
                if (!new_task)
                        break;
        }
        if (r >= 0 && n_seen == 0)
                r = -ESRCH;
        /* The process ended while its events were opened: the pid may have
         * gone to another process since, and the events with it. */
        if (r >= 0 && !pidfd_alive(pidfd)) {
                revoke_all(events, seen, n_seen);
                r = -ESRCH;
        }
        return r;
}
