/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording.c: a recording's life from its start to its end, without D-Bus. */
#include "recording.h"

#include <assert.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <stdarg.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "fiber.h"
#include "process.h"
#include "protocol.h"
#include "recording-control.h"
#include "recording-stages.h"
#include "recording-trace.h"
#include "unwind.h"

#define RECORDING_TICK_USEC (100 * 1000)
#define RECORDING_PUBLISH_TICKS 5          /* PropertiesChanged at most every 500 ms */
#define RECORDING_FOLLOW_TICKS 2           /* container membership rescan every 200 ms */
/* An EXIT record this soon after the process's exec, with the process
 * alive, is the kernel removing its events (recording_events_removed_at_exec). */
#define EXEC_EVENTS_REMOVED_WINDOW_NS (1000 * 1000 * 1000ll)

static const char *const reason_names[] = {
        [RECORDING_END_NONE] = "none",
        [RECORDING_END_STOPPED] = "stopped",
        [RECORDING_END_DURATION] = "duration",
        [RECORDING_END_COMMAND_EXITED] = "command-exited",
        [RECORDING_END_CLIENT_VANISHED] = "client-vanished",
        [RECORDING_END_SHUTDOWN] = "shutdown",
        [RECORDING_END_ERROR] = "error",
        [RECORDING_END_TARGETS_EXITED] = "targets-exited",
};

const char *recording_end_reason_to_string(RecordingEndReason reason) {
        return (size_t) reason < ELEMENTSOF(reason_names) ? reason_names[reason] : "unknown";
}

const char *recording_state_to_string(RecordingState state) {
        switch (state) {
        case RECORDING_STATE_RECORDING:
                return "recording";
        case RECORDING_STATE_STOPPING:
                return "stopping";
        case RECORDING_STATE_FINISHING:
                return "finishing";
        case RECORDING_STATE_FINISHED:
                return "finished";
        }
        return "unknown";
}

/* Fills a start failure: its org.periscope.Error.* name and message. */
static int recording_error(RecordingError *e, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int recording_error(RecordingError *e, const char *name, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        e->name = name;
        return -EINVAL;
}

static void recording_describe_later(Recording *r);

/* A resolver whose refusals and warnings go to the daemon's log, and whose
 * users' files are parsed on the describe fiber, off the event loop. */
static int recording_resolver_new(HelperClient *user_file_helper, Resolver **ret) {
        int r = daemon_resolver_new(user_file_helper, ret);
        if (r >= 0)
                resolver_set_defer_user_files(*ret, true);
        return r;
}

/* ---- processes' /.flatpak-info and Podman stores, parsed on a fiber ---- */

static void recording_fail(Recording *r, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int describe_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        Recording *r = userdata;
        if (!r->describe_fiber) { /* never: the helper is asked on the fiber only */
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int k = poll(&p, 1, (int) timeout_ms);
                return k < 0 ? (errno == EINTR ? 0 : -errno) : k > 0;
        }
        return fiber_wait_readable(fd, timeout_ms, r->describe_fiber);
}

static void describe_yield(void *userdata) {
        Recording *r = userdata;
        if (r->describe_fiber)
                (void) fiber_yield(r->describe_fiber);
}

/* Parses pid's /.flatpak-info or Podman store on fiber, pins what only its
 * container's layers hold and writes its description frames,
 * timed now. A failed parse takes the file as rejected, unless fiber was
 * cancelled meanwhile (it waits for the post-stop stage). */
static int recording_describe(Recording *r, pid_t pid, HelperClient *helper, Fiber *fiber) {
        int k = resolver_parse_pending(r->resolver, pid, helper);
        if (k < 0 && k != -ENOENT) {
                if (k == HELPER_CLIENT_FAILED && fiber_yield(fiber) == -ECANCELED)
                        return -ECANCELED;               /* parsed again after sampling */
                resolver_drop_pending(r->resolver, pid); /* not asked again */
                k = 0; /* a Podman process is still described: its id, what was found */
        }
        if (k < 0 || !r->writer || r->error)
                return 0;
        /* described only when recorded (a rescan's look at another
         * process leaves no trace in the capture) */
        size_t n_maps = 0;
        if (!process_maps_get(r->maps, (int32_t) pid, &n_maps) || n_maps == 0)
                return 0;
        recording_repin(r->resolver, r->maps, r->pinned, pid);
        k = container_frames_write(r->writer, r->resolver, now_monotonic_ns(), pid);
        if (k < 0)
                recording_fail(r, k, "writing the capture failed: %s", strerror(-k));
        return k;
}

static int describe_on_fiber(Fiber *f, void *userdata) {
        Recording *r = userdata;
        if (!r->describe_helper) {
                HelperClientConfig c = r->helper;
                c.time_budget_ms = 0;
                c.timeout_ms = 5000; /* users' files are small: longer is hung */
                c.wait_readable = describe_wait_readable;
                c.wait_readable_userdata = r;
                c.yield = describe_yield;
                int k = helper_client_new(&c, &r->describe_helper);
                if (k < 0) {
                        r->describe_helper = NULL;
                        return k;
                }
        }
        pid_t pid;
        while (!r->error && resolver_next_pending(r->resolver, &pid) > 0) {
                int k = recording_describe(r, pid, r->describe_helper, f);
                if (k < 0)
                        return k;
                if (fiber_yield(f) == -ECANCELED)
                        return -ECANCELED;
        }
        return 0;
}

static void describe_done(int result, void *userdata) {
        Recording *r = userdata;
        r->describe_fiber = NULL;
        if (result < 0 && result != -ECANCELED)
                log_recording(LOG_INFO, r->id, "describing sandboxed processes failed: %s", strerror(-result));
        else if (result == 0)
                recording_describe_later(r); /* processes seen meanwhile */
}

/* Starts the describe fiber when a process's /.flatpak-info waits. */
static void recording_describe_later(Recording *r) {
        pid_t pid;
        if (r->describe_fiber || r->error || r->state != RECORDING_STATE_RECORDING ||
            resolver_next_pending(r->resolver, &pid) <= 0)
                return;
        int k = fiber_start(r->event, "describing sandboxed processes", describe_on_fiber, describe_done, r,
                            &r->describe_fiber);
        if (k < 0)
                log_recording(LOG_INFO, r->id, "cannot describe sandboxed processes yet: %s", strerror(-k));
}

/* At the end of sampling: the fiber ends; what still waits is the first
 * post-stop stage's (container-descriptions). */
static void recording_describe_end(Recording *r) {
        if (r->describe_fiber)
                fiber_cancel(r->describe_fiber);
        r->describe_helper = helper_client_free(r->describe_helper);
}

/* Remembers the first failure; the recording ends with it. */
static void recording_fail(Recording *r, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void recording_fail(Recording *r, int error, const char *fmt, ...) {
        if (r->error_message)
                return;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&r->error_message, fmt, ap) < 0)
                r->error_message = NULL;
        va_end(ap);
        r->error = error < 0 ? error : -EIO;
        log_recording(LOG_ERR, r->id, "%s", r->error_message ? r->error_message : "failed");
}

