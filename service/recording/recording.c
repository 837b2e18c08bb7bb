/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording.c: a recording's life from its start to its end, without D-Bus. */
#include "recording.h"
#include "recording-private.h"

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

static void recording_describe_later(Recording *rec);

/* A resolver whose refusals and warnings go to the daemon's log, and whose
 * users' files are parsed on the describe fiber, off the event loop. */
static int recording_resolver_new(HelperClient *user_file_helper, Resolver **ret) {
        int r = daemon_resolver_new(user_file_helper, ret);
        if (r >= 0)
                resolver_set_defer_user_files(*ret, true);
        return r;
}

/* ---- processes' /.flatpak-info and Podman stores, parsed on a fiber ---- */

static void recording_fail(Recording *rec, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int describe_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        Recording *rec = userdata;
        if (!rec->describe_fiber) { /* never: the helper is asked on the fiber only */
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int r = poll(&p, 1, (int) timeout_ms);
                return r < 0 ? (errno == EINTR ? 0 : -errno) : r > 0;
        }
        return fiber_wait_readable(fd, timeout_ms, rec->describe_fiber);
}

static void describe_yield(void *userdata) {
        Recording *rec = userdata;
        if (rec->describe_fiber)
                (void) fiber_yield(rec->describe_fiber);
}

/* Parses pid's /.flatpak-info or Podman store on fiber, pins what only its
 * container's layers hold and writes its description frames,
 * timed now. A failed parse takes the file as rejected, unless fiber was
 * cancelled meanwhile (it waits for the post-stop stage). */
static int recording_describe(Recording *rec, pid_t pid, HelperClient *helper, Fiber *fiber) {
        int r = resolver_parse_pending(rec->resolver, pid, helper);
        if (r < 0 && r != -ENOENT) {
                if (r == HELPER_CLIENT_FAILED && fiber_yield(fiber) == -ECANCELED)
                        return -ECANCELED;               /* parsed again after sampling */
                resolver_drop_pending(rec->resolver, pid); /* not asked again */
                r = 0; /* a Podman process is still described: its id, what was found */
        }
        if (r < 0 || !rec->writer || rec->error)
                return 0;
        /* described only when recorded (a rescan's look at another
         * process leaves no trace in the capture) */
        size_t n_maps = 0;
        if (!process_maps_get(rec->maps, (int32_t) pid, &n_maps) || n_maps == 0)
                return 0;
        recording_repin(rec->resolver, rec->maps, rec->pinned, pid);
        r = container_frames_write(rec->writer, rec->resolver, now_monotonic_ns(), pid);
        if (r < 0)
                recording_fail(rec, r, "writing the capture failed: %m");
        return r;
}

static int describe_on_fiber(Fiber *f, void *userdata) {
        Recording *rec = userdata;
        if (!rec->describe_helper) {
                HelperClientConfig c = rec->helper;
                c.time_budget_ms = 0;
                c.timeout_ms = 5000; /* users' files are small: longer is hung */
                c.wait_readable = describe_wait_readable;
                c.wait_readable_userdata = rec;
                c.yield = describe_yield;
                int r = helper_client_new(&c, &rec->describe_helper);
                if (r < 0) {
                        rec->describe_helper = NULL;
                        return r;
                }
        }
        pid_t pid;
        while (!rec->error && resolver_next_pending(rec->resolver, &pid) > 0) {
                int r = recording_describe(rec, pid, rec->describe_helper, f);
                if (r < 0)
                        return r;
                if (fiber_yield(f) == -ECANCELED)
                        return -ECANCELED;
        }
        return 0;
}

static void describe_done(int result, void *userdata) {
        Recording *rec = userdata;
        rec->describe_fiber = NULL;
        if (result < 0 && result != -ECANCELED)
                log_recording_errno(LOG_INFO, rec->id, result, "describing sandboxed processes failed: %m");
        else if (result == 0)
                recording_describe_later(rec); /* processes seen meanwhile */
}

/* Starts the describe fiber when a process's /.flatpak-info waits. */
static void recording_describe_later(Recording *rec) {
        pid_t pid;
        if (rec->describe_fiber || rec->error || rec->state != RECORDING_STATE_RECORDING ||
            resolver_next_pending(rec->resolver, &pid) <= 0)
                return;
        int r = fiber_start(rec->event, "describing sandboxed processes", describe_on_fiber, describe_done, rec,
                            &rec->describe_fiber);
        if (r < 0)
                log_recording_errno(LOG_INFO, rec->id, r, "cannot describe sandboxed processes yet: %m");
}

/* At the end of sampling: the fiber ends; what still waits is the first
 * post-stop stage's (container-descriptions). */
static void recording_describe_end(Recording *rec) {
        if (rec->describe_fiber)
                fiber_cancel(rec->describe_fiber);
        rec->describe_helper = helper_client_free(rec->describe_helper);
}

/* Remembers the first failure; the recording ends with it. Its message is
 * what the owner reads (the Finished signal), so it is formatted here; %m
 * stands for error. */
