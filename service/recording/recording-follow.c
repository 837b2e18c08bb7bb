/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-follow.c: the part that opens a recording's later events:
 * processes joining its container (option `container`, found by rescans
 * every 200 ms) and processes sampled again after an exec made the kernel
 * remove their events. They open on the attach fiber, one at a time: each
 * wait for the perf opener goes back to the event loop. */
#include "recording-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "fiber.h"

#define RECORDING_FOLLOW_TICKS 2 /* container membership rescan every 200 ms */

typedef struct Follow {
        Recording *rec;
        ContainerFollow *follow;    /* `container`: processes joining it are added on the tick */
        struct Fiber *attach_fiber; /* opens the later events (joins, re-attaches), awaiting the opener */
        bool attach_scan;           /* a container rescan waits for it */
        pid_t *attach_execs;        /* processes to sample again after an exec, waiting for it */
        size_t n_attach_execs, allocated_attach_execs;
} Follow;

/* The process of an exec that removed its events: callers that may
 * record any process (root, polkit) get it sampled again with its new
 * image's frames; others do not, as the kernel meant (the program may not
 * be profiled with their rights). */
static int follow_exec_lost_events(Recording *rec, pid_t pid) {
        if (rec->check_owner) {
                log_recording(LOG_INFO, rec->id,
                              "process %d exec'd a program that uid %u may not profile "
                              "(set-id, file capabilities or not readable): the kernel stopped sampling it",
                              (int) pid, (unsigned) rec->owner_uid);
                return 0;
        }
        int r = recording_add_process_tasks(rec, pid, NULL);
        if (r == -ESRCH)
                return 0; /* gone meanwhile: its pidfd-held check saw it end */
        if (r == -ECANCELED) {
                log_recording(LOG_INFO, rec->id,
                              "process %d exec'd a program with other privileges; sampling ended before its "
                              "events were open again",
                              (int) pid);
                return 0;
        }
        if (r == -EDQUOT) {
                recording_not_followed(rec, pid, "process (exec'd a program with other privileges)");
                return 0;
        }
        if (r < 0) {
                char why[640];
                log_recording(LOG_WARNING, rec->id,
                              "process %d exec'd a program with other privileges and the kernel "
                              "stopped sampling it; sampling it again failed: perf_event_open: %s",
                              (int) pid, perf_open_error_hint(rec->perf_opener, r, why, sizeof(why)));
                return 0;
        }
        int64_t now = now_monotonic_ns();
        r = process_frames_write(rec->writer, rec->maps, rec->pinned, now, pid, PROCESS_FRAMES_ANY_OWNER, NULL);
        if (r >= 0)
                r = process_frames_write_threads(rec->writer, rec->thread_names, now, pid);
        if (r < 0 && r != -ESRCH)
                return r;
        log_recording(LOG_INFO, rec->id,
                      "process %d exec'd a program with other privileges (the kernel stopped "
                      "sampling it): sampled again",
                      (int) pid);
        if (recording_watch_rings(rec) < 0)
                log_recording(LOG_INFO, rec->id, "cannot poll the ring of process %d; the tick drains it", (int) pid);
        return 0;
}

/* Records a process that entered the container/app during the recording:
 * events on its threads (inherit follows its children), then its PROCESS,
 * MAP, mountinfo and container frames, as the start snapshot writes them. */
static int follow_join_process(pid_t pid, void *userdata) {
        Recording *rec = userdata;
        int64_t time = now_monotonic_ns();
        /* Like a `pids` entry: root and polkit-authorized callers may record
         * any process, others their own (checked with the process held). */
        bool not_owner;
        int r = recording_add_process_tasks(rec, pid, &not_owner);
        if (r == -ESRCH)
                return r;
        if (not_owner) {
                log_recording(LOG_INFO, rec->id,
                              "process %d joined container '%s' but is not uid %u's; "
                              "not recorded",
                              (int) pid, rec->options.container, (unsigned) rec->owner_uid);
                return r;
        }
        if (r == -EDQUOT) {
                recording_not_followed(rec, pid, "process (joined the container)");
                return r;
        }
        if (r == -ECANCELED)
                return r; /* sampling ended while its events waited for the opener */
        if (r < 0) {
                char why[640];
                log_recording(LOG_WARNING, rec->id,
                              "cannot record process %d that joined container '%s': "
                              "perf_event_open: %s",
                              (int) pid, rec->options.container,
                              perf_open_error_hint(rec->perf_opener, r, why, sizeof(why)));
                return r;
        }
        r = process_frames_write(rec->writer, rec->maps, rec->pinned, time, pid, recording_frames_owner(rec), NULL);
        if (r >= 0)
                r = process_frames_write_threads(rec->writer, rec->thread_names, time, pid);
        if (r < 0 && r != -ESRCH) {
                /* The capture itself failed: the recording ends with it. */
                recording_fail(rec, r, "writing the capture failed: %m");
                return r;
        }
        /* Gone during the snapshot: its events still hold what it did. */
        _cleanup_free_ char *cmdline = process_read_cmdline(pid, NULL);
        log_recording(LOG_INFO, rec->id, "process %d (%.80s) joined container '%s'", (int) pid, cmdline ? cmdline : "?",
                      rec->options.container);
        return 0;
}

