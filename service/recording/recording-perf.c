/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-perf.c: a recording's perf events, the tables they fill, the
 * snapshot of what runs when they start, and the rings' event sources. */
#include "recording-private.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "protocol.h"

uid_t recording_frames_owner(const Recording *rec) {
        return rec->check_owner ? rec->owner_uid : PROCESS_FRAMES_ANY_OWNER;
}

int recording_start_error(const char **ret_name, char **ret_why, int r, const char *name, const char *fmt, ...) {
        va_list ap;
        errno = r < 0 ? -r : r; /* for %m */
        va_start(ap, fmt);
        if (vasprintf(ret_why, fmt, ap) < 0)
                *ret_why = NULL;
        va_end(ap);
        *ret_name = name;
        return r;
}

/* A refusal of perf_event_open, with its cause (perf-diagnose.h), as the
 * process that opened it (the perf opener, or periscoped) saw it. */
int recording_perf_error(const Recording *rec, const char **ret_name, char **ret_why, int r, const char *what) {
        char why[640];
        /* off-CPU's context-switches event counts in kernel mode only
         * (docs/off-cpu.md): without the perf opener's capabilities it is
         * refused where CPU sampling of one's own processes is not */
        const char *off_cpu = rec->options.off_cpu && (r == -EACCES || r == -EPERM)
                                      ? " (off-CPU profiles need the context-switches event, counted in the kernel: "
                                        "an unprivileged periscoped cannot open it at perf_event_paranoid >= 2; use "
                                        "the system service, or record without off-CPU)"
                                      : "";
        return recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_PERF_FAILED,
                                     "perf_event_open for %s failed%s: %s", what, off_cpu,
                                     perf_open_error_hint(rec->perf_opener, r, why, sizeof(why)));
}

/* The events of the processes given (and the command), or of the whole system. */
static int recording_add_targets(Recording *rec, const char **ret_name, char **ret_why) {
        int r;
        if (rec->options.system) {
                r = perf_events_add_system(rec->perf);
                if (r == -EDQUOT)
                        return recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_LIMIT_EXCEEDED,
                                                     "the whole system: %s", rec->budget_message);
                if (r < 0)
                        return recording_perf_error(rec, ret_name, ret_why, r, "the whole system");
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
                        return recording_start_error(ret_name, ret_why, r, periscope_error_from_errno(r),
                                                     "process %d exited before recording started", (int) pid);
                if (r == -EDQUOT)
                        return recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_LIMIT_EXCEEDED,
                                                     "process %d: %s", (int) pid, rec->budget_message);
                /* The authorization saw it the caller's: it is another
                 * process now, or its owner changed (setuid). */
                if (not_owner)
                        return recording_start_error(ret_name, ret_why, r < 0 ? r : -EPERM,
                                                     periscope_error_from_errno(r),
                                                     "process %d is not yours (any more: did it exit and its pid go to "
                                                     "another process, or did it change its uid?); pass the pid of a "
                                                     "process of yours",
                                                     (int) pid);
                if (r < 0) {
                        char what[64];
                        snprintf(what, sizeof(what), "process %d", (int) pid);
                        return recording_perf_error(rec, ret_name, ret_why, r, what);
                }
        }
        return 0;
}