static void recording_fail(Recording *rec, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void recording_fail(Recording *rec, int error, const char *fmt, ...) {
        if (rec->error_message)
                return;
        rec->error = error < 0 ? error : -EIO;
        va_list ap;
        va_start(ap, fmt);
        errno = -rec->error; /* for %m */
        if (vasprintf(&rec->error_message, fmt, ap) < 0)
                rec->error_message = NULL;
        va_end(ap);
        log_recording_errno(LOG_ERR, rec->id, rec->error, "%s", rec->error_message ? rec->error_message : "failed");
}

/* ---- from perf records to capture frames ---- */

/* Writes one built SAMPLE and notes its addresses for symbolization. */
static int recording_emit_sample(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        Recording *rec = userdata;
        bool kernel_part = false;
        size_t depth = 0; /* frames since the context marker: the first is the sampled IP */
        for (size_t i = 0; i < n; i++) {
                uint64_t a = addrs[i];
                if (capture_address_is_context(a)) {
                        kernel_part = a == CAPTURE_CONTEXT_KERNEL;
                        depth = 0;
                        continue;
                }
                if (address_set_add(rec->addresses, kernel_part ? ADDRESS_SET_KERNEL_PID : (int32_t) s->pid, a,
                                    depth++ > 0) < 0)
                        return -ENOMEM;
        }
        if (s->off_cpu_ns > 0)
                return capture_writer_add_off_cpu(
                        rec->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid, (int32_t) s->tid,
                        s->off_cpu_state == PERF_OFF_CPU_RUNNABLE ? CAPTURE_OFF_CPU_RUNNABLE : CAPTURE_OFF_CPU_BLOCKED,
                        s->off_cpu_ns, addrs, n);
        int r = capture_writer_add_sample(rec->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid,
                                          (int32_t) s->tid, addrs, n);
        if (r < 0)
                return r;
        rec->samples++;
        return 0;
}

/* An off-CPU interval without a stack (preempted, or not sampled). */
static int recording_emit_off_cpu(const OffCpuInterval *iv, void *userdata) {
        Recording *rec = userdata;
        return capture_writer_add_off_cpu(
                rec->writer, (int64_t) iv->time, (int) iv->cpu, (int32_t) iv->pid, (int32_t) iv->tid,
                iv->state == PERF_OFF_CPU_RUNNABLE ? CAPTURE_OFF_CPU_RUNNABLE : CAPTURE_OFF_CPU_BLOCKED,
                iv->duration_ns, NULL, 0);
}

static int recording_handle_mmap2(const PerfMmap2 *m, void *userdata) {
        Recording *rec = userdata;
        if (!(m->prot & PROT_EXEC) || m->len == 0)
                return 0;
        /* A process seen for the first time: which container/app it is in. */
        int r = container_frames_write(rec->writer, rec->resolver, (int64_t) m->id.time, (pid_t) m->pid);
        if (r < 0)
                return r;
        r = process_frames_write_mmap2(rec->writer, rec->maps, rec->pinned, m);
        if (r < 0)
                return r;
        /* A program writing a perf map makes its file early: look while it maps code. */
        r = jit_files_look(rec->jit_files, (pid_t) m->pid, now_monotonic_ms(),
                           process_mapping_name_is_anonymous(m->filename));
        return r < 0 ? r : 0;
}

static int recording_handle_comm(const PerfComm *c, void *userdata) {
        Recording *rec = userdata;
        if (c->exec && c->pid == c->tid) {
                /* a new program: its JIT files are looked for again */
                int r = jit_files_new_process(rec->jit_files, (pid_t) c->pid, now_monotonic_ms());
                if (r < 0)
                        return r;
                if ((pid_t) c->pid == rec->options.command_pid) {
                        free(rec->command_cmdline); /* named by this exec */
                        rec->command_cmdline = NULL;
                }
        }
        int r = process_frames_write_exec(rec->writer, rec->maps, c);
        if (r < 0)
                return r;
        return process_frames_write_thread_name(rec->writer, rec->thread_names, c);
}

static int recording_add_process_tasks(Recording *rec, pid_t pid, bool *ret_not_owner);
static void recording_not_followed(Recording *rec, pid_t pid, const char *what);
static int recording_watch_rings(Recording *rec);

/* Whose a process must still be when its maps are read (process_frames_write()). */
static uid_t recording_frames_owner(const Recording *rec) {
        return rec->check_owner ? rec->owner_uid : PROCESS_FRAMES_ANY_OWNER;
}

/* An EXIT record of a process that is alive, right after its exec: the
 * kernel removed its events because the exec made it non-dumpable (set-id,
 * a gain of capabilities, a program it may not read: begin_new_exec calls
 * perf_event_exit_task). The process goes on without them. */
static bool recording_events_removed_at_exec(Recording *rec, pid_t pid, int64_t time) {
        int64_t exec_time = process_maps_get_exec_time(rec->maps, (int32_t) pid);
        if (exec_time <= 0 || time < exec_time || time - exec_time > EXEC_EVENTS_REMOVED_WINDOW_NS)
                return false;
        char state;
        return process_read_state(pid, &state) >= 0 && state != 'Z' && state != 'X';
}

/* The process of recording_events_removed_at_exec(): callers that may
 * record any process (root, polkit) get it sampled again with its new
 * image's frames; others do not, as the kernel meant (the program may not
 * be profiled with their rights). */
static int recording_exec_lost_events(Recording *rec, pid_t pid) {
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

static void recording_attach_later(Recording *rec);

/* recording_exec_lost_events() on the attach fiber: its events wait for
 * the perf opener off the loop's stack. */
static int recording_exec_lost_events_later(Recording *rec, pid_t pid) {
        if (rec->check_owner)
                return recording_exec_lost_events(rec, pid); /* nothing opened */
        if (GROW_ARRAY(rec->attach_execs, rec->allocated_attach_execs, rec->n_attach_execs + 1, 8) < 0)
                return -ENOMEM;
        rec->attach_execs[rec->n_attach_execs++] = pid;
        recording_attach_later(rec);
        return 0;
}

static int recording_handle_task(const PerfTask *t, bool fork, void *userdata) {
        Recording *rec = userdata;
        /* A new process has inherited events: the rescan must not add it again. */
        if (fork && t->pid != t->ppid && rec->follow) {
                int r = container_follow_note_recorded(rec->follow, (pid_t) t->pid);
                if (r < 0)
                        return r;
        }
        if (fork && t->pid != t->ppid) {
                int r = jit_files_new_process(rec->jit_files, (pid_t) t->pid, now_monotonic_ms());
                if (r < 0)
                        return r;
        }
        if (!fork && t->pid == t->tid) {
                /* The kernel removed its events at an exec that made it
                 * non-dumpable. Per-CPU events (--system) are not removed
                 * and go on sampling it: it did not exit. */
                if (recording_events_removed_at_exec(rec, (pid_t) t->pid, (int64_t) t->time))
                        return rec->options.system ? 0 : recording_exec_lost_events_later(rec, (pid_t) t->pid);
                int r = jit_files_exited(rec->jit_files, (pid_t) t->pid);
                if (r < 0)
                        return r;
        }
        int r = process_frames_write_thread_task(rec->writer, rec->thread_names, t, fork);
        if (r < 0)
                return r;
        return process_frames_write_task(rec->writer, rec->maps, t, fork);
}

static void recording_pump_wake(void *userdata);

/* What the pump hands on becomes capture frames here. */
static const SamplePumpSink recording_sink = {
        .sample = recording_emit_sample,
        .mmap2 = recording_handle_mmap2,
        .comm = recording_handle_comm,
        .task = recording_handle_task,
        .off_cpu = recording_emit_off_cpu,
        .wake = recording_pump_wake,
};

/* The rings (and what waited) through the pump; with `last` nothing waits
 * after it, a table still compiling as none. */
static void recording_drain(Recording *rec, bool last) {
        if (rec->error || !rec->pump)
                return;
        int r = sample_pump_drain(rec->pump, rec->perf, last);
        if (r < 0)
                recording_fail(rec, r, "writing the capture failed: %m");
        if (rec->options.off_cpu && rec->perf && !last && !rec->error) {
                r = off_cpu_governor_check(&rec->off_cpu_governor, rec->perf, rec->pump, rec->options.frequency,
                                           (uint64_t) now_monotonic_ns());
                if (r < 0)
                        recording_fail(rec, r, "pausing the off-CPU events failed: %m");
        }
        recording_describe_later(rec); /* processes whose /.flatpak-info waits */
}

void recording_spill_rings(Recording *rec) {
        if (rec->state != RECORDING_STATE_RECORDING || !rec->perf || rec->error)
                return;
        sample_pump_spill_rings(rec->pump, rec->perf);
}

static void recording_flush(Recording *rec) {
        if (!rec->writer || rec->error)
                return;
        int r = capture_writer_flush(rec->writer);
        if (r < 0)
                recording_fail(rec, r, "writing the capture failed: %m");
}

/* Tells the observer that what the D-Bus face shows changed. */
static void recording_publish(Recording *rec) {
        if (rec->observer && rec->observer->changed)
                rec->observer->changed(rec, rec->observer_userdata);
        rec->published_samples = rec->samples;
}

/* ---- processes joining the recorded container ---- */

/* Records a process that entered the container/app during the recording:
 * events on its threads (inherit follows its children), then its PROCESS,
 * MAP, mountinfo and container frames, as the start snapshot writes them. */
static int recording_join_process(pid_t pid, void *userdata) {
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
static void recording_follow_container(Recording *rec) {
        if (rec->error)
                return;
        bool was_stopped = container_follow_get_stats(rec->follow).stopped;
        int r = container_follow_scan(rec->follow, rec->resolver, recording_join_process, rec);
        if (r < 0) {
                if (!rec->error)
                        log_recording_errno(LOG_INFO, rec->id, r, "scanning for processes of container '%s' failed: %m",
                                            rec->options.container);
                return;
        }
        ContainerFollowStats st = container_follow_get_stats(rec->follow);
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
        recording_describe_later(rec);
}

/* ---- the later events, opened on a fiber ---- */

/* Processes joining the container and re-attaches after an exec open
 * their events here, one at a time: each wait for the perf opener goes
 * back to the event loop, which serves every other caller meanwhile. Only
 * this fiber opens rec->perf's events once the recording started, so
 * their wait hook is its own while it runs. */
static int attach_on_fiber(Fiber *f, void *userdata) {
        Recording *rec = userdata;
        perf_events_set_wait(rec->perf, fiber_wait_readable, f);
        while (fiber_yield(f) >= 0 && !rec->error && rec->state == RECORDING_STATE_RECORDING) {
                if (rec->n_attach_execs > 0) {
                        pid_t pid = rec->attach_execs[0];
                        memmove(rec->attach_execs, rec->attach_execs + 1, --rec->n_attach_execs * sizeof(pid_t));
                        int r = recording_exec_lost_events(rec, pid);
                        if (r < 0 && !rec->error)
                                recording_fail(rec, r, "writing the capture failed: %m");
                } else if (rec->attach_scan) {
                        rec->attach_scan = false;
                        recording_follow_container(rec);
                } else
                        break;
        }
        if (rec->perf)
                perf_events_set_wait(rec->perf, NULL, NULL);
        return 0;
}

static void attach_done(int result, void *userdata) {
        Recording *rec = userdata;
        rec->attach_fiber = NULL;
        recording_attach_later(rec); /* queued as it ended */
}

static void recording_attach_later(Recording *rec) {
        if (rec->attach_fiber || rec->error || rec->state != RECORDING_STATE_RECORDING || !rec->perf ||
            (rec->n_attach_execs == 0 && !rec->attach_scan))
                return;
        int r = fiber_start(rec->event, "opening a recording's later perf events", attach_on_fiber, attach_done, rec,
                            &rec->attach_fiber);
        if (r < 0)
                recording_fail(rec, r, "cannot open the events of joining processes: %m");
}

/* At the end of sampling: what waits for the opener gives up (its
 * processes are not sampled again, nor joined). */
static void recording_attach_end(Recording *rec) {
        if (rec->attach_fiber)
                fiber_cancel(rec->attach_fiber);
        rec->n_attach_execs = 0;
        rec->attach_scan = false;
}

/* ---- event sources ---- */

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Recording *rec = userdata;
        recording_drain(rec, false);
        /* After the drain: every FORK record of a child inherit follows is in. */
        if (rec->follow && rec->ticks % RECORDING_FOLLOW_TICKS == 0) {
                rec->attach_scan = true;
                recording_attach_later(rec);
        }
        if (jit_files_look_all(rec->jit_files, rec->maps, now_monotonic_ms(), false) < 0)
                recording_fail(rec, -ENOMEM, "out of memory");
        recording_flush(rec);
        if (rec->error) {
                recording_end(rec, RECORDING_END_ERROR, rec->error, NULL);
                return 0;
        }
        if (++rec->ticks % RECORDING_PUBLISH_TICKS == 0 && rec->samples != rec->published_samples)
                recording_publish(rec);
        int r = sd_event_source_set_time_relative(s, RECORDING_TICK_USEC);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *rec = userdata;
        recording_drain(rec, false);
        /* A per-task event hangs up when its task is gone; the tick drains the rest. */
        if (revents & (EPOLLHUP | EPOLLERR))
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (rec->error)
                recording_end(rec, RECORDING_END_ERROR, rec->error, NULL);
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
static bool command_interrupted(Recording *rec) {
        char path[64], buf[2048];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) rec->options.command_pid);
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
        if (end == p + 1 || (syscall(SYS_pidfd_send_signal, rec->command_pidfd, 0, NULL, 0) < 0 && errno == ESRCH))
                return false;
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT;
}

static int on_command_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *rec = userdata;
        recording_end(rec, command_interrupted(rec) ? RECORDING_END_STOPPED : RECORDING_END_COMMAND_EXITED, 0, NULL);
        return 0;
}