/* Rescans /proc for processes that joined the container; tells once when
 * it has no process left (the recording goes on until Stop/duration). */
static void follow_scan(Follow *fo) {
        Recording *rec = fo->rec;
        if (rec->error)
                return;
        bool was_stopped = container_follow_get_stats(fo->follow).stopped;
        int r = container_follow_scan(fo->follow, rec->resolver, follow_join_process, rec);
        if (r < 0) {
                if (!rec->error)
                        log_recording_errno(LOG_INFO, rec->id, r, "scanning for processes of container '%s' failed: %m",
                                            rec->options.container);
                return;
        }
        ContainerFollowStats st = container_follow_get_stats(fo->follow);
        if (st.stopped && !was_stopped && !(rec->options.container_waiting && st.joined == 0))
                log_recording(LOG_INFO, rec->id,
                              "container '%s' has no process left; recording goes on "
                              "until Stop or the duration (processes that join it are added)",
                              rec->options.container);
        else if (!st.stopped && was_stopped)
                log_recording(LOG_INFO, rec->id, "container '%s' has processes (again)", rec->options.container);
        if (r > 0 && recording_watch_rings(rec) < 0)
                log_recording(LOG_INFO, rec->id, "cannot poll the rings of joined processes; the tick drains them");
        if (r > 0)
                recording_publish(rec); /* Processes changed */
        /* the joined processes' /.flatpak-info: the describe part, at the next drain */
}

/* Only this fiber opens rec->perf's events once the recording started,
 * so their wait hook is its own while it runs. */
static int attach_on_fiber(Fiber *f, void *userdata) {
        Follow *fo = userdata;
        Recording *rec = fo->rec;
        perf_events_set_wait(rec->perf, fiber_wait_readable, f);
        while (fiber_yield(f) >= 0 && !rec->error && rec->state == RECORDING_STATE_RECORDING) {
                if (fo->n_attach_execs > 0) {
                        pid_t pid = fo->attach_execs[0];
                        memmove(fo->attach_execs, fo->attach_execs + 1, --fo->n_attach_execs * sizeof(pid_t));
                        int r = follow_exec_lost_events(rec, pid);
                        if (r < 0 && !rec->error)
                                recording_fail(rec, r, "writing the capture failed: %m");
                } else if (fo->attach_scan) {
                        fo->attach_scan = false;
                        follow_scan(fo);
                } else
                        break;
        }
        if (rec->perf)
                perf_events_set_wait(rec->perf, NULL, NULL);
        return 0;
}

static void attach_later(Follow *fo);

static void attach_done(int result, void *userdata) {
        Follow *fo = userdata;
        fo->attach_fiber = NULL;
        attach_later(fo); /* queued as it ended */
}

static void attach_later(Follow *fo) {
        Recording *rec = fo->rec;
        if (fo->attach_fiber || rec->error || rec->state != RECORDING_STATE_RECORDING || !rec->perf ||
            (fo->n_attach_execs == 0 && !fo->attach_scan))
                return;
        int r = fiber_start(rec->event, "opening a recording's later perf events", attach_on_fiber, attach_done, fo,
                            &fo->attach_fiber);
        if (r < 0)
                recording_fail(rec, r, "cannot open the events of joining processes: %m");
}

/* Not for --system (per-CPU events are not removed at an exec, and see
 * every process). */