/* ---- from perf records to capture frames ---- */

/* Writes one built SAMPLE and notes its addresses for symbolization. */
static int recording_emit_sample(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        Recording *r = userdata;
        bool kernel_part = false;
        size_t depth = 0; /* frames since the context marker: the first is the sampled IP */
        for (size_t i = 0; i < n; i++) {
                uint64_t a = addrs[i];
                if (capture_address_is_context(a)) {
                        kernel_part = a == CAPTURE_CONTEXT_KERNEL;
                        depth = 0;
                        continue;
                }
                if (address_set_add(r->addresses, kernel_part ? ADDRESS_SET_KERNEL_PID : (int32_t) s->pid, a,
                                    depth++ > 0) < 0)
                        return -ENOMEM;
        }
        int ret = capture_writer_add_sample(r->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid,
                                            (int32_t) s->tid, addrs, n);
        if (ret < 0)
                return ret;
        r->samples++;
        return 0;
}

static int recording_handle_mmap2(const PerfMmap2 *m, void *userdata) {
        Recording *r = userdata;
        if (!(m->prot & PROT_EXEC) || m->len == 0)
                return 0;
        /* A process seen for the first time: which container/app it is in. */
        int ret = container_frames_write(r->writer, r->resolver, (int64_t) m->id.time, (pid_t) m->pid);
        if (ret < 0)
                return ret;
        ret = process_frames_write_mmap2(r->writer, r->maps, r->pinned, m);
        if (ret < 0)
                return ret;
        /* A program writing a perf map makes its file early: look while it maps code. */
        ret = jit_files_look(r->jit_files, (pid_t) m->pid, now_monotonic_ms(),
                             process_mapping_name_is_anonymous(m->filename));
        return ret < 0 ? ret : 0;
}

static int recording_handle_comm(const PerfComm *c, void *userdata) {
        Recording *r = userdata;
        if (c->exec && c->pid == c->tid) {
                /* a new program: its JIT files are looked for again */
                int ret = jit_files_new_process(r->jit_files, (pid_t) c->pid, now_monotonic_ms());
                if (ret < 0)
                        return ret;
                if ((pid_t) c->pid == r->options.command_pid) {
                        free(r->command_cmdline); /* named by this exec */
                        r->command_cmdline = NULL;
                }
        }
        int ret = process_frames_write_exec(r->writer, r->maps, c);
        if (ret < 0)
                return ret;
        return process_frames_write_thread_name(r->writer, r->thread_names, c);
}

static int recording_add_process_tasks(Recording *r, pid_t pid, bool *ret_not_owner);
static int recording_watch_rings(Recording *r);

/* An EXIT record of a process that is alive, right after its exec: the
 * kernel removed its events because the exec made it non-dumpable (set-id,
 * a gain of capabilities, a program it may not read: begin_new_exec calls
 * perf_event_exit_task). The process goes on without them. */
static bool recording_events_removed_at_exec(Recording *r, pid_t pid, int64_t time) {
        int64_t exec_time = process_maps_get_exec_time(r->maps, (int32_t) pid);
        if (exec_time <= 0 || time < exec_time || time - exec_time > EXEC_EVENTS_REMOVED_WINDOW_NS)
                return false;
        char state;
        return process_read_state(pid, &state) >= 0 && state != 'Z' && state != 'X';
}

/* The process of recording_events_removed_at_exec(): callers that may
 * record any process (root, polkit) get it sampled again with its new
 * image's frames; others do not, as the kernel meant (the program may not
 * be profiled with their rights). */
static int recording_exec_lost_events(Recording *r, pid_t pid) {
        if (r->check_owner) {
                log_recording(LOG_INFO, r->id, "process %d exec'd a program that uid %u may not profile "
                        "(set-id, file capabilities or not readable): the kernel stopped sampling it",
                        (int) pid, (unsigned) r->owner_uid);
                return 0;
        }
        int ret = recording_add_process_tasks(r, pid, NULL);
        if (ret == -ESRCH)
                return 0; /* gone meanwhile: its pidfd-held check saw it end */
        if (ret < 0) {
                char why[640];
                log_recording(LOG_WARNING, r->id,
                              "process %d exec'd a program with other privileges and the kernel "
                              "stopped sampling it; sampling it again failed: perf_event_open: %s",
                              (int) pid, perf_open_error_hint(r->perf_opener, ret, why, sizeof(why)));
                return 0;
        }
        int64_t now = now_monotonic_ns();
        ret = process_frames_write(r->writer, r->maps, r->pinned, now, pid, NULL);
        if (ret >= 0)
                ret = process_frames_write_threads(r->writer, r->thread_names, now, pid);
        if (ret < 0 && ret != -ESRCH)
                return ret;
        log_recording(LOG_INFO, r->id, "process %d exec'd a program with other privileges (the kernel stopped "
                "sampling it): sampled again", (int) pid);
        if (recording_watch_rings(r) < 0)
                log_recording(LOG_INFO, r->id, "cannot poll the ring of process %d; the tick drains it", (int) pid);
        return 0;
}

static int recording_handle_task(const PerfTask *t, bool fork, void *userdata) {
        Recording *r = userdata;
        /* A new process has inherited events: the rescan must not add it again. */
        if (fork && t->pid != t->ppid && r->follow) {
                int ret = container_follow_note_recorded(r->follow, (pid_t) t->pid);
                if (ret < 0)
                        return ret;
        }
        if (fork && t->pid != t->ppid) {
                int ret = jit_files_new_process(r->jit_files, (pid_t) t->pid, now_monotonic_ms());
                if (ret < 0)
                        return ret;
        }
        if (!fork && t->pid == t->tid) {
                /* The kernel removed its events at an exec that made it
                 * non-dumpable. Per-CPU events (--system) are not removed
                 * and go on sampling it: it did not exit. */
                if (recording_events_removed_at_exec(r, (pid_t) t->pid, (int64_t) t->time))
                        return r->options.system ? 0 : recording_exec_lost_events(r, (pid_t) t->pid);
                int ret = jit_files_exited(r->jit_files, (pid_t) t->pid);
                if (ret < 0)
                        return ret;
        }
        int ret = process_frames_write_thread_task(r->writer, r->thread_names, t, fork);
        if (ret < 0)
                return ret;
        return process_frames_write_task(r->writer, r->maps, t, fork);
}

static void recording_pump_wake(void *userdata);

/* What the pump hands on becomes capture frames here. */
static const SamplePumpSink recording_sink = {
        .sample = recording_emit_sample,
        .mmap2 = recording_handle_mmap2,
        .comm = recording_handle_comm,
        .task = recording_handle_task,
        .wake = recording_pump_wake,
};

/* The rings (and what waited) through the pump; with `last` nothing waits
 * after it, a table still compiling as none. */