/* A process given in "pids" exited: when it was the last, so does the
 * recording (as `perf record -p` does). */
static int on_target_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Recording *rec = userdata;
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (rec->n_targets_alive > 0 && --rec->n_targets_alive == 0)
                recording_end(rec, RECORDING_END_TARGETS_EXITED, 0, NULL);
        return 0;
}

/* Watches the "pids" processes when nothing else bounds the recording's
 * targets: no command, no container (it may get new processes), not the
 * whole system. A process gone already counts as exited. */
static int recording_watch_targets(Recording *rec) {
        const RecordOptions *o = &rec->options;
        if (o->n_given_pids == 0 || o->command_pid > 0 || o->container || o->system)
                return 0;
        rec->target_sources = calloc(o->n_given_pids, sizeof(sd_event_source *));
        if (!rec->target_sources)
                return -ENOMEM;
        rec->n_target_sources = o->n_given_pids;
        for (size_t i = 0; i < o->n_given_pids; i++) {
                long fd = syscall(SYS_pidfd_open, o->pids[i], 0);
                if (fd < 0) {
                        if (errno == ESRCH)
                                continue;
                        return -errno;
                }
                int r = sd_event_add_io(rec->event, &rec->target_sources[i], (int) fd, EPOLLIN, on_target_exit, rec);
                if (r < 0) {
                        close((int) fd);
                        return r;
                }
                (void) sd_event_source_set_io_fd_own(rec->target_sources[i], true);
                rec->n_targets_alive++;
        }
        if (rec->n_targets_alive == 0)
                return -ESRCH;
        return 0;
}

/* ---- the end sequence ---- */

/* Files the sandboxed helper failed on during this recording: in its
 * post-stop stages, and compiling unwind tables (the daemon's tables are
 * shared: what failed while this recording ran). */
static uint64_t recording_unwind_helper_failures(const Recording *rec) {
        if (!rec->unwind_tables)
                return 0;
        return unwind_tables_get_stats(rec->unwind_tables).helper_failures - rec->unwind_helper_failures_start;
}

static uint64_t recording_helper_failures(const Recording *rec) {
        return rec->stage_results.helper_failures + recording_unwind_helper_failures(rec);
}

/* Samples the kernel lost or the pump's spill dropped. */
static uint64_t recording_lost_samples(const Recording *rec) {
        SamplePumpStats st = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &st);
        return st.lost_samples;
}

/* Malformed records: those the rings' readers and the pump dropped. */
static uint64_t recording_bad_records(const Recording *rec) {
        SamplePumpStats st = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &st);
        return rec->bad_records + st.bad_records;
}

/* Per thread, what it did off the CPU (counted, short waits included):
 * `periscope.offcpu.stats` frames of one line per thread. */
static int recording_write_off_cpu_threads(Recording *rec, const OffCpuTracker *oc, int64_t now) {
        char buf[16384];
        size_t len = 0;
        for (size_t i = 0; i <= oc->allocated; i++) {
                const OffCpuThread *th = i < oc->allocated ? &oc->threads[i] : NULL;
                char line[320];
                int l = 0;
                if (th && th->tid != 0)
                        l = snprintf(line, sizeof(line),
                                     "thread=%u pid=%u blocked=%llu blocked_ns=%llu blocked_short=%llu "
                                     "blocked_short_ns=%llu runnable=%llu runnable_ns=%llu stacks=%llu\n",
                                     th->tid, th->pid, (unsigned long long) th->counts.blocked,
                                     (unsigned long long) th->counts.blocked_ns,
                                     (unsigned long long) th->counts.blocked_short,
                                     (unsigned long long) th->counts.blocked_short_ns,
                                     (unsigned long long) th->counts.runnable,
                                     (unsigned long long) th->counts.runnable_ns,
                                     (unsigned long long) th->counts.stacks);
                if (l < 0 || (size_t) l >= sizeof(line))
                        l = 0;
                if (len > 0 && (!th || len + (size_t) l > sizeof(buf))) {
                        int r = capture_writer_add_metadata(rec->writer, now, -1, -1, CAPTURE_OFF_CPU_STATS_ID, buf,
                                                            len);
                        if (r < 0)
                                return r;
                        len = 0;
                }
                memcpy(buf + len, line, (size_t) l);
                len += (size_t) l;
        }
        return 0;
}