int recording_arm_perf(Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        cfg->frequency = rec->options.frequency;
        cfg->kernel = rec->kernel;
        cfg->sample_type |=
                PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
        cfg->opener = rec->perf_opener;
        cfg->wait = rec->perf_wait;
        cfg->wait_userdata = rec->perf_wait_userdata;
        if (rec->options.unwind != RECORD_UNWIND_FP) {
                /* DWARF user stacks (docs/unwinding.md): registers and a copy of
                 * the stack; the kernel keeps only its own part of the callchain.
                 * Bigger rings (4 MiB per CPU) hold ~16 KiB samples while a
                 * table is being compiled. */
                cfg->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                cfg->sample_regs_user = SAMPLE_UNWIND_REGS_MASK;
                cfg->sample_stack_user = rec->options.stack_size;
                cfg->exclude_callchain_user = true;
                if (cfg->ring_pages < 1024)
                        cfg->ring_pages = 1024;
        } else if (SAMPLE_UNWIND_FP_NEEDS_REGS) {
                /* aarch64: LR and what finds the leaf's row, for the leaf's
                 * caller the frame-pointer chain skips (sample-stack.h) */
                cfg->sample_type |= PERF_SAMPLE_REGS_USER;
                cfg->sample_regs_user = SAMPLE_UNWIND_REGS_MASK;
        }
        SamplePumpSetup pump = {
                .event = rec->event,
                .layout = { .sample_type = cfg->sample_type, .sample_regs_user = cfg->sample_regs_user },
                .unwind = rec->options.unwind,
                .tables = rec->unwind_tables,
                .owner = (uint32_t) rec->owner_uid,
                .maps = rec->maps,
                .kernel = rec->kernel,
                .prepare_tables = !rec->options.system,
                .off_cpu = cfg->off_cpu,
                .off_cpu_min_ns = rec->options.off_cpu_min_ns,
                .sink = &recording_sink,
                .userdata = rec,
        };
        int r = sample_pump_new(&pump, &rec->pump);
        if (r < 0)
                return r;
        r = perf_events_new(cfg, &rec->perf);
        if (r < 0)
                return recording_perf_error(rec, ret_name, ret_why, r, "this recording");
        /* The rings are locked by root: count them against the owner. */
        char why[512];
        user_charge_init(&rec->ring_charge, rec->limits, rec->owner_uid, USER_RESOURCE_LOCKED_MEMORY);
        r = user_charge_add(&rec->ring_charge, perf_events_get_max_ring_bytes(rec->perf), why, sizeof(why));
        if (r < 0)
                return recording_start_error(ret_name, ret_why, r, periscope_error_from_errno(r), "%s", why);
        r = recording_add_targets(rec, ret_name, ret_why);
        if (r < 0)
                return r;
        /* off-CPU events start when the start work is done, by their part
         * (the snapshot keeps the loop busy: a switch storm meanwhile
         * would fill the rings) */
        if (cfg->off_cpu)
                (void) perf_events_pause_switches(rec->perf, PERF_EVENTS_SWITCH_RECORDS | PERF_EVENTS_SWITCH_STACKS,
                                                  true);
        r = perf_events_enable(rec->perf);
        if (r < 0)
                return recording_perf_error(rec, ret_name, ret_why, r, "enabling the events");
        return 0;
}

/* The rings run while the snapshot reads /proc: keep them from overflowing. */
static void spill_between(void *userdata) {
        recording_spill_rings(userdata);
}

int recording_snapshot(Recording *rec) {
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

/* Polls every ring that exists and is not polled yet (a CPU's ring appears
 * with its first event: at start, or when a process joins a container that
 * had none). */
int recording_watch_rings(Recording *rec) {
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

/* What every recording holds, whatever its parts: process tables, pins,
 * JIT files, addresses, a resolver whose users' files are parsed on the
 * describe part's fiber, and the caller's rights to open files with. */
int recording_new_tables(Recording *rec, const RecordingSetup *setup, const char **ret_name, char **ret_why) {
        int r;
        if ((r = process_maps_new(&rec->maps)) < 0 || (r = thread_table_new(&rec->thread_names)) < 0 ||
            (r = pinned_files_new(setup->max_pinned_files, &rec->pinned)) < 0 ||
            (r = jit_files_new(setup->max_pinned_files / 4 + 1, &rec->jit_files)) < 0 ||
            (r = address_set_new(&rec->addresses)) < 0 ||
            (r = daemon_resolver_new(setup->user_file_helper, &rec->resolver)) < 0)
                return r;
        resolver_set_defer_user_files(rec->resolver, true);
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
                        return recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_FAILED,
                                                     "cannot open files with the rights of uid %u: %m (periscoped "
                                                     "needs CAP_SETUID and CAP_SETGID for that)",
                                                     (unsigned) rec->owner_uid);
                }
                resolver_set_caller_opener(rec->resolver, rec->as_caller);
        }
        return 0;
}