static void recording_drain(Recording *r, bool last) {
        if (r->error || !r->pump)
                return;
        int ret = sample_pump_drain(r->pump, r->perf, last);
        if (ret < 0)
                recording_fail(r, ret, "writing the capture failed: %s", strerror(-ret));
        recording_describe_later(r); /* processes whose /.flatpak-info waits */
}

void recording_spill_rings(Recording *r) {
        if (r->state != RECORDING_STATE_RECORDING || !r->perf || r->error)
                return;
        sample_pump_spill_rings(r->pump, r->perf);
}

static void recording_flush(Recording *r) {
        if (!r->writer || r->error)
                return;
        int ret = capture_writer_flush(r->writer);
        if (ret < 0)
                recording_fail(r, ret, "writing the capture failed: %s", strerror(-ret));
}

/* Tells the observer that what the D-Bus face shows changed. */
static void recording_publish(Recording *r) {
        if (r->observer && r->observer->changed)
                r->observer->changed(r, r->observer_userdata);
        r->published_samples = r->samples;
}

/* ---- processes joining the recorded container ---- */

/* Records a process that entered the container/app during the recording:
 * events on its threads (inherit follows its children), then its PROCESS,
 * MAP, mountinfo and container frames, as the start snapshot writes them. */
static int recording_join_process(pid_t pid, void *userdata) {
        Recording *r = userdata;
        int64_t time = now_monotonic_ns();
        /* Like a `pids` entry: root and polkit-authorized callers may record
         * any process, others their own (checked with the process held). */
        bool not_owner;
        int ret = recording_add_process_tasks(r, pid, &not_owner);
        if (ret == -ESRCH)
                return ret;
        if (not_owner) {
                log_recording(LOG_INFO, r->id, "process %d joined container '%s' but is not uid %u's; "
                        "not recorded", (int) pid, r->options.container, (unsigned) r->owner_uid);
                return ret;
        }
        if (ret < 0) {
                char why[640];
                log_recording(LOG_WARNING, r->id,
                              "cannot record process %d that joined container '%s': "
                              "perf_event_open: %s",
                              (int) pid, r->options.container,
                              perf_open_error_hint(r->perf_opener, ret, why, sizeof(why)));
                return ret;
        }
        ret = process_frames_write(r->writer, r->maps, r->pinned, time, pid, NULL);
        if (ret >= 0)
                ret = process_frames_write_threads(r->writer, r->thread_names, time, pid);
        if (ret < 0 && ret != -ESRCH) {
                /* The capture itself failed: the recording ends with it. */
                recording_fail(r, ret, "writing the capture failed: %s", strerror(-ret));
                return ret;
        }
        /* Gone during the snapshot: its events still hold what it did. */
        _cleanup_free_ char *cmdline = process_read_cmdline(pid, NULL);
        log_recording(LOG_INFO, r->id, "process %d (%.80s) joined container '%s'", (int) pid,
                cmdline ? cmdline : "?", r->options.container);
        return 0;
}

/* Rescans /proc for processes that joined the container; tells once when
 * it has no process left (the recording goes on until Stop/duration). */
static void recording_follow_container(Recording *r) {
        if (r->error)
                return;
        bool was_stopped = container_follow_get_stats(r->follow).stopped;
        int ret = container_follow_scan(r->follow, r->resolver, recording_join_process, r);
        if (ret < 0) {
                if (!r->error)
                        log_recording(LOG_INFO, r->id, "scanning for processes of container '%s' failed: %s", r->options.container, strerror(-ret));
                return;
        }
        ContainerFollowStats st = container_follow_get_stats(r->follow);
        if (st.stopped && !was_stopped && !(r->options.container_waiting && st.joined == 0))
                log_recording(LOG_INFO, r->id, "container '%s' has no process left; recording goes on "
                        "until Stop or the duration (processes that join it are added)", r->options.container);
        else if (!st.stopped && was_stopped)
                log_recording(LOG_INFO, r->id, "container '%s' has processes (again)",
                        r->options.container);
        if (ret > 0 && recording_watch_rings(r) < 0)
                log_recording(LOG_INFO, r->id, "cannot poll the rings of joined processes; the tick drains them");
        if (ret > 0)
                recording_publish(r); /* Processes changed */
        recording_describe_later(r);
}

/* ---- event sources ---- */

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Recording *r = userdata;
        recording_drain(r, false);
        /* After the drain: every FORK record of a child inherit follows is in. */
        if (r->follow && r->ticks % RECORDING_FOLLOW_TICKS == 0)
                recording_follow_container(r);
        if (jit_files_look_all(r->jit_files, r->maps, now_monotonic_ms(), false) < 0)
                recording_fail(r, -ENOMEM, "out of memory");
        recording_flush(r);
        if (r->error) {
                recording_end(r, RECORDING_END_ERROR, r->error, NULL);
                return 0;
        }
        if (++r->ticks % RECORDING_PUBLISH_TICKS == 0 && r->samples != r->published_samples)
                recording_publish(r);
        int ret = sd_event_source_set_time_relative(s, RECORDING_TICK_USEC);
        if (ret < 0)
                return ret;
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *r = userdata;
        recording_drain(r, false);
        /* A per-task event hangs up when its task is gone; the tick drains the rest. */
        if (revents & (EPOLLHUP | EPOLLERR))
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (r->error)
                recording_end(r, RECORDING_END_ERROR, r->error, NULL);
        return 0;
}

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
static bool command_interrupted(Recording *r) {
        char path[64], buf[2048];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) r->options.command_pid);
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
        if (end == p + 1 || (syscall(SYS_pidfd_send_signal, r->command_pidfd, 0, NULL, 0) < 0 && errno == ESRCH))
                return false;
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT;
}

static int on_command_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *r = userdata;
        recording_end(r, command_interrupted(r) ? RECORDING_END_STOPPED : RECORDING_END_COMMAND_EXITED, 0, NULL);
        return 0;
}

/* A process given in "pids" exited: when it was the last, so does the
 * recording (as `perf record -p` does). */
static int on_target_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *r = userdata;
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (r->n_targets_alive > 0 && --r->n_targets_alive == 0)
                recording_end(r, RECORDING_END_TARGETS_EXITED, 0, NULL);
        return 0;
}

/* Watches the "pids" processes when nothing else bounds the recording's
 * targets: no command, no container (it may get new processes), not the
 * whole system. A process gone already counts as exited. */
static int recording_watch_targets(Recording *r) {
        const RecordOptions *o = &r->options;
        if (o->n_given_pids == 0 || o->command_pid > 0 || o->container || o->system)
                return 0;
        r->target_sources = calloc(o->n_given_pids, sizeof(sd_event_source *));
        if (!r->target_sources)
                return -ENOMEM;
        r->n_target_sources = o->n_given_pids;
        for (size_t i = 0; i < o->n_given_pids; i++) {
                long fd = syscall(SYS_pidfd_open, o->pids[i], 0);
                if (fd < 0) {
                        if (errno == ESRCH)
                                continue;
                        return -errno;
                }
                int ret = sd_event_add_io(r->event, &r->target_sources[i], (int) fd, EPOLLIN, on_target_exit, r);
                if (ret < 0) {
                        close((int) fd);
                        return ret;
                }
                (void) sd_event_source_set_io_fd_own(r->target_sources[i], true);
                r->n_targets_alive++;
        }
        if (r->n_targets_alive == 0)
                return -ESRCH;
        return 0;
}