static void recording_write_stats(Recording *rec) {
        char buf[3072];
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        const SampleUnwindStats *ust = &pst.unwind;
        int64_t now = now_monotonic_ns();
        /* The capture covers the sampling window, not the post-stop work:
         * a 3 s recording lasts 3 s, whatever symbolizing took after. */
        int64_t end = rec->sampling_end_time > 0 ? rec->sampling_end_time : now;
        size_t n_pids;
        (void) process_maps_get_pids(rec->maps, &n_pids);
        size_t n_addrs;
        (void) address_set_get_entries(rec->addresses, &n_addrs);
        int len =
                snprintf(buf, sizeof(buf),
                         "samples=%llu\nlost_samples=%llu\nbad_records=%llu\nprocesses=%zu\n"
                         "pinned_files=%zu\npin_failures=%llu\naddresses=%zu\nreason=%s\nduration_ns=%lld\n"
                         "unwind=%s\nkernel=%s\nunwound_samples=%llu\nunwound_frames=%llu\n"
                         "unwind_fp_frames=%llu\nunwind_ends=%llu\nunwind_stops_early=%llu\n"
                         "spilled_records=%llu\nhelper_failures=%llu\nunwind_helper_failures=%llu\n"
                         "user_addresses=%llu\nuser_addresses_named=%llu\n",
                         (unsigned long long) rec->samples, (unsigned long long) pst.lost_samples,
                         (unsigned long long) recording_bad_records(rec), n_pids, pinned_files_get_n(rec->pinned),
                         (unsigned long long) pinned_files_get_failures(rec->pinned), n_addrs,
                         recording_end_reason_to_string(rec->reason), (long long) (end - rec->start_time),
                         record_unwind_to_string(rec->options.unwind), rec->kernel ? "true" : "false",
                         (unsigned long long) ust->samples, (unsigned long long) ust->frames,
                         (unsigned long long) ust->fp_frames, (unsigned long long) ust->stops[UNWIND_STOP_END],
                         (unsigned long long) (ust->samples - ust->stops[UNWIND_STOP_END]),
                         (unsigned long long) pst.spilled_records, (unsigned long long) recording_helper_failures(rec),
                         (unsigned long long) recording_unwind_helper_failures(rec),
                         (unsigned long long) rec->stage_results.user_addresses,
                         (unsigned long long) rec->stage_results.user_named);
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
                                rec->budgets.max_addresses,
                                (unsigned long long) address_set_get_over_limit(rec->addresses),
                                (unsigned long long) rec->stage_results.helper_ms, rec->budgets.symbolize_ms,
                                rec->stage_results.helper_budget_spent ? "true" : "false");
        /* `container`: processes that joined it during the recording; whether
         * any was left at the last rescan (a stopped container). */
        if (rec->follow && len > 0 && (size_t) len < sizeof(buf)) {
                ContainerFollowStats st = container_follow_get_stats(rec->follow);
                len += snprintf(buf + len, sizeof(buf) - (size_t) len,
                                "container_joined=%u\ncontainer_refused=%u\ncontainer_failed=%u\n"
                                "container_processes_left=%u\ncontainer_stopped=%s\n",
                                st.joined, st.refused, st.failed, st.members, st.stopped ? "true" : "false");
        }
        /* The owner's budgets of perf events and followed threads
         * (docs/security.md): what this recording held, and the processes
         * left out once they were spent. */
        if (len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len,
                                "perf_events=%llu\nfollowed_threads=%llu\nnot_followed=%llu\n",
                                (unsigned long long) rec->n_events, (unsigned long long) rec->n_threads,
                                (unsigned long long) rec->threads_not_followed);
        /* Sysprof trace fds: frames merged, and refused (garbage, foreign
         * pids, times outside the recording). */
        TraceFdStats tst;
        recording_trace_get_stats(rec, &tst);
        if (tst.fds > 0 && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len,
                                "trace_fds=%llu\ntrace_frames=%llu\ntrace_frames_refused=%llu\n"
                                "trace_frames_skipped=%llu\n",
                                (unsigned long long) tst.fds, (unsigned long long) tst.frames_copied,
                                (unsigned long long) tst.frames_refused, (unsigned long long) tst.frames_skipped);
        /* What the post-stop stages could not finish (the service was
         * stopping): `periscope info` and `periscope record` say it. */
        char cut[64];
        if (rec->stage_results.cut && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len, "cut_short=%s\n",
                                recording_cut_to_string(rec->stage_results.cut, cut, sizeof cut));
        if ((rec->stage_results.cut & RECORDING_CUT_SYMBOLIZE) && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(buf + len, sizeof(buf) - (size_t) len, "names_missing=%s\nnames_cut_short=%llu\n",
                                rec->cut.why ? rec->cut.why : "cut short",
                                (unsigned long long) rec->stage_results.names_cut_short);
        /* Off-CPU (docs/off-cpu.md): what was written, counted only, and
         * how switches were sampled. */
        const OffCpuTracker *oc = rec->pump ? sample_pump_get_off_cpu(rec->pump) : NULL;
        if (oc && len > 0 && (size_t) len < sizeof(buf))
                len += snprintf(
                        buf + len, sizeof(buf) - (size_t) len,
                        "off_cpu=true\noff_cpu_min_ns=%llu\noff_cpu_switch_sample_hz=%u\n"
                        "off_cpu_blocked=%llu\noff_cpu_blocked_ns=%llu\noff_cpu_blocked_short=%llu\n"
                        "off_cpu_blocked_short_ns=%llu\noff_cpu_runnable=%llu\noff_cpu_runnable_ns=%llu\n"
                        "off_cpu_stacks=%llu\noff_cpu_switch_samples=%llu\noff_cpu_held_dropped=%llu\n"
                        "off_cpu_unpaired=%llu\noff_cpu_spanned_pause=%llu\noff_cpu_in_progress=%llu\n"
                        "off_cpu_pauses=%llu\n"
                        "off_cpu_paused_ns=%llu\noff_cpu_peak_switch_records_per_s=%llu\n"
                        "off_cpu_stack_pauses=%llu\noff_cpu_stacks_paused_ns=%llu\n"
                        "off_cpu_peak_switch_samples_per_s=%llu\noff_cpu_max_stack_period=%llu\n",
                        (unsigned long long) oc->min_ns, rec->options.frequency, (unsigned long long) oc->total.blocked,
                        (unsigned long long) oc->total.blocked_ns, (unsigned long long) oc->total.blocked_short,
                        (unsigned long long) oc->total.blocked_short_ns, (unsigned long long) oc->total.runnable,
                        (unsigned long long) oc->total.runnable_ns, (unsigned long long) oc->total.stacks,
                        (unsigned long long) oc->switch_samples, (unsigned long long) oc->held_dropped,
                        (unsigned long long) oc->unpaired, (unsigned long long) oc->spanned_pause,
                        (unsigned long long) oc->in_progress, (unsigned long long) rec->off_cpu_governor.records.pauses,
                        (unsigned long long) rec->off_cpu_governor.records.paused_ns,
                        (unsigned long long) rec->off_cpu_governor.records.peak_per_s,
                        (unsigned long long) rec->off_cpu_governor.stacks.pauses,
                        (unsigned long long) rec->off_cpu_governor.stacks.paused_ns,
                        (unsigned long long) rec->off_cpu_governor.stacks.peak_per_s,
                        (unsigned long long) rec->off_cpu_governor.max_stack_period);
        if (len > 0 && (size_t) len >= sizeof(buf))
                len = (int) sizeof(buf) - 1;
        int r = capture_writer_add_metadata(rec->writer, now, -1, -1, "periscope.stats", buf, (size_t) len);
        if (r < 0)
                recording_fail(rec, r, "writing the statistics failed: %m");
        if (oc && r >= 0) {
                r = recording_write_off_cpu_threads(rec, oc, now);
                if (r < 0)
                        recording_fail(rec, r, "writing the off-CPU statistics failed: %m");
        }
        capture_writer_set_end_time(rec->writer, end);
}

static void recording_finish(Recording *rec) {
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        recording_control_stop(rec);
        recording_write_stats(rec);
        recording_flush(rec);
        rec->state = RECORDING_STATE_FINISHED;
        /* Closed before the observer hears of it: a client acting on
         * Finished sees the capture complete. */
        rec->final_bytes = capture_writer_get_bytes(rec->writer);
        rec->writer = capture_writer_free(rec->writer);
        log_fields(LOG_INFO,
                   &(const LogFields){ .recording_id = rec->id,
                                       .has_uid = true,
                                       .uid = rec->owner_uid,
                                       .message_id = PERISCOPE_MESSAGE_RECORDING_FINISHED },
                   "finished (%s): %llu samples, %llu lost, %llu records spilled while the helper worked, "
                   "%llu slices of waiting samples unwound from the event loop",
                   recording_end_reason_to_string(rec->reason), (unsigned long long) rec->samples,
                   (unsigned long long) pst.lost_samples, (unsigned long long) pst.spilled_records,
                   (unsigned long long) pst.slices);
        if (rec->observer && rec->observer->finished)
                rec->observer->finished(rec, rec->observer_userdata);
}

/* A stage's progress, to the observer. */
static void recording_stage_progress(const char *stage, uint64_t done, uint64_t total, void *userdata) {
        Recording *rec = userdata;
        if (rec->observer && rec->observer->progress)
                rec->observer->progress(rec, stage, done, total, rec->observer_userdata);
}

static void recording_run_stages(Recording *rec);
static void recording_unwind_rest(Recording *rec, bool force);

/* Whether samples wait in the pump (spilled, or for unwind tables). */
static bool recording_samples_wait(const Recording *rec) {
        SamplePumpStats st = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &st);
        return st.waiting;
}