static int follow_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        Follow *fo = part;
        fo->rec = rec;
        if (!rec->options.container)
                return !rec->options.system;
        int r = container_follow_new(rec->options.container, &fo->follow);
        if (r < 0)
                return r;
        /* A caller recording on its own rights: its own containers and apps
         * only, as the start picked them (others' would be refused anyway). */
        if (rec->check_owner)
                container_follow_set_owner(fo->follow, rec->owner_uid);
        /* the targets found now have their events already */
        for (size_t i = 0; i <= rec->options.n_pids; i++) {
                pid_t pid = i < rec->options.n_pids ? rec->options.pids[i] : rec->options.command_pid;
                if (pid > 0 && (r = container_follow_note_recorded(fo->follow, pid)) < 0) {
                        container_follow_free(TAKE_PTR(fo->follow));
                        return r;
                }
        }
        return 1;
}

static int follow_begin(void *part, Recording *rec, const char **ret_name, char **ret_why) {
        if (rec->options.container_waiting)
                log_recording(LOG_INFO, rec->id,
                              "container '%s' does not run now; its processes are added when it starts",
                              rec->options.container);
        return 0;
}

/* A new process has inherited events: the rescan must not add it again. */
static int follow_task(void *part, Recording *rec, const PerfTask *t, bool fork) {
        Follow *fo = part;
        if (fork && t->pid != t->ppid && fo->follow)
                return container_follow_note_recorded(fo->follow, (pid_t) t->pid);
        return 0;
}

/* Sampled again on the attach fiber: its events wait for the perf opener
 * off the loop's stack. */
static int follow_exec_lost(void *part, Recording *rec, pid_t pid) {
        Follow *fo = part;
        if (rec->check_owner)
                return follow_exec_lost_events(rec, pid); /* nothing opened */
        if (GROW_ARRAY(fo->attach_execs, fo->allocated_attach_execs, fo->n_attach_execs + 1, 8) < 0)
                return -ENOMEM;
        fo->attach_execs[fo->n_attach_execs++] = pid;
        attach_later(fo);
        return 0;
}

/* After the drain: every FORK record of a child inherit follows is in. */
static void follow_tick(void *part, Recording *rec) {
        Follow *fo = part;
        if (fo->follow && rec->ticks % RECORDING_FOLLOW_TICKS == 0) {
                fo->attach_scan = true;
                attach_later(fo);
        }
}

/* At the end of sampling: what waits for the opener gives up (its
 * processes are not sampled again, nor joined). */
static void follow_stop(void *part, Recording *rec) {
        Follow *fo = part;
        if (fo->attach_fiber)
                fiber_cancel(fo->attach_fiber);
        fo->n_attach_execs = 0;
        fo->attach_scan = false;
}

/* `container`: processes that joined it during the recording; whether any
 * was left at the last rescan (a stopped container). */
static void follow_write_stats(void *part, Recording *rec, CaptureStatsBuffer *out) {
        Follow *fo = part;
        if (!fo->follow)
                return;
        ContainerFollowStats st = container_follow_get_stats(fo->follow);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_CONTAINER_JOINED, st.joined);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_CONTAINER_REFUSED, st.refused);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_CONTAINER_FAILED, st.failed);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_CONTAINER_PROCESSES_LEFT, st.members);
        (void) capture_stats_add_bool(out, CAPTURE_STAT_CONTAINER_STOPPED, st.stopped);
}

static void follow_get_stats(const void *part, const Recording *rec, RecordingStats *ret) {
        const Follow *fo = part;
        if (!fo->follow)
                return;
        ContainerFollowStats st = container_follow_get_stats(fo->follow);
        ret->follows_container = true;
        ret->joined_processes = st.joined;
        ret->container_stopped = st.stopped;
}

static void follow_free(void *part, Recording *rec) {
        Follow *fo = part;
        follow_stop(fo, rec);
        free(fo->attach_execs);
        container_follow_free(fo->follow);
}

const RecordingPartVTable recording_part_follow = {
        .name = "follow",
        .size = sizeof(Follow),
        .start = follow_start,
        .begin = follow_begin,
        .task = follow_task,
        .exec_lost = follow_exec_lost,
        .tick = follow_tick,
        .stop = follow_stop,
        .write_stats = follow_write_stats,
        .get_stats = follow_get_stats,
        .free = follow_free,
};