/* ---- the end sequence ---- */

/* Files the sandboxed helper failed on during this recording: in its
 * post-stop stages, and compiling unwind tables (the daemon's tables are
 * shared: what failed while this recording ran). */
static uint64_t recording_unwind_helper_failures(const Recording *r) {
        if (!r->unwind_tables)
                return 0;
        return unwind_tables_get_stats(r->unwind_tables).helper_failures - r->unwind_helper_failures_start;
}

static uint64_t recording_helper_failures(const Recording *r) {
        return r->stage_results.helper_failures + recording_unwind_helper_failures(r);
}

/* Samples the kernel lost or the pump's spill dropped. */
static uint64_t recording_lost_samples(const Recording *r) {
        SamplePumpStats st = {};
        if (r->pump)
                sample_pump_get_stats(r->pump, &st);
        return st.lost_samples;
}

/* Malformed records: those the rings' readers and the pump dropped. */
static uint64_t recording_bad_records(const Recording *r) {
        SamplePumpStats st = {};
        if (r->pump)
                sample_pump_get_stats(r->pump, &st);
        return r->bad_records + st.bad_records;
}

static void recording_write_stats(Recording *r) {
        char buf[2048];
        SamplePumpStats pst = {};
        if (r->pump)
                sample_pump_get_stats(r->pump, &pst);
        const SampleUnwindStats *ust = &pst.unwind;
        int64_t now = now_monotonic_ns();
        /* The capture covers the sampling window, not the post-stop work:
         * a 3 s recording lasts 3 s, whatever symbolizing took after. */
        int64_t end = r->sampling_end_time > 0 ? r->sampling_end_time : now;
        size_t n_pids;
        (void) process_maps_get_pids(r->maps, &n_pids);
        size_t n_addrs;
        (void) address_set_get_entries(r->addresses, &n_addrs);
        int len = snprintf(buf, sizeof(buf),
                           "samples=%llu\nlost_samples=%llu\nbad_records=%llu\nprocesses=%zu\n"
                           "pinned_files=%zu\npin_failures=%llu\naddresses=%zu\nreason=%s\nduration_ns=%lld\n"
                           "unwind=%s\nkernel=%s\nunwound_samples=%llu\nunwound_frames=%llu\n"
                           "unwind_fp_frames=%llu\nunwind_ends=%llu\nunwind_stops_early=%llu\n"
                           "spilled_records=%llu\nhelper_failures=%llu\nunwind_helper_failures=%llu\n"
                           "user_addresses=%llu\nuser_addresses_named=%llu\n",
                           (unsigned long long) r->samples, (unsigned long long) pst.lost_samples,
                           (unsigned long long) recording_bad_records(r), n_pids, pinned_files_get_n(r->pinned),
                           (unsigned long long) pinned_files_get_failures(r->pinned), n_addrs,
                           recording_end_reason_to_string(r->reason), (long long) (end - r->start_time),
                           record_unwind_to_string(r->options.unwind), r->kernel ? "true" : "false",
                           (unsigned long long) ust->samples, (unsigned long long) ust->frames,
                           (unsigned long long) ust->fp_frames, (unsigned long long) ust->stops[UNWIND_STOP_END],
                           (unsigned long long) (ust->samples - ust->stops[UNWIND_STOP_END]),
                           (unsigned long long) pst.spilled_records, (unsigned long long) recording_helper_failures(r),
                           (unsigned long long) recording_unwind_helper_failures(r),
                           (unsigned long long) r->stage_results.user_addresses,
                           (unsigned long long) r->stage_results.user_named);
        /* Why user stacks ended, one line per reason ("unwind_stop_no_info=3"). */
        for (int i = 0; i < _UNWIND_STOP_MAX && len > 0 && (size_t) len < sizeof(buf); i++)
                if (ust->stops[i] > 0)
                        len += snprintf(buf + len, sizeof(buf) - (size_t) len, "unwind_stop_%s=%llu\n",
                                        unwind_stop_to_string(i), (unsigned long long) ust->stops[i]);
        /* The budgets (docs/security.md): addresses left as module+0xOFFSET,
         * the helper's time. */
        if (len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len,
                                "address_budget=%zu\naddresses_over_budget=%llu\nhelper_ms=%llu\n"
                                "helper_budget_ms=%u\nhelper_budget_spent=%s\n",
                                r->budgets.max_addresses,
                                (unsigned long long) address_set_get_over_limit(r->addresses),
                                (unsigned long long) r->stage_results.helper_ms, r->budgets.symbolize_ms,
                                r->stage_results.helper_budget_spent ? "true" : "false");
        /* `container`: processes that joined it during the recording; whether
         * any was left at the last rescan (a stopped container). */
        if (r->follow && len > 0 && (size_t) len < sizeof(buf)) {
                ContainerFollowStats st = container_follow_get_stats(r->follow);
                len += snprintf(buf + len, sizeof(buf) - (size_t) len,
                                "container_joined=%u\ncontainer_refused=%u\ncontainer_failed=%u\n"
                                "container_processes_left=%u\ncontainer_stopped=%s\n",
                                st.joined, st.refused, st.failed, st.members, st.stopped ? "true" : "false");
        }
        /* Sysprof trace fds: frames merged, and refused (garbage, foreign
         * pids, times outside the recording). */
        TraceFdStats tst;
        recording_trace_get_stats(r, &tst);
        if (tst.fds > 0 && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len,
                                "trace_fds=%llu\ntrace_frames=%llu\ntrace_frames_refused=%llu\n"
                                "trace_frames_skipped=%llu\n",
                                (unsigned long long) tst.fds, (unsigned long long) tst.frames_copied,
                                (unsigned long long) tst.frames_refused, (unsigned long long) tst.frames_skipped);
        /* What the post-stop stages could not finish (the service was
         * stopping): `periscope info` and `periscope record` say it. */
        char cut[64];
        if (r->stage_results.cut && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len, "cut_short=%s\n",
                                recording_cut_to_string(r->stage_results.cut, cut, sizeof cut));
        if ((r->stage_results.cut & RECORDING_CUT_SYMBOLIZE) && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len, "names_missing=%s\nnames_cut_short=%llu\n",
                                r->cut.why ? r->cut.why : "cut short",
                                (unsigned long long) r->stage_results.names_cut_short);
        if (len > 0 && (size_t) len >= sizeof(buf))
                len = (int) sizeof(buf) - 1;
        int ret = capture_writer_add_metadata(r->writer, now, -1, -1, "periscope.stats", buf, (size_t) len);
        if (ret < 0)
                recording_fail(r, ret, "writing the statistics failed: %s", strerror(-ret));
        capture_writer_set_end_time(r->writer, end);
}