/* Ends the wait of recording_unwind_rest(): what waits is unwound now. */
static void recording_cancel_waiting(void *job) {
        Recording *rec = job;
        if (rec->cut.now && recording_samples_wait(rec))
                rec->stage_results.cut |= RECORDING_CUT_UNWIND_TABLES;
        recording_unwind_rest(rec, true);
}

/* The pump has more to hand on (the next slice, or unwind tables came):
 * while recording, a drain; stopped, the wait before the stages goes on. */
static void recording_pump_wake(void *userdata) {
        Recording *rec = userdata;
        if (rec->state == RECORDING_STATE_RECORDING) {
                recording_drain(rec, false);
                if (rec->error)
                        recording_end(rec, RECORDING_END_ERROR, rec->error, NULL);
        } else if (rec->awaiting_tables)
                recording_unwind_rest(rec, false);
}

/* A stage failed: a full disk under the symbol tables cuts the capture
 * short (even if a later flush finds room again); anything else is said. */
static void recording_stage_failed(Recording *rec, const RecordingStage *st, int r) {
        if (r == -ENOSPC || r == -EDQUOT || r == -EIO)
                recording_fail(rec, r, "writing the capture failed: %m");
        else if (r < 0)
                log_recording_errno(LOG_WARNING, rec->id, r, "stage %s failed: %m", st->name);
}

/* A stage that went on in the event loop is over: the next one runs. */
static void recording_stage_done(int result, void *userdata) {
        Recording *rec = userdata;
        rec->stage_job = (RecordingStageJob){};
        recording_stage_failed(rec, &recording_stages[rec->stage], result);
        rec->stage++;
        recording_run_stages(rec);
}

/* Runs the stages left (none when freed while recording), then finishes;
 * a stage going on in the event loop resumes this from its end. */
static void recording_run_stages(Recording *rec) {
        for (; rec->stage < recording_n_stages && !rec->stages_cancelled; rec->stage++) {
                const RecordingStage *st = &recording_stages[rec->stage];
                int r = st->run(&rec->stage_input, &rec->stage_results, recording_stage_progress, recording_stage_done,
                                rec, &rec->stage_job);
                if (r > 0)
                        return;
                recording_stage_failed(rec, st, r);
        }
        if (rec->stage < recording_n_stages)
                log_recording(LOG_INFO, rec->id, "the recording is going away: stage %s and those after it did not run",
                              recording_stages[rec->stage].name);
        recording_finish(rec);
}

/* Stopped with samples waiting for tables that compile (in the helper, off
 * the event loop): they are unwound as their tables come (the tables'
 * listener), and the stages run once none waits. Freed or cancelled
 * meanwhile (`force`): unwound at once, a table still compiling as none. */
static void recording_unwind_rest(Recording *rec, bool force) {
        if (force)
                rec->stage_job = (RecordingStageJob){};
        recording_drain(rec, force);
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        bool waiting = !rec->error && pst.waiting;
        if (waiting && !rec->awaiting_tables)
                rec->samples_before_wait = rec->samples;
        /* said when a table stopped the flush, not a slice's end */
        if (waiting && !pst.sliced && !rec->told_table_wait) {
                log_recording(LOG_INFO, rec->id, "%zu samples wait for unwind tables still compiling", pst.queued);
                rec->told_table_wait = true;
        }
        if (waiting || rec->awaiting_tables) {
                /* Progress: samples unwound since the wait began, of those
                 * and the ones still queued (the spill adds to them) */
                uint64_t unwound = rec->samples - rec->samples_before_wait;
                recording_stage_progress("unwind-tables", unwound, unwound + (waiting ? pst.queued : 0), rec);
        }
        rec->awaiting_tables = waiting;
        if (waiting) {
                /* a pseudo-stage: recording_cancel_stages() ends the wait */
                rec->stage_job = (RecordingStageJob){ .cancel = recording_cancel_waiting, .job = rec };
                return;
        }
        rec->stage_job = (RecordingStageJob){};
        recording_run_stages(rec);
}

static void recording_disarm(Recording *rec) {
        rec->tick = sd_event_source_disable_unref(rec->tick);
        for (size_t i = 0; i < rec->n_ring_sources; i++)
                rec->ring_sources[i] = sd_event_source_disable_unref(rec->ring_sources[i]);
        rec->duration_timer = sd_event_source_disable_unref(rec->duration_timer);
        rec->command_source = sd_event_source_disable_unref(rec->command_source);
        rec->command_pidfd = safe_close(rec->command_pidfd);
        for (size_t i = 0; i < rec->n_target_sources; i++)
                rec->target_sources[i] = sd_event_source_disable_unref(rec->target_sources[i]);
}

void recording_end(Recording *rec, RecordingEndReason reason, int error, const char *message) {
        if (rec->state != RECORDING_STATE_RECORDING)
                return;
        rec->state = RECORDING_STATE_STOPPING;
        rec->reason = error ? RECORDING_END_ERROR : reason;
        if (error && !rec->error && message)
                recording_fail(rec, error, "%s", message);
        else if (error && !rec->error)
                recording_fail(rec, error, "%m");
        recording_disarm(rec);
        rec->sampling_end_time = now_monotonic_ns();
        /* switch records paused by the governor: the waits still open are
         * of unknown length */
        bool switches_paused = rec->off_cpu_governor.records.paused;
        off_cpu_governor_end(&rec->off_cpu_governor, (uint64_t) rec->sampling_end_time);
        recording_attach_end(rec);
        if (rec->perf) {
                (void) perf_events_disable(rec->perf);
                recording_drain(rec, false);
                if (rec->options.off_cpu && rec->pump && !switches_paused && !rec->error) {
                        int r = sample_pump_end_off_cpu(rec->pump, (uint64_t) rec->sampling_end_time);
                        if (r < 0)
                                recording_fail(rec, r, "writing the waits still open at the end failed: %m");
                }
                rec->bad_records += perf_events_get_bad_records(rec->perf);
                rec->n_events = perf_events_get_n_events(rec->perf);
                perf_events_free(TAKE_PTR(rec->perf));
        }
        rec->n_threads = rec->thread_charge.amount;
        user_charge_release(&rec->ring_charge);
        user_charge_release(&rec->event_charge);
        user_charge_release(&rec->thread_charge);
        recording_describe_end(rec);
        if (rec->command_cmdline && rec->writer) /* the command never exec'd: named as it was */
                (void) capture_writer_add_process(rec->writer, rec->start_time, -1, rec->options.command_pid,
                                                  rec->command_cmdline);
        recording_control_close(rec); /* its rings are drained by the first stage */
        (void) jit_files_look_all(rec->jit_files, rec->maps, now_monotonic_ms(), true); /* the processes still alive */
        recording_flush(rec);
        rec->state = RECORDING_STATE_FINISHING;
        recording_publish(rec);
        rec->helper.time_budget_ms = rec->budgets.symbolize_ms;
        rec->stage_input = (RecordingStageInput){
                .event = rec->event,
                .recording_id = rec->id,
                .writer = rec->writer,
                .start_time = rec->start_time,
                .end_time = rec->sampling_end_time,
                .options = &rec->options,
                .kernel = rec->kernel,
                .maps = rec->maps,
                .pinned = rec->pinned,
                .jit_files = rec->jit_files,
                .addresses = rec->addresses,
                .resolver = rec->resolver,
                .helper = rec->helper,
                .control = rec->control,
                .cut = &rec->cut,
        };
        rec->stage_input.trace = recording_trace_merge_input(rec, &rec->stage_input.trace_merge);
        /* freed while recording: no waiting */
        recording_unwind_rest(rec, rec->stage >= recording_n_stages);
}

/* ---- start ---- */

/* PerfEventsConfig.reserve: the events of one more task (or the whole
 * system) against the owner's budgets of perf events and followed
 * threads; a refusal's message is kept in budget_message. */
static int recording_reserve_events(void *userdata, pid_t tid, size_t n_fds) {
        Recording *rec = userdata;
        int r;
        if (tid > 0 &&
            (r = user_charge_add(&rec->thread_charge, 1, rec->budget_message, sizeof(rec->budget_message))) < 0)
                return r;
        r = user_charge_add(&rec->event_charge, n_fds, rec->budget_message, sizeof(rec->budget_message));
        if (r < 0 && tid > 0)
                user_charge_sub(&rec->thread_charge, 1);
        return r;
}

