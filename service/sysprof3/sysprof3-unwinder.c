/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-unwinder.c: org.gnome.Sysprof3.Unwinder at
 * /org/gnome/Sysprof3/Unwinder: Unwind(u stack_size, a(hi) perf_fds,
 * h event_fd, h capture_fd) as Sysprof 48 calls it, served by
 * live-unwind.c. Only events this service opened for the same caller are
 * taken: their records are known to hold only what that caller may see. */
#include "sysprof3-unwinder.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "basic.h"
#include "bus.h"
#include "protocol.h"
#include "live-unwind.h"
#include "sysprof3-state.h"

/* Perf events one session may take (one per CPU and a few per process). */
#define UNWIND_MAX_PERF_FDS 4096
/* Sessions at once, root's included: each holds rings of locked memory and
 * the event loop's time. A non-root user's sessions count as recordings
 * and their rings as locked memory against the per-user limits
 * (user-limits.h, --max-recordings-per-user, --max-locked-memory-per-user). */
#define UNWIND_MAX_SESSIONS 32

/* What the fd is, from its /proc/self/fd link ("anon_inode:[perf_event]"). */
static bool fd_is_anon_inode(int fd, const char *kind) {
        char path[64], target[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return false;
        target[n] = '\0';
        return strncmp(target, "anon_inode:", 11) == 0 && strcmp(target + 11, kind) == 0;
}

/* Ends a session (or one that did not start): what it held goes back. */
static void unwind_session_done(UnwindSession *session) {
        session->live = live_unwind_free(session->live);
        session->client = sd_bus_track_unref(session->client);
        user_charge_release(&session->rings);
        user_charge_release(&session->recording);
}

/* Ends session i of the list. */
static void session_end(Sysprof3 *s, size_t i) {
        UnwindSession session = s->unwinds[i];
        memmove(s->unwinds + i, s->unwinds + i + 1, (s->n_unwinds - i - 1) * sizeof(UnwindSession));
        s->n_unwinds--;
        unwind_session_done(&session);
}

static void on_session_end(LiveUnwind *u, void *userdata) {
        Sysprof3 *s = userdata;
        for (size_t i = 0; i < s->n_unwinds; i++)
                if (s->unwinds[i].live == u) {
                        session_end(s, i);
                        return;
                }
        live_unwind_free(u);
}

/* The caller left the bus (exited, was killed): nobody reads the capture. */
static int on_client_gone(sd_bus_track *track, void *userdata) {
        Sysprof3 *s = userdata;
        for (size_t i = 0; i < s->n_unwinds; i++)
                if (s->unwinds[i].client == track) {
                        log_info("sysprof3: unwind session of uid %u ended: its client left the bus",
                                 (unsigned) live_unwind_get_uid(s->unwinds[i].live));
                        session_end(s, i);
                        break;
                }
        return 0;
}

void sysprof3_unwinder_end_all(Sysprof3 *s) {
        while (s->n_unwinds > 0)
                session_end(s, s->n_unwinds - 1);
}

/* Charges a new session of caller to its user's limits: one recording
 * and the rings the daemon will map. Past a limit: LimitExceeded naming it. */
static int session_charge(Sysprof3 *s, const Caller *caller, const int *cpus, size_t n, UnwindSession *session,
                          sd_bus_error *error) {
        char why[512];
        user_charge_init(&session->recording, s->mgr->limits, caller->uid, USER_RESOURCE_RECORDINGS);
        user_charge_init(&session->rings, s->mgr->limits, caller->uid, USER_RESOURCE_LOCKED_MEMORY);
        int r = user_charge_add(&session->recording, 1, why, sizeof(why));
        if (r >= 0)
                r = user_charge_add(&session->rings, live_unwind_ring_bytes(cpus, n), why, sizeof(why));
        if (r >= 0)
                return 0;
        user_charge_release(&session->recording);
        return sd_bus_error_setf(error, periscope_error_from_errno(r), "no unwind session: %s", why);
}


typedef struct UnwindArgs {
        int perf_fds[UNWIND_MAX_PERF_FDS];   /* dup'ed, ours */
        int cpus[UNWIND_MAX_PERF_FDS];
        int32_t pids[UNWIND_MAX_PERF_FDS];
        size_t n, n_pids;
        const OpenedEvent *first;
        bool system;
} UnwindArgs;

static void unwind_args_done(UnwindArgs *a) {
        for (size_t i = 0; i < a->n; i++)
                safe_close(a->perf_fds[i]);
        a->n = 0;
}

static void unwind_args_freep(UnwindArgs **a) {
        if (*a)
                unwind_args_done(*a);
        free(*a);
}

/* Takes one (perf fd, cpu) of the call: a perf event this service opened
 * for this caller, with the layout of the others. */
static int take_perf_fd(Sysprof3 *s, const Caller *caller, int fd, int32_t cpu, UnwindArgs *a, sd_bus_error *error) {
        int n_cpus = get_nprocs_conf();
        if (a->n == UNWIND_MAX_PERF_FDS)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION, "more than %d perf fds",
                                         UNWIND_MAX_PERF_FDS);
        if (cpu < 0 || cpu >= n_cpus)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "perf fd %zu: cpu %d is not 0…%d (events of one CPU each)", a->n, cpu,
                                         n_cpus - 1);
        uint64_t id;
        if (!fd_is_anon_inode(fd, "[perf_event]") || ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION, "perf fd %zu is not a perf event",
                                         a->n);
        const OpenedEvent *e = sysprof3_find_event(s, id);
        if (!e || (e->uid != caller->uid && caller->uid != 0))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "perf fd %zu was not opened for you by this service's PerfEventOpen: open "
                                         "the events through org.gnome.Sysprof3.Service first", a->n);
        if (a->first && (e->sample_type != a->first->sample_type ||
                         e->sample_regs_user != a->first->sample_regs_user ||
                         e->sample_stack_user != a->first->sample_stack_user || e->kernel != a->first->kernel))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "perf fd %zu was opened with other attributes than the first: one "
                                         "session takes events of one kind", a->n);
        if ((e->sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) != (PERF_SAMPLE_TID | PERF_SAMPLE_TIME))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "perf fd %zu: its samples lack tid or time", a->n);
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        if (!a->first)
                a->first = e;
        if (e->pid == -1)
                a->system = true;
        else if (a->n_pids < UNWIND_MAX_PERF_FDS)
                a->pids[a->n_pids++] = e->pid;
        a->perf_fds[a->n] = copy;
        a->cpus[a->n++] = cpu;
        return 0;
}