static void recording_finish(Recording *r) {
        SamplePumpStats pst = {};
        if (r->pump)
                sample_pump_get_stats(r->pump, &pst);
        recording_control_stop(r);
        recording_write_stats(r);
        recording_flush(r);
        r->state = RECORDING_STATE_FINISHED;
        /* Closed before the observer hears of it: a client acting on
         * Finished sees the capture complete. */
        r->final_bytes = capture_writer_get_bytes(r->writer);
        r->writer = capture_writer_free(r->writer);
        log_fields(LOG_INFO,
                   &(const LogFields) { .recording_id = r->id,
                                       .has_uid = true,
                                       .uid = r->owner_uid,
                                       .message_id = PERISCOPE_MESSAGE_RECORDING_FINISHED },
                   "finished (%s): %llu samples, %llu lost, %llu records spilled while the helper worked, "
                   "%llu slices of waiting samples unwound from the event loop",
                   recording_end_reason_to_string(r->reason), (unsigned long long) r->samples,
                   (unsigned long long) pst.lost_samples, (unsigned long long) pst.spilled_records,
                   (unsigned long long) pst.slices);
        if (r->observer && r->observer->finished)
                r->observer->finished(r, r->observer_userdata);
}

/* A stage's progress, to the observer. */
static void recording_stage_progress(const char *stage, uint64_t done, uint64_t total, void *userdata) {
        Recording *r = userdata;
        if (r->observer && r->observer->progress)
                r->observer->progress(r, stage, done, total, r->observer_userdata);
}

static void recording_run_stages(Recording *r);
static void recording_unwind_rest(Recording *r, bool force);

/* Whether samples wait in the pump (spilled, or for unwind tables). */
static bool recording_samples_wait(const Recording *r) {
        SamplePumpStats st = {};
        if (r->pump)
                sample_pump_get_stats(r->pump, &st);
        return st.waiting;
}

/* Ends the wait of recording_unwind_rest(): what waits is unwound now. */
static void recording_cancel_waiting(void *job) {
        Recording *r = job;
        if (r->cut.now && recording_samples_wait(r))
                r->stage_results.cut |= RECORDING_CUT_UNWIND_TABLES;
        recording_unwind_rest(r, true);
}

/* The pump has more to hand on (the next slice, or unwind tables came):
 * while recording, a drain; stopped, the wait before the stages goes on. */
static void recording_pump_wake(void *userdata) {
        Recording *r = userdata;
        if (r->state == RECORDING_STATE_RECORDING) {
                recording_drain(r, false);
                if (r->error)
                        recording_end(r, RECORDING_END_ERROR, r->error, NULL);
        } else if (r->awaiting_tables)
                recording_unwind_rest(r, false);
}

/* A stage failed: a full disk under the symbol tables cuts the capture
 * short (even if a later flush finds room again); anything else is said. */
static void recording_stage_failed(Recording *r, const RecordingStage *st, int ret) {
        if (ret == -ENOSPC || ret == -EDQUOT || ret == -EIO)
                recording_fail(r, ret, "writing the capture failed: %s", strerror(-ret));
        else if (ret < 0)
                log_recording(LOG_WARNING, r->id, "stage %s failed: %s", st->name, strerror(-ret));
}

/* A stage that went on in the event loop is over: the next one runs. */
static void recording_stage_done(int result, void *userdata) {
        Recording *r = userdata;
        r->stage_job = (RecordingStageJob) {};
        recording_stage_failed(r, &recording_stages[r->stage], result);
        r->stage++;
        recording_run_stages(r);
}

/* Runs the stages left (none when freed while recording), then finishes;
 * a stage going on in the event loop resumes this from its end. */
static void recording_run_stages(Recording *r) {
        for (; r->stage < recording_n_stages && !r->stages_cancelled; r->stage++) {
                const RecordingStage *st = &recording_stages[r->stage];
                int ret = st->run(&r->stage_input, &r->stage_results, recording_stage_progress,
                                  recording_stage_done, r, &r->stage_job);
                if (ret > 0)
                        return;
                recording_stage_failed(r, st, ret);
        }
        if (r->stage < recording_n_stages)
                log_recording(LOG_INFO, r->id, "the recording is going away: stage %s and those after it did not run",
                              recording_stages[r->stage].name);
        recording_finish(r);
}

/* Stopped with samples waiting for tables that compile (in the helper, off
 * the event loop): they are unwound as their tables come (the tables'
 * listener), and the stages run once none waits. Freed or cancelled
 * meanwhile (`force`): unwound at once, a table still compiling as none. */
static void recording_unwind_rest(Recording *r, bool force) {
        if (force)
                r->stage_job = (RecordingStageJob) {};
        recording_drain(r, force);
        SamplePumpStats pst = {};
        if (r->pump)
                sample_pump_get_stats(r->pump, &pst);
        bool waiting = !r->error && pst.waiting;
        if (waiting && !r->awaiting_tables)
                r->samples_before_wait = r->samples;
        /* said when a table stopped the flush, not a slice's end */
        if (waiting && !pst.sliced && !r->told_table_wait) {
                log_recording(LOG_INFO, r->id, "%zu samples wait for unwind tables still compiling", pst.queued);
                r->told_table_wait = true;
        }
        if (waiting || r->awaiting_tables) {
                /* Progress: samples unwound since the wait began, of those
                 * and the ones still queued (the spill adds to them) */
                uint64_t unwound = r->samples - r->samples_before_wait;
                recording_stage_progress("unwind-tables", unwound, unwound + (waiting ? pst.queued : 0), r);
        }
        r->awaiting_tables = waiting;
        if (waiting) {
                /* a pseudo-stage: recording_cancel_stages() ends the wait */
                r->stage_job = (RecordingStageJob) { .cancel = recording_cancel_waiting, .job = r };
                return;
        }
        r->stage_job = (RecordingStageJob) {};
        recording_run_stages(r);
}

static void recording_disarm(Recording *r) {
        r->tick = sd_event_source_disable_unref(r->tick);
        for (size_t i = 0; i < r->n_ring_sources; i++)
                r->ring_sources[i] = sd_event_source_disable_unref(r->ring_sources[i]);
        r->duration_timer = sd_event_source_disable_unref(r->duration_timer);
        r->command_source = sd_event_source_disable_unref(r->command_source);
        r->command_pidfd = safe_close(r->command_pidfd);
        for (size_t i = 0; i < r->n_target_sources; i++)
                r->target_sources[i] = sd_event_source_disable_unref(r->target_sources[i]);
}