/* The number of threads of pid now (0 when unknown). */
static uint64_t process_n_threads(pid_t pid) {
        char path[64], line[128];
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        unsigned long long n = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Threads: %llu", &n) == 1)
                        break;
        return n;
}

/* Whether pid's threads, as many as it has now, would fit the owner's
 * budgets: refused before thousands of events are opened only to be
 * closed again. 0, or -EDQUOT with the message in budget_message. */
static int recording_check_budget(Recording *rec, pid_t pid) {
        /* another's process (its pid reused): told nothing of it; the
         * attach refuses it */
        if (rec->check_owner && !process_owned_by(pid, rec->owner_uid))
                return 0;
        uint64_t n = process_n_threads(pid);
        int r = user_charge_check(&rec->thread_charge, n, rec->budget_message, sizeof(rec->budget_message));
        if (r >= 0)
                r = user_charge_check(&rec->event_charge, n * perf_events_fds_per_task(rec->perf), rec->budget_message,
                                      sizeof(rec->budget_message));
        return r;
}

/* Events on pid's threads; a caller on its own rights is checked again
 * here, with the process held, whatever the authorization saw before.
 * -EDQUOT: the owner's budget of events or threads is spent
 * (budget_message says which), what was opened of pid stays. */
static int recording_add_process_tasks(Recording *rec, pid_t pid, bool *ret_not_owner) {
        if (ret_not_owner)
                *ret_not_owner = false;
        int r = recording_check_budget(rec, pid);
        if (r < 0)
                return r;
        return process_attach_events(rec->perf, pid, rec->check_owner, rec->owner_uid, ret_not_owner);
}

/* A process (or threads of it) left out during the recording: the owner's
 * budget is spent. Logged once; counted in the capture's statistics. */
static void recording_not_followed(Recording *rec, pid_t pid, const char *what) {
        if (rec->threads_not_followed++ == 0)
                log_recording(LOG_WARNING, rec->id,
                              "%s %d: not followed, nor any new thread or process from now on: %s", what, (int) pid,
                              rec->budget_message);
}

/* A refusal of perf_event_open, with its cause (perf-diagnose.h), as the
 * process that opened it (the perf opener, or periscoped) saw it. */
static int perf_error(const Recording *rec, RecordingError *error, int r, const char *what) {
        char why[640];
        /* off-CPU's context-switches event counts in kernel mode only
         * (docs/off-cpu.md): without the perf opener's capabilities it is
         * refused where CPU sampling of one's own processes is not */
        const char *off_cpu = rec->options.off_cpu && (r == -EACCES || r == -EPERM)
                                      ? " (off-CPU profiles need the context-switches event, counted in the kernel: "
                                        "an unprivileged periscoped cannot open it at perf_event_paranoid >= 2; use "
                                        "the system service, or record without off-CPU)"
                                      : "";
        return recording_error(error, PERISCOPE_ERROR_PERF_FAILED, "perf_event_open for %s failed%s: %s", what, off_cpu,
                               perf_open_error_hint(rec->perf_opener, r, why, sizeof(why)));
}

static int recording_arm_perf(Recording *rec, RecordingError *error) {
        PerfEventsConfig cfg = {
                .frequency = rec->options.frequency,
                .kernel = rec->kernel,
                .sample_type =
                        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN,
                .opener = rec->perf_opener,
                .wait = rec->perf_wait,
                .wait_userdata = rec->perf_wait_userdata,
                .reserve = recording_reserve_events,
                .reserve_userdata = rec,
        };
        user_charge_init(&rec->event_charge, rec->limits, rec->owner_uid, USER_RESOURCE_PERF_EVENTS);
        user_charge_init(&rec->thread_charge, rec->limits, rec->owner_uid, USER_RESOURCE_THREADS);
        if (rec->options.unwind != RECORD_UNWIND_FP) {
                /* DWARF user stacks (docs/unwinding.md): registers and a copy of
                 * the stack; the kernel keeps only its own part of the callchain.
                 * Bigger rings (4 MiB per CPU) hold ~16 KiB samples while a
                 * table is being compiled. */
                cfg.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                cfg.sample_regs_user = SAMPLE_UNWIND_REGS_MASK;
                cfg.sample_stack_user = rec->options.stack_size;
                cfg.exclude_callchain_user = true;
                cfg.ring_pages = 1024;
        } else if (SAMPLE_UNWIND_FP_NEEDS_REGS) {
                /* aarch64: LR and what finds the leaf's row, for the leaf's
                 * caller the frame-pointer chain skips (sample-stack.h) */
                cfg.sample_type |= PERF_SAMPLE_REGS_USER;
                cfg.sample_regs_user = SAMPLE_UNWIND_REGS_MASK;
        }
        if (rec->options.off_cpu) {
                /* docs/off-cpu.md: a context-switches event beside each
                 * sampling one; its samples told apart by their id */
                cfg.off_cpu = true;
                cfg.sample_type |= PERF_SAMPLE_IDENTIFIER;
                /* a tick of switch records (OFF_CPU_BUDGET_RECORDS_PER_S,
                 * and more before the governor looks) fits a ring */
                if (cfg.ring_pages < 512)
                        cfg.ring_pages = 512;
        }
        SamplePumpSetup pump = {
                .event = rec->event,
                .layout = { .sample_type = cfg.sample_type, .sample_regs_user = cfg.sample_regs_user },
                .unwind = rec->options.unwind,
                .tables = rec->unwind_tables,
                .owner = (uint32_t) rec->owner_uid,
                .maps = rec->maps,
                .kernel = rec->kernel,
                .prepare_tables = !rec->options.system,
                .off_cpu = rec->options.off_cpu,
                .off_cpu_min_ns = rec->options.off_cpu_min_ns,
                .sink = &recording_sink,
                .userdata = rec,
        };
        int r = sample_pump_new(&pump, &rec->pump);
        if (r < 0)
                return r;
        r = perf_events_new(&cfg, &rec->perf);
        if (r < 0)
                return perf_error(rec, error, r, "this recording");
        /* The rings are locked by root: count them against the owner. */
        user_charge_init(&rec->ring_charge, rec->limits, rec->owner_uid, USER_RESOURCE_LOCKED_MEMORY);
        r = user_charge_add(&rec->ring_charge, perf_events_get_max_ring_bytes(rec->perf), error->message,
                            sizeof(error->message));
        if (r < 0) {
                error->name = periscope_error_from_errno(r);
                return r;
        }
        if (rec->options.system) {
                r = perf_events_add_system(rec->perf);
                if (r == -EDQUOT)
                        return recording_error(error, PERISCOPE_ERROR_LIMIT_EXCEEDED, "the whole system: %s",
                                               rec->budget_message);
                if (r < 0)
                        return perf_error(rec, error, r, "the whole system");
        }
        for (size_t i = 0; i <= rec->options.n_pids && !rec->options.system; i++) {
                pid_t pid = i < rec->options.n_pids ? rec->options.pids[i] : rec->options.command_pid;
                if (pid <= 0)
                        continue;
                bool not_owner;
                r = recording_add_process_tasks(rec, pid, &not_owner);
                /* A container's short-lived process may be gone already (its
                 * pid perhaps another process's now): fine. */
                if ((r == -ESRCH || not_owner) && i >= rec->options.n_given_pids && i < rec->options.n_pids)
                        continue;
                if (r == -ESRCH)
                        return recording_error(error, periscope_error_from_errno(r),
                                               "process %d exited before recording started", (int) pid);
                if (r == -EDQUOT)
                        return recording_error(error, PERISCOPE_ERROR_LIMIT_EXCEEDED, "process %d: %s", (int) pid,
                                               rec->budget_message);
                /* The authorization saw it the caller's: it is another
                 * process now, or its owner changed (setuid). */
                if (not_owner)
                        return recording_error(error, periscope_error_from_errno(r),
                                               "process %d is not yours (any more: did it exit and its pid go to "
                                               "another process, or did it change its uid?); pass the pid of a "
                                               "process of yours",
                                               (int) pid);
                if (r < 0) {
                        char what[64];
                        snprintf(what, sizeof(what), "process %d", (int) pid);
                        return perf_error(rec, error, r, what);
                }
        }
        /* off-CPU events start when the start work is done (the snapshot
         * keeps the loop busy: a switch storm meanwhile would fill the
         * rings) */
        if (rec->options.off_cpu)
                (void) perf_events_pause_switches(rec->perf, PERF_EVENTS_SWITCH_RECORDS | PERF_EVENTS_SWITCH_STACKS,
                                                  true);
        r = perf_events_enable(rec->perf);
        if (r < 0)
                return perf_error(rec, error, r, "enabling the events");
        return 0;
}