static int method_unwind(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Sysprof3 *s = userdata;
        _cleanup_(unwind_args_freep) UnwindArgs *a = NULL;
        uint32_t stack_size;
        int event_fd, capture_fd, fd;
        int32_t cpu;
        Caller caller;
        int r = caller_from_message(m, &caller);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_NOT_AUTHORIZED, r, "cannot tell who is calling: %m");
        if (s->n_unwinds >= UNWIND_MAX_SESSIONS)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_LIMIT_EXCEEDED,
                                         "the service runs %zu unwind sessions, as many as it serves at once (%d, "
                                         "all users): try again when one has ended",
                                         s->n_unwinds, UNWIND_MAX_SESSIONS);
        r = sd_bus_message_read(m, "u", &stack_size);
        if (r < 0)
                return r;
        if (stack_size == 0 || stack_size > 65536 || stack_size % 8 != 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "stack_size must be a multiple of 8 up to 65536, not %u", stack_size);
        a = calloc(1, sizeof(UnwindArgs));
        if (!a)
                return -ENOMEM;
        r = sd_bus_message_enter_container(m, 'a', "(hi)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "(hi)", &fd, &cpu)) > 0) {
                r = take_perf_fd(s, &caller, fd, cpu, a, error);
                if (r < 0 || sd_bus_error_is_set(error))
                        return r < 0 ? r : -EINVAL;
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return r;
        if (a->n == 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "no perf fds: open them with PerfEventOpen and pass them with their CPUs");
        r = sd_bus_message_read(m, "hh", &event_fd, &capture_fd);
        if (r < 0)
                return r;
        if (!fd_is_anon_inode(event_fd, "[eventfd]"))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION, "event_fd is not an eventfd");
        r = capture_fd_check(capture_fd, error);
        if (r < 0)
                return r;
        _cleanup_close_ int wfd = capture_fd_for_writer(capture_fd);
        if (wfd < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_INVALID_CAPTURE, wfd,
                                            "the capture fd cannot be used: %m");
        _cleanup_close_ int efd = fcntl(event_fd, F_DUPFD_CLOEXEC, 3);
        if (efd < 0)
                return -errno;
        if (GROW_ARRAY(s->unwinds, s->allocated_unwinds, s->n_unwinds + 1, 4) < 0)
                return -ENOMEM;
        _cleanup_(unwind_session_done) UnwindSession session = {};
        r = session_charge(s, &caller, a->cpus, a->n, &session, error);
        if (r < 0)
                return r;
        if (caller.sender) {
                r = sd_bus_track_new(s->mgr->bus, &session.client, on_client_gone, s);
                if (r >= 0)
                        r = sd_bus_track_add_sender(session.client, m);
                if (r < 0)
                        return r;
        }
        const OpenedEvent *first = a->first;
        LiveUnwindSetup setup = {
                .event = s->mgr->event,
                .tables = manager_get_unwind_tables(s->mgr),
                .layout = { .sample_type = first->sample_type, .sample_regs_user = first->sample_regs_user },
                .stack_size = (first->sample_type & PERF_SAMPLE_STACK_USER) ? first->sample_stack_user : 0,
                .kernel = first->kernel, .uid = caller.uid, .system = a->system, .pids = a->pids,
                .n_pids = a->n_pids,
                .max_pinned_files = s->mgr->rlimit_files > 1024 ? s->mgr->rlimit_files / 2 : 512,
                .id = ++s->next_unwind_id, .on_end = on_session_end, .userdata = s,
        };
        if (!setup.tables)
                return -ENOMEM;
        size_t n = a->n;
        a->n = 0; /* live_unwind_start owns the perf fds now */
        r = live_unwind_start(&setup, a->perf_fds, a->cpus, n, TAKE_FD(efd), wfd, &session.live);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "starting the unwinder failed: %m");
        s->unwinds[s->n_unwinds++] = session;
        session = (UnwindSession) {}; /* the list's now */
        log_info("sysprof3: unwind session %u for uid %u: %zu perf events, %u-byte stacks%s", setup.id,
                 (unsigned) caller.uid, n, setup.stack_size, setup.system ? ", whole system" : "");
        return sd_bus_reply_method_return(m, "");
}

BUS_METHOD_LOG_REFUSALS(method_unwind)

const sd_bus_vtable sysprof3_unwinder_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Unwind",
                                SD_BUS_ARGS("u", stack_size, "a(hi)", perf_fds, "h", event_fd, "h", capture_fd),
                                SD_BUS_NO_RESULT, method_unwind_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