void recording_end(Recording *r, RecordingEndReason reason, int error, const char *message) {
        if (r->state != RECORDING_STATE_RECORDING)
                return;
        r->state = RECORDING_STATE_STOPPING;
        r->reason = error ? RECORDING_END_ERROR : reason;
        if (error && !r->error)
                recording_fail(r, error, "%s", message ? message : strerror(-error));
        recording_disarm(r);
        r->sampling_end_time = now_monotonic_ns();
        if (r->perf) {
                (void) perf_events_disable(r->perf);
                recording_drain(r, false);
                r->bad_records += perf_events_get_bad_records(r->perf);
                perf_events_free(TAKE_PTR(r->perf));
        }
        user_charge_release(&r->ring_charge);
        recording_describe_end(r);
        if (r->command_cmdline && r->writer) /* the command never exec'd: named as it was */
                (void) capture_writer_add_process(r->writer, r->start_time, -1, r->options.command_pid,
                                                  r->command_cmdline);
        recording_control_close(r); /* its rings are drained by the first stage */
        (void) jit_files_look_all(r->jit_files, r->maps, now_monotonic_ms(), true); /* the processes still alive */
        recording_flush(r);
        r->state = RECORDING_STATE_FINISHING;
        recording_publish(r);
        r->helper.time_budget_ms = r->budgets.symbolize_ms;
        r->stage_input = (RecordingStageInput) {
                .event = r->event,
                .recording_id = r->id,
                .writer = r->writer,
                .start_time = r->start_time,
                .end_time = r->sampling_end_time,
                .options = &r->options,
                .kernel = r->kernel,
                .maps = r->maps,
                .pinned = r->pinned,
                .jit_files = r->jit_files,
                .addresses = r->addresses,
                .resolver = r->resolver,
                .helper = r->helper,
                .control = r->control,
                .cut = &r->cut,
        };
        r->stage_input.trace = recording_trace_merge_input(r, &r->stage_input.trace_merge);
        /* freed while recording: no waiting */
        recording_unwind_rest(r, r->stage >= recording_n_stages);
}

/* ---- start ---- */

/* Opens events for every thread of pid, rescanning until no new thread shows
 * up (threads created after their creator's event are inherited). */
/* Events on pid's threads; a caller on its own rights is checked again
 * here, with the process held, whatever the authorization saw before. */
static int recording_add_process_tasks(Recording *r, pid_t pid, bool *ret_not_owner) {
        return process_attach_events(r->perf, pid, r->check_owner, r->owner_uid, ret_not_owner);
}

/* A refusal of perf_event_open, with its cause (perf-diagnose.h), as the
 * process that opened it (the perf opener, or periscoped) saw it. */
static int perf_error(const Recording *r, RecordingError *error, int ret, const char *what) {
        char why[640];
        return recording_error(error, PERISCOPE_ERROR_PERF_FAILED, "perf_event_open for %s failed: %s", what,
                               perf_open_error_hint(r->perf_opener, ret, why, sizeof(why)));
}

static int recording_arm_perf(Recording *r, RecordingError *error) {
        PerfEventsConfig cfg = {
                .frequency = r->options.frequency,
                .kernel = r->kernel,
                .sample_type =
                        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN,
                .opener = r->perf_opener,
        };
        if (r->options.unwind != RECORD_UNWIND_FP) {
                /* DWARF user stacks (docs/unwinding.md): registers and a copy of
                 * the stack; the kernel keeps only its own part of the callchain.
                 * Bigger rings (4 MiB per CPU) hold ~16 KiB samples while a
                 * table is being compiled. */
                cfg.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                cfg.sample_regs_user = SAMPLE_UNWIND_REGS_MASK;
                cfg.sample_stack_user = r->options.stack_size;
                cfg.exclude_callchain_user = true;
                cfg.ring_pages = 1024;
        } else if (SAMPLE_UNWIND_FP_NEEDS_REGS) {
                /* aarch64: LR and what finds the leaf's row, for the leaf's
                 * caller the frame-pointer chain skips (sample-stack.h) */
                cfg.sample_type |= PERF_SAMPLE_REGS_USER;
                cfg.sample_regs_user = SAMPLE_UNWIND_REGS_MASK;
        }
        SamplePumpSetup pump = {
                .event = r->event,
                .layout = { .sample_type = cfg.sample_type, .sample_regs_user = cfg.sample_regs_user },
                .unwind = r->options.unwind,
                .tables = r->unwind_tables,
                .owner = (uint32_t) r->owner_uid,
                .maps = r->maps,
                .kernel = r->kernel,
                .prepare_tables = !r->options.system,
                .sink = &recording_sink,
                .userdata = r,
        };
        int ret = sample_pump_new(&pump, &r->pump);
        if (ret < 0)
                return ret;
        ret = perf_events_new(&cfg, &r->perf);
        if (ret < 0)
                return perf_error(r, error, ret, "this recording");
        /* The rings are locked by root: count them against the owner. */
        user_charge_init(&r->ring_charge, r->limits, r->owner_uid, USER_RESOURCE_LOCKED_MEMORY);
        ret = user_charge_add(&r->ring_charge, perf_events_get_max_ring_bytes(r->perf), error->message,
                              sizeof(error->message));
        if (ret < 0) {
                error->name = periscope_error_from_errno(ret);
                return ret;
        }
        if (r->options.system) {
                ret = perf_events_add_system(r->perf);
                if (ret < 0)
                        return perf_error(r, error, ret, "the whole system");
        }
        for (size_t i = 0; i <= r->options.n_pids && !r->options.system; i++) {
                pid_t pid = i < r->options.n_pids ? r->options.pids[i] : r->options.command_pid;
                if (pid <= 0)
                        continue;
                bool not_owner;
                ret = recording_add_process_tasks(r, pid, &not_owner);
                /* A container's short-lived process may be gone already (its
                 * pid perhaps another process's now): fine. */
                if ((ret == -ESRCH || not_owner) && i >= r->options.n_given_pids && i < r->options.n_pids)
                        continue;
                if (ret == -ESRCH)
                        return recording_error(error, periscope_error_from_errno(ret),
                                               "process %d exited before recording started", (int) pid);
                /* The authorization saw it the caller's: it is another
                 * process now, or its owner changed (setuid). */
                if (not_owner)
                        return recording_error(error, periscope_error_from_errno(ret),
                                               "process %d is not yours (any more: did it exit and its pid go to "
                                               "another process, or did it change its uid?); pass the pid of a "
                                               "process of yours",
                                               (int) pid);
                if (ret < 0) {
                        char what[64];
                        snprintf(what, sizeof(what), "process %d", (int) pid);
                        return perf_error(r, error, ret, what);
                }
        }
        ret = perf_events_enable(r->perf);
        if (ret < 0)
                return perf_error(r, error, ret, "enabling the events");
        return 0;
}

/* `container`: processes that join it later are found by rescans; the
 * targets found now have their events already. */