/* `container`: processes that join it later are found by rescans; the
 * targets found now have their events already. */
static int recording_follow_start(Recording *rec) {
        if (!rec->options.container)
                return 0;
        int r = container_follow_new(rec->options.container, &rec->follow);
        if (r < 0)
                return r;
        /* A caller recording on its own rights: its own containers and apps
         * only, as the start picked them (others' would be refused anyway). */
        if (rec->check_owner)
                container_follow_set_owner(rec->follow, rec->owner_uid);
        for (size_t i = 0; i <= rec->options.n_pids; i++) {
                pid_t pid = i < rec->options.n_pids ? rec->options.pids[i] : rec->options.command_pid;
                if (pid > 0 && (r = container_follow_note_recorded(rec->follow, pid)) < 0)
                        return r;
        }
        return 0;
}

/* The rings run while the snapshot reads /proc: keep them from overflowing. */
static void spill_between(void *userdata) {
        recording_spill_rings(userdata);
}

static int recording_snapshot(Recording *rec) {
        int r;
        if (rec->options.system) {
                r = process_frames_write_all(rec->writer, rec->maps, rec->pinned, rec->start_time, rec->thread_names,
                                             spill_between, rec);
                return r < 0 ? r : 0;
        }
        for (size_t i = 0; i <= rec->options.n_pids; i++) {
                pid_t pid = i < rec->options.n_pids ? rec->options.pids[i] : rec->options.command_pid;
                if (pid <= 0)
                        continue;
                /* The command (periscope record's child, held before its
                 * exec) still runs our client's program: its PROCESS frame
                 * comes with its exec, or at the end if it never execs. */
                bool held = i == rec->options.n_pids;
                r = process_frames_write(rec->writer, rec->maps, rec->pinned, rec->start_time, pid,
                                         recording_frames_owner(rec), held ? &rec->command_cmdline : NULL);
                /* the command's name comes with its exec */
                if (r >= 0 && !held)
                        r = process_frames_write_threads(rec->writer, rec->thread_names, rec->start_time, pid);
                if (r < 0 && r != -ESRCH)
                        return r;
        }
        return 0;
}

/* Polls every ring that exists and is not polled yet (a CPU's ring appears
 * with its first event: at start, or when a process joins a container that
 * had none). */
