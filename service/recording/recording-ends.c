/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-ends.c: the part that ends a recording by itself: option
 * `duration-ms`, the exit of the command `periscope record` started
 * (held before its exec: its name comes with the exec), or the exit of
 * every process given in "pids" (as `perf record -p` ends). */
#include "recording-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"

typedef struct Ends {
        sd_event_source *duration_timer;
        sd_event_source *command_source;
        int command_pidfd;
        sd_event_source **target_sources; /* one per "pids" process (pidfd), when they bound the recording */
        size_t n_target_sources, n_targets_alive;
} Ends;

static int on_duration(sd_event_source *s, uint64_t usec, void *userdata) {
        recording_end(userdata, RECORDING_END_DURATION, 0, NULL);
        return 0;
}

/* Whether the command died of SIGINT: the terminal's Ctrl-C, which also
 * reached `periscope record` and stops the recording; whichever of the two
 * the service sees first, the recording was stopped. The status is read
 * from the zombie's /proc/PID/stat (exit_code, field 52) while its parent
 * has not reaped it (periscope record reaps after Finished); the pidfd
 * still signalling afterwards proves the read was of that zombie. */
static bool command_interrupted(pid_t pid, int pidfd) {
        char path[64], buf[2048];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = 0;
        /* the comm (field 2) may hold anything: fields 3… follow its last ')' */
        const char *p = strrchr(buf, ')');
        for (int field = 3; p && field <= 52; field++)
                p = strchr(p + 1, ' ');
        if (!p)
                return false;
        char *end;
        long status = strtol(p + 1, &end, 10);
        /* still the process whose status that is (EPERM: alive, another uid's: no CAP_KILL) */
        if (end == p + 1 || (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 && errno == ESRCH))
                return false;
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT;
}

static int on_command_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *rec = userdata;
        recording_end(rec,
                      command_interrupted(rec->options.command_pid, fd) ? RECORDING_END_STOPPED
                                                                        : RECORDING_END_COMMAND_EXITED,
                      0, NULL);
        return 0;
}

/* A process given in "pids" exited: when it was the last, so does the
 * recording. */
static int on_target_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *rec = userdata;
        Ends *e = recording_part_get(rec, &recording_part_ends);
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (e && e->n_targets_alive > 0 && --e->n_targets_alive == 0)
                recording_end(rec, RECORDING_END_TARGETS_EXITED, 0, NULL);
        return 0;
}

/* Watches the "pids" processes when nothing else bounds the recording's
 * targets: no command, no container (it may get new processes), not the
 * whole system. A process gone already counts as exited. */
static int ends_watch_targets(Ends *e, Recording *rec) {
        const RecordOptions *o = &rec->options;
        if (o->n_given_pids == 0 || o->command_pid > 0 || o->container || o->system)
                return 0;
        e->target_sources = calloc(o->n_given_pids, sizeof(sd_event_source *));
        if (!e->target_sources)
                return -ENOMEM;
        e->n_target_sources = o->n_given_pids;
        for (size_t i = 0; i < o->n_given_pids; i++) {
                long fd = syscall(SYS_pidfd_open, o->pids[i], 0);
                if (fd < 0) {
                        if (errno == ESRCH)
                                continue;
                        return -errno;
                }
                int r = sd_event_add_io(rec->event, &e->target_sources[i], (int) fd, EPOLLIN, on_target_exit, rec);
                if (r < 0) {
                        close((int) fd);
                        return r;
                }
                (void) sd_event_source_set_io_fd_own(e->target_sources[i], true);
                e->n_targets_alive++;
        }
        if (e->n_targets_alive == 0)
                return -ESRCH;
        return 0;
}

static int ends_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        Ends *e = part;
        e->command_pidfd = -1;
        return 1;
}

static int ends_begin(void *part, Recording *rec, const char **ret_name, char **ret_why) {
        Ends *e = part;
        int r;
        if (rec->options.duration_ms) {
                r = sd_event_add_time_relative(rec->event, &e->duration_timer, CLOCK_MONOTONIC,
                                               rec->options.duration_ms * 1000ull, 1000, on_duration, rec);
                if (r < 0)
                        return r;
        }
        if (rec->options.command_pid > 0) {
                long fd = syscall(SYS_pidfd_open, rec->options.command_pid, 0);
                if (fd < 0)
                        return -errno;
                e->command_pidfd = (int) fd;
                r = sd_event_add_io(rec->event, &e->command_source, e->command_pidfd, EPOLLIN, on_command_exit, rec);
                if (r < 0)
                        return r;
        }
        return ends_watch_targets(e, rec);
}

/* The command's exec names it. */
static int ends_comm(void *part, Recording *rec, const PerfComm *c) {
        if (c->exec && c->pid == c->tid && (pid_t) c->pid == rec->options.command_pid) {
                free(rec->command_cmdline);
                rec->command_cmdline = NULL;
        }
        return 0;
}

static void ends_stop(void *part, Recording *rec) {
        Ends *e = part;
        e->duration_timer = sd_event_source_disable_unref(e->duration_timer);
        e->command_source = sd_event_source_disable_unref(e->command_source);
        e->command_pidfd = safe_close(e->command_pidfd);
        for (size_t i = 0; i < e->n_target_sources; i++)
                e->target_sources[i] = sd_event_source_disable_unref(e->target_sources[i]);
}

/* The command never exec'd: named as it was. */
static void ends_close(void *part, Recording *rec) {
        if (rec->command_cmdline && rec->writer)
                (void) capture_writer_add_process(rec->writer, rec->start_time, -1, rec->options.command_pid,
                                                  rec->command_cmdline);
}

static void ends_free(void *part, Recording *rec) {
        Ends *e = part;
        ends_stop(e, rec);
        free(e->target_sources);
}

const RecordingPartVTable recording_part_ends = {
        .name = "ends",
        .size = sizeof(Ends),
        .start = ends_start,
        .begin = ends_begin,
        .comm = ends_comm,
        .stop = ends_stop,
        .close = ends_close,
        .free = ends_free,
};