static int recording_follow_start(Recording *r) {
        if (!r->options.container)
                return 0;
        int ret = container_follow_new(r->options.container, &r->follow);
        if (ret < 0)
                return ret;
        /* A caller recording on its own rights: its own containers and apps
         * only, as the start picked them (others' would be refused anyway). */
        if (r->check_owner)
                container_follow_set_owner(r->follow, r->owner_uid);
        for (size_t i = 0; i <= r->options.n_pids; i++) {
                pid_t pid = i < r->options.n_pids ? r->options.pids[i] : r->options.command_pid;
                if (pid > 0 && (ret = container_follow_note_recorded(r->follow, pid)) < 0)
                        return ret;
        }
        return 0;
}

/* The rings run while the snapshot reads /proc: keep them from overflowing. */
static void spill_between(void *userdata) {
        recording_spill_rings(userdata);
}

static int recording_snapshot(Recording *r) {
        int ret;
        if (r->options.system) {
                ret = process_frames_write_all(r->writer, r->maps, r->pinned, r->start_time, r->thread_names,
                                               spill_between, r);
                return ret < 0 ? ret : 0;
        }
        for (size_t i = 0; i <= r->options.n_pids; i++) {
                pid_t pid = i < r->options.n_pids ? r->options.pids[i] : r->options.command_pid;
                if (pid <= 0)
                        continue;
                /* The command (periscope record's child, held before its
                 * exec) still runs our client's program: its PROCESS frame
                 * comes with its exec, or at the end if it never execs. */
                bool held = i == r->options.n_pids;
                ret = process_frames_write(r->writer, r->maps, r->pinned, r->start_time, pid,
                                       held ? &r->command_cmdline : NULL);
                /* the command's name comes with its exec */
                if (ret >= 0 && !held)
                        ret = process_frames_write_threads(r->writer, r->thread_names, r->start_time, pid);
                if (ret < 0 && ret != -ESRCH)
                        return ret;
        }
        return 0;
}

/* Polls every ring that exists and is not polled yet (a CPU's ring appears
 * with its first event: at start, or when a process joins a container that
 * had none). */
static int recording_watch_rings(Recording *r) {
        size_t n = perf_events_get_n_rings(r->perf);
        if (!r->ring_sources) {
                r->ring_sources = calloc(n, sizeof(sd_event_source *));
                if (!r->ring_sources)
                        return -ENOMEM;
                r->n_ring_sources = n;
        }
        for (size_t i = 0; i < n && i < r->n_ring_sources; i++) {
                int fd = perf_events_get_ring_fd(r->perf, i);
                if (fd < 0 || r->ring_sources[i])
                        continue;
                int ret = sd_event_add_io(r->event, &r->ring_sources[i], fd, EPOLLIN, on_ring, r);
                if (ret < 0)
                        return ret;
        }
        return 0;
}

static int recording_add_sources(Recording *r) {
        sd_event *e = r->event;
        int ret = sd_event_add_time_relative(e, &r->tick, CLOCK_MONOTONIC, RECORDING_TICK_USEC, 10 * 1000, on_tick, r);
        if (ret < 0)
                return ret;
        ret = recording_watch_rings(r);
        if (ret < 0)
                return ret;
        if (r->options.duration_ms) {
                ret = sd_event_add_time_relative(e, &r->duration_timer, CLOCK_MONOTONIC,
                                                 r->options.duration_ms * 1000ull, 1000, on_duration, r);
                if (ret < 0)
                        return ret;
        }
        if (r->options.command_pid > 0) {
                long fd = syscall(SYS_pidfd_open, r->options.command_pid, 0);
                if (fd < 0)
                        return -errno;
                r->command_pidfd = (int) fd;
                ret = sd_event_add_io(e, &r->command_source, r->command_pidfd, EPOLLIN, on_command_exit, r);
                if (ret < 0)
                        return ret;
        }
        return recording_watch_targets(r);
}

int recording_start(const RecordingSetup *setup, RecordOptions *options, int capture_fd, Recording **ret,
                    RecordingError *error) {
        assert(setup && setup->event && options && ret && error);
        *error = (RecordingError) {};
        int r_;
        Recording *r = calloc(1, sizeof(Recording));
        if (!r)
                return -ENOMEM;
        r->id = setup->id;
        r->owner_uid = setup->owner_uid;
        r->kernel = setup->kernel;
        r->check_owner = setup->check_owner;
        r->limits = setup->limits;
        r->event = sd_event_ref(setup->event);
        r->unwind_tables = setup->unwind_tables;
        if (r->unwind_tables)
                r->unwind_helper_failures_start = unwind_tables_get_stats(r->unwind_tables).helper_failures;
        r->helper = setup->helper;
        r->budgets = setup->budgets;
        r->perf_opener = setup->perf_opener;
        if (r->budgets.max_addresses == 0)
                r->budgets.max_addresses = RECORDING_DEFAULT_MAX_ADDRESSES;
        if (r->budgets.symbolize_ms == 0)
                r->budgets.symbolize_ms = RECORDING_DEFAULT_SYMBOLIZE_MS;
        r->observer = setup->observer;
        r->observer_userdata = setup->observer_userdata;
        r->options = *options;
        *options = (RecordOptions) {};
        r->command_pidfd = -1;
        r->start_time = now_monotonic_ns();
        if (r->options.kernel == 0)
                r->kernel = false;

        if ((r_ = process_maps_new(&r->maps)) < 0 || (r_ = thread_table_new(&r->thread_names)) < 0 ||
            (r_ = pinned_files_new(setup->max_pinned_files, &r->pinned)) < 0 ||
            (r_ = jit_files_new(setup->max_pinned_files / 4 + 1, &r->jit_files)) < 0 ||
            (r_ = address_set_new(&r->addresses)) < 0 ||
            (r_ = recording_resolver_new(setup->user_file_helper, &r->resolver)) < 0)
                goto fail;
        address_set_set_limit(r->addresses, r->budgets.max_addresses);
        pinned_files_set_resolver(r->pinned, r->resolver);
        jit_files_set_resolver(r->jit_files, r->resolver);
        if (r->check_owner)
                jit_files_set_owner(r->jit_files, r->owner_uid);
        /* A caller other than root: what it names is opened with its rights
         * (debug files, pins by path; docs/security.md). */
        if (geteuid() == 0 && r->owner_uid != 0) {
                r_ = caller_opener_new(r->owner_uid, &r->as_caller);
                if (r_ < 0) {
                        recording_error(error, PERISCOPE_ERROR_FAILED,
                                        "cannot open files with the rights of uid %u: %s (periscoped needs "
                                        "CAP_SETUID and CAP_SETGID for that)",
                                        (unsigned) r->owner_uid, strerror(-r_));
                        goto fail;
                }
                resolver_set_caller_opener(r->resolver, r->as_caller);
        }
        r_ = capture_writer_new_fd(capture_fd, r->start_time, &r->writer);
        if (r_ < 0) {
                recording_error(error, PERISCOPE_ERROR_INVALID_CAPTURE, "cannot write the capture: %s", strerror(-r_));
                goto fail;
        }
        /* the architecture the addresses belong to (docs/capture-format.md) */
        r_ = capture_writer_add_machine(r->writer, r->start_time);
        if (r_ < 0) {
                recording_error(error, PERISCOPE_ERROR_INVALID_CAPTURE, "cannot write the capture: %s", strerror(-r_));
                goto fail;
        }
        r_ = recording_arm_perf(r, error);
        if (r_ < 0)
                goto fail;
        r_ = recording_follow_start(r);
        if (r_ < 0)
                goto fail;
        int64_t snapshot_start = now_monotonic_ns();
        r_ = recording_snapshot(r);
        if (r_ < 0) {
                recording_error(error, PERISCOPE_ERROR_FAILED, "taking the process snapshot failed: %s", strerror(-r_));
                goto fail;
        }
        /* the tables of what runs already compile before samples need them */
        sample_pump_prepare_all(r->pump);
        size_t n_snapshot = 0;
        (void) process_maps_get_pids(r->maps, &n_snapshot);
        log_recording(LOG_INFO, r->id, "snapshot of %zu processes in %lld ms", n_snapshot,
                      (long long) ((now_monotonic_ns() - snapshot_start) / 1000000));
        r_ = capture_writer_flush(r->writer);
        if (r_ < 0) {
                recording_error(error, PERISCOPE_ERROR_INVALID_CAPTURE, "cannot write the capture: %s", strerror(-r_));
                goto fail;
        }
        r_ = recording_control_start(r, error);
        if (r_ < 0)
                goto fail;
        r_ = recording_add_sources(r);
        if (r_ < 0)
                goto fail;
        log_fields(LOG_INFO,
                   &(const LogFields) { .recording_id = r->id,
                                       .has_uid = true,
                                       .uid = r->owner_uid,
                                       .message_id = PERISCOPE_MESSAGE_RECORDING_STARTED },
                   "started for uid %u (%s)", (unsigned) r->owner_uid, r->options.system ? "system" : "processes");
        if (r->options.container_waiting)
                log_recording(LOG_INFO, r->id, "container '%s' does not run now; its processes are added when it starts",
                              r->options.container);
        *ret = r;
        return 0;
fail:
        if (!error->name)
                recording_error(error, PERISCOPE_ERROR_FAILED, "starting the recording failed: %s", strerror(-r_));
        r->observer = NULL; /* it never started: nothing to tell */
        r->state = RECORDING_STATE_FINISHED;
        recording_free(r);
        return r_ < 0 ? r_ : -EIO;
}