static int recording_watch_rings(Recording *rec) {
        size_t n = perf_events_get_n_rings(rec->perf);
        if (!rec->ring_sources) {
                rec->ring_sources = calloc(n, sizeof(sd_event_source *));
                if (!rec->ring_sources)
                        return -ENOMEM;
                rec->n_ring_sources = n;
        }
        for (size_t i = 0; i < n && i < rec->n_ring_sources; i++) {
                int fd = perf_events_get_ring_fd(rec->perf, i);
                if (fd < 0 || rec->ring_sources[i])
                        continue;
                int r = sd_event_add_io(rec->event, &rec->ring_sources[i], fd, EPOLLIN, on_ring, rec);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int recording_add_sources(Recording *rec) {
        sd_event *e = rec->event;
        int r = sd_event_add_time_relative(e, &rec->tick, CLOCK_MONOTONIC, RECORDING_TICK_USEC, 10 * 1000, on_tick,
                                           rec);
        if (r < 0)
                return r;
        r = recording_watch_rings(rec);
        if (r < 0)
                return r;
        if (rec->options.duration_ms) {
                r = sd_event_add_time_relative(e, &rec->duration_timer, CLOCK_MONOTONIC,
                                               rec->options.duration_ms * 1000ull, 1000, on_duration, rec);
                if (r < 0)
                        return r;
        }
        if (rec->options.command_pid > 0) {
                long fd = syscall(SYS_pidfd_open, rec->options.command_pid, 0);
                if (fd < 0)
                        return -errno;
                rec->command_pidfd = (int) fd;
                r = sd_event_add_io(e, &rec->command_source, rec->command_pidfd, EPOLLIN, on_command_exit, rec);
                if (r < 0)
                        return r;
        }
        return recording_watch_targets(rec);
}

int recording_start(const RecordingSetup *setup, RecordOptions *options, int capture_fd, Recording **ret,
                    RecordingError *error) {
        assert(setup && setup->event && options && ret && error);
        *error = (RecordingError) {};
        int r;
        Recording *rec = calloc(1, sizeof(Recording));
        if (!rec)
                return -ENOMEM;
        rec->id = setup->id;
        rec->owner_uid = setup->owner_uid;
        rec->kernel = setup->kernel;
        rec->check_owner = setup->check_owner;
        rec->limits = setup->limits;
        rec->event = sd_event_ref(setup->event);
        rec->unwind_tables = setup->unwind_tables;
        if (rec->unwind_tables)
                rec->unwind_helper_failures_start = unwind_tables_get_stats(rec->unwind_tables).helper_failures;
        rec->helper = setup->helper;
        rec->helper.owner = setup->owner_uid; /* its helpers parse the owner's files, named so in the log */
        rec->budgets = setup->budgets;
        rec->perf_opener = setup->perf_opener;
        rec->perf_wait = setup->perf_wait;
        rec->perf_wait_userdata = setup->perf_wait_userdata;
        if (rec->budgets.max_addresses == 0)
                rec->budgets.max_addresses = RECORDING_DEFAULT_MAX_ADDRESSES;
        if (rec->budgets.symbolize_ms == 0)
                rec->budgets.symbolize_ms = RECORDING_DEFAULT_SYMBOLIZE_MS;
        rec->observer = setup->observer;
        rec->observer_userdata = setup->observer_userdata;
        rec->options = *options;
        *options = (RecordOptions) {};
        rec->command_pidfd = -1;
        rec->start_time = now_monotonic_ns();
        if (rec->options.kernel == 0)
                rec->kernel = false;

        if ((r = process_maps_new(&rec->maps)) < 0 || (r = thread_table_new(&rec->thread_names)) < 0 ||
            (r = pinned_files_new(setup->max_pinned_files, &rec->pinned)) < 0 ||
            (r = jit_files_new(setup->max_pinned_files / 4 + 1, &rec->jit_files)) < 0 ||
            (r = address_set_new(&rec->addresses)) < 0 ||
            (r = recording_resolver_new(setup->user_file_helper, &rec->resolver)) < 0)
                goto fail;
        address_set_set_limit(rec->addresses, rec->budgets.max_addresses);
        pinned_files_set_resolver(rec->pinned, rec->resolver);
        jit_files_set_resolver(rec->jit_files, rec->resolver);
        if (rec->check_owner) {
                jit_files_set_owner(rec->jit_files, rec->owner_uid);
                pinned_files_set_owner(rec->pinned, rec->owner_uid);
        }
        /* A caller other than root: what it names is opened with its rights
         * (debug files, pins by path; docs/security.md). */
        if (geteuid() == 0 && rec->owner_uid != 0) {
                r = caller_opener_new(rec->owner_uid, &rec->as_caller);
                if (r < 0) {
                        recording_error(error, PERISCOPE_ERROR_FAILED,
                                        "cannot open files with the rights of uid %u: %s (periscoped needs "
                                        "CAP_SETUID and CAP_SETGID for that)",
                                        (unsigned) rec->owner_uid, strerror(-r));
                        goto fail;
                }
                resolver_set_caller_opener(rec->resolver, rec->as_caller);
        }
        r = capture_writer_new_fd(capture_fd, rec->start_time, &rec->writer);
        if (r < 0) {
                recording_error(error, PERISCOPE_ERROR_INVALID_CAPTURE, "cannot write the capture: %s", strerror(-r));
                goto fail;
        }
        /* the architecture the addresses belong to (docs/capture-format.md) */
        r = capture_writer_add_machine(rec->writer, rec->start_time);
        if (r < 0) {
                recording_error(error, PERISCOPE_ERROR_INVALID_CAPTURE, "cannot write the capture: %s", strerror(-r));
                goto fail;
        }
        r = recording_arm_perf(rec, error);
        if (r < 0)
                goto fail;
        /* later events (processes joining a container, an exec) are
         * opened on the attach fiber: the start's is done with them */
        rec->perf_wait = NULL;
        perf_events_set_wait(rec->perf, NULL, NULL);
        r = recording_follow_start(rec);
        if (r < 0)
                goto fail;
        int64_t snapshot_start = now_monotonic_ns();
        r = recording_snapshot(rec);
        if (r < 0) {
                recording_error(error, PERISCOPE_ERROR_FAILED, "taking the process snapshot failed: %s", strerror(-r));
                goto fail;
        }
        /* the tables of what runs already compile before samples need them */
        sample_pump_prepare_all(rec->pump);
        if (rec->options.off_cpu) {
                r = perf_events_pause_switches(rec->perf, PERF_EVENTS_SWITCH_RECORDS, false);
                if (r < 0) {
                        perf_error(rec, error, r, "the off-CPU events");
                        goto fail;
                }
                uint64_t now = (uint64_t) now_monotonic_ns();
                sample_pump_off_cpu_resumed(rec->pump, now);
                off_cpu_governor_start(&rec->off_cpu_governor, rec->options.system, now);
        }
        size_t n_snapshot = 0;
        (void) process_maps_get_pids(rec->maps, &n_snapshot);
        log_recording(LOG_INFO, rec->id, "snapshot of %zu processes in %lld ms", n_snapshot,
                      (long long) ((now_monotonic_ns() - snapshot_start) / 1000000));
        r = capture_writer_flush(rec->writer);
        if (r < 0) {
                recording_error(error, PERISCOPE_ERROR_INVALID_CAPTURE, "cannot write the capture: %s", strerror(-r));
                goto fail;
        }
        r = recording_control_start(rec, error);
        if (r < 0)
                goto fail;
        r = recording_add_sources(rec);
        if (r < 0)
                goto fail;
        log_fields(LOG_INFO,
                   &(const LogFields){ .recording_id = rec->id,
                                       .has_uid = true,
                                       .uid = rec->owner_uid,
                                       .message_id = PERISCOPE_MESSAGE_RECORDING_STARTED },
                   "started for uid %u (%s)", (unsigned) rec->owner_uid, rec->options.system ? "system" : "processes");
        if (rec->options.container_waiting)
                log_recording(LOG_INFO, rec->id,
                              "container '%s' does not run now; its processes are added when it starts",
                              rec->options.container);
        *ret = rec;
        return 0;
fail:
        if (!error->name)
                recording_error(error, PERISCOPE_ERROR_FAILED, "starting the recording failed: %s", strerror(-r));
        rec->observer = NULL; /* it never started: nothing to tell */
        rec->state = RECORDING_STATE_FINISHED;
        recording_free(rec);
        return r < 0 ? r : -EIO;
}

void recording_cancel_stages(Recording *rec) {
        /* the next ones do not start (nor any after the wait for unwind tables) */
        rec->stages_cancelled = true;
        if (rec->stage_job.cancel)
                rec->stage_job.cancel(rec->stage_job.job);
}

void recording_cut_short(Recording *rec, const char *why, bool now) {
        if (rec->state == RECORDING_STATE_FINISHED || rec->cut.now)
                return;
        if (!rec->cut.why)
                rec->cut.why = why;
        if (!now) {
                log_recording(LOG_INFO, rec->id, "post-stop stages %s soon: symbolizing no more files", rec->cut.why);
                return;
        }
        rec->cut.now = true;
        log_recording(LOG_INFO, rec->id, "post-stop stages %s: finishing the capture now", rec->cut.why);
        /* the stage under way ends (its done() runs the rest, which see cut.now) */
        if (rec->stage_job.cancel)
                rec->stage_job.cancel(rec->stage_job.job);
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

Recording *recording_free(Recording *rec) {
        if (!rec)
                return NULL;
        if (rec->state == RECORDING_STATE_RECORDING) {
                /* Freed while recording (service exiting): finalize without stages. */
                rec->stage = recording_n_stages;
                recording_end(rec, RECORDING_END_SHUTDOWN, 0, NULL);
        }
        if (rec->describe_fiber)
                fiber_cancel(rec->describe_fiber);
        recording_attach_end(rec);
        free(rec->attach_execs);
        helper_client_free(rec->describe_helper);
        /* Freed while finishing: the capture is still closed. */
        recording_cancel_stages(rec);
        recording_disarm(rec);
        recording_control_free(rec);
        trace_fds_free(rec->trace);
        perf_events_free(rec->perf);
        user_charge_release(&rec->ring_charge);
        user_charge_release(&rec->event_charge);
        user_charge_release(&rec->thread_charge);
        capture_writer_free(rec->writer);
        free(rec->target_sources);
        rec->pump = sample_pump_free(rec->pump);
        container_follow_free(rec->follow);
        process_maps_free(rec->maps);
        thread_table_free(rec->thread_names);
        pinned_files_free(rec->pinned);
        jit_files_free(rec->jit_files);
        resolver_free(rec->resolver);
        caller_opener_free(rec->as_caller);
        address_set_free(rec->addresses);
        record_options_done(&rec->options);
        sd_event_unref(rec->event);
        free(rec->ring_sources);
        free(rec->error_message);
        free(rec->command_cmdline);
        free(rec);
        return NULL;
}

bool recording_outlives_client(const Recording *rec) {
        return rec->options.duration_ms > 0 || rec->options.command_pid > 0;
}

void recording_get_stats(const Recording *rec, RecordingStats *ret) {
        size_t n_pids = 0;
        (void) process_maps_get_pids(rec->maps, &n_pids);
        ContainerFollowStats st = rec->follow ? container_follow_get_stats(rec->follow) : (ContainerFollowStats){};
        *ret = (RecordingStats){
                .state = rec->state,
                .reason = rec->reason,
                .error_message = rec->error == 0      ? NULL
                                 : rec->error_message ? rec->error_message
                                                      : strerror(-rec->error),
                .samples = rec->samples,
                .duration_ns = (uint64_t) ((rec->sampling_end_time > 0 ? rec->sampling_end_time : now_monotonic_ns()) -
                                           rec->start_time),
                .lost_samples = recording_lost_samples(rec),
                .bad_records = recording_bad_records(rec),
                .helper_failures = recording_helper_failures(rec),
                .unwind_helper_failures = recording_unwind_helper_failures(rec),
                .user_addresses = rec->stage_results.user_addresses,
                .user_named = rec->stage_results.user_named,
                .addresses_over_budget = address_set_get_over_limit(rec->addresses),
                .helper_budget_spent = rec->stage_results.helper_budget_spent,
                .bytes = rec->writer ? capture_writer_get_bytes(rec->writer) : rec->final_bytes,
                .processes = n_pids,
                .pinned_files = pinned_files_get_n(rec->pinned),
                .follows_container = rec->follow != NULL,
                .joined_processes = st.joined,
                .container_stopped = st.stopped,
        };
        const OffCpuTracker *oc = rec->pump ? sample_pump_get_off_cpu(rec->pump) : NULL;
        if (oc) {
                ret->off_cpu = true;
                ret->off_cpu_waits = oc->total.blocked;
                ret->off_cpu_blocked_ns = oc->total.blocked_ns;
                ret->off_cpu_stacks = oc->total.stacks;
                ret->off_cpu_short = oc->total.blocked_short;
                ret->off_cpu_paused_ns = rec->off_cpu_governor.records.paused_ns;
                ret->off_cpu_stacks_paused_ns = rec->off_cpu_governor.stacks.paused_ns;
        }
        TraceFdStats tst;
        recording_trace_get_stats(rec, &tst);
        ret->trace_fds = tst.fds;
        ret->trace_frames = tst.frames_copied;
        ret->trace_frames_refused = tst.frames_refused;
        ret->cut = rec->stage_results.cut;
        ret->cut_short = rec->cut.why;
        ret->names_cut_short = rec->stage_results.names_cut_short;
}

int64_t recording_get_start_time(const Recording *rec) {
        return rec->start_time;
}