void recording_cancel_stages(Recording *r) {
        /* the next ones do not start (nor any after the wait for unwind tables) */
        r->stages_cancelled = true;
        if (r->stage_job.cancel)
                r->stage_job.cancel(r->stage_job.job);
}

void recording_cut_short(Recording *r, const char *why, bool now) {
        if (r->state == RECORDING_STATE_FINISHED || r->cut.now)
                return;
        if (!r->cut.why)
                r->cut.why = why;
        if (!now) {
                log_recording(LOG_INFO, r->id, "post-stop stages %s soon: symbolizing no more files", r->cut.why);
                return;
        }
        r->cut.now = true;
        log_recording(LOG_INFO, r->id, "post-stop stages %s: finishing the capture now", r->cut.why);
        /* the stage under way ends (its done() runs the rest, which see cut.now) */
        if (r->stage_job.cancel)
                r->stage_job.cancel(r->stage_job.job);
}

const char *recording_cut_to_string(unsigned cut, char *buf, size_t size) {
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {
                { RECORDING_CUT_UNWIND_TABLES, "unwind-tables" },
                { RECORDING_CUT_TRACE_FDS, "trace-fds" },
                { RECORDING_CUT_SYMBOLIZE, "symbolize" },
        };
        size_t len = 0;
        if (size > 0)
                buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if ((cut & names[i].bit) && len < size) {
                        int k = snprintf(buf + len, size - len, "%s%s", len ? "," : "", names[i].name);
                        if (k < 0)
                                break;
                        len += (size_t) k;
                }
        return buf;
}

Recording *recording_free(Recording *r) {
        if (!r)
                return NULL;
        if (r->state == RECORDING_STATE_RECORDING) {
                /* Freed while recording (service exiting): finalize without stages. */
                r->stage = recording_n_stages;
                recording_end(r, RECORDING_END_SHUTDOWN, 0, NULL);
        }
        if (r->describe_fiber)
                fiber_cancel(r->describe_fiber);
        helper_client_free(r->describe_helper);
        /* Freed while finishing: the capture is still closed. */
        recording_cancel_stages(r);
        recording_disarm(r);
        recording_control_free(r);
        trace_fds_free(r->trace);
        perf_events_free(r->perf);
        user_charge_release(&r->ring_charge);
        capture_writer_free(r->writer);
        free(r->target_sources);
        r->pump = sample_pump_free(r->pump);
        container_follow_free(r->follow);
        process_maps_free(r->maps);
        thread_table_free(r->thread_names);
        pinned_files_free(r->pinned);
        jit_files_free(r->jit_files);
        resolver_free(r->resolver);
        caller_opener_free(r->as_caller);
        address_set_free(r->addresses);
        record_options_done(&r->options);
        sd_event_unref(r->event);
        free(r->ring_sources);
        free(r->error_message);
        free(r->command_cmdline);
        free(r);
        return NULL;
}

bool recording_outlives_client(const Recording *r) {
        return r->options.duration_ms > 0 || r->options.command_pid > 0;
}

void recording_get_stats(const Recording *r, RecordingStats *ret) {
        size_t n_pids = 0;
        (void) process_maps_get_pids(r->maps, &n_pids);
        ContainerFollowStats st = r->follow ? container_follow_get_stats(r->follow) : (ContainerFollowStats) {};
        *ret = (RecordingStats) {
                .state = r->state,
                .reason = r->reason,
                .error_message = r->error == 0      ? NULL
                                 : r->error_message ? r->error_message
                                                    : strerror(-r->error),
                .samples = r->samples,
                .lost_samples = recording_lost_samples(r),
                .bad_records = recording_bad_records(r),
                .helper_failures = recording_helper_failures(r),
                .unwind_helper_failures = recording_unwind_helper_failures(r),
                .user_addresses = r->stage_results.user_addresses,
                .user_named = r->stage_results.user_named,
                .addresses_over_budget = address_set_get_over_limit(r->addresses),
                .helper_budget_spent = r->stage_results.helper_budget_spent,
                .bytes = r->writer ? capture_writer_get_bytes(r->writer) : r->final_bytes,
                .processes = n_pids,
                .pinned_files = pinned_files_get_n(r->pinned),
                .follows_container = r->follow != NULL,
                .joined_processes = st.joined,
                .container_stopped = st.stopped,
        };
        TraceFdStats tst;
        recording_trace_get_stats(r, &tst);
        ret->trace_fds = tst.fds;
        ret->trace_frames = tst.frames_copied;
        ret->trace_frames_refused = tst.frames_refused;
        ret->cut = r->stage_results.cut;
        ret->cut_short = r->cut.why;
        ret->names_cut_short = r->stage_results.names_cut_short;
}
