/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon.c: running periscoped (daemon.h): what it takes before dropping
 * its capabilities, the event loop and the bus, the face it serves, and
 * leaving once idle, signalled, or its peer gone. */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "basic.h"
#include "bus.h"
#include "helper-client.h"
#include "protocol.h"
#include "sysprof3.h"
#include "unwind.h"

#define IDLE_CHECK_USEC (5ull * 1000000)
/* nice value periscoped takes where it may (see raise_priority) */
#define PERISCOPED_NICE (-10)
#define DEFAULT_SYSTEM_IDLE_TIMEOUT_USEC (120 * USEC_PER_SEC)

/* What the daemon runs: the manager, and with --sysprofd the
 * org.gnome.Sysprof3 face, under the bus name it owns. */
typedef struct Daemon {
        Manager m;
        Sysprof3 *sysprof3;
        const char *bus_name;
} Daemon;

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        log_info("signal %u, finalizing %zu recording(s)", si->ssi_signo, m->n_recordings);
        manager_end_all(m);
        return 0;
}

/* Exits a bus-activated service nobody has used for a while; D-Bus starts
 * it again on the next call. */
static int on_idle_check(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        Manager *m = &d->m;
        uint64_t now;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (m->n_recordings > 0 || m->n_starts > 0 || m->n_polkit_waits > 0 || sysprof3_busy(d->sysprof3) ||
            sd_bus_get_n_queued_read(m->bus, NULL) > 0)
                m->busy_until = now;
        else if (now - m->busy_until >= m->idle_timeout_usec) {
                log_info("idle for %llu s, exiting", (unsigned long long) (m->idle_timeout_usec / 1000000));
                (void) sd_bus_release_name(m->bus, d->bus_name);
                (void) sd_event_exit(m->event, 0);
                return 0;
        }
        uint64_t next = m->idle_timeout_usec < IDLE_CHECK_USEC ? m->idle_timeout_usec : IDLE_CHECK_USEC;
        int r = sd_event_source_set_time_relative(s, next > 0 ? next : 1);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        manager_end_all(m);
        return 0;
}

/* The perf opener's socket hung up: it died, or a request gave it up
 * (no answer within a second, nonsense) and killed it. It cannot be
 * started again without the capabilities the daemon dropped, so the
 * daemon finishes every recording as at a stop (their captures complete)
 * and exits with a failure: systemd (Restart=on-failure) or the next bus
 * activation starts a new periscoped, with a new opener. */
static int on_perf_opener_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        perf_opener_hung_up(m->perf_opener);
        log_error("periscoped's perf opener is gone (%s): finishing %zu recording(s), then exiting with a failure "
                  "so that a new periscoped (and opener) is started",
                  perf_opener_gone_reason(m->perf_opener), m->n_recordings);
        m->perf_opener_lost = true;
        manager_end_all(m);
        return 0;
}

static int watch_perf_opener(Manager *m) {
        if (!m->perf_opener)
                return 0;
        /* EPOLLHUP (reported whatever is asked): the opener's end closed.
         * Not EPOLLIN: answers are read by the request that waits for them. */
        return sd_event_add_io(m->event, &m->perf_opener_watch, perf_opener_socket(m->perf_opener), EPOLLRDHUP,
                               on_perf_opener_hangup, m);
}

/* Pinned files need many fds: take the hard limit. */
static unsigned raise_fd_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 1024;
        if (rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
                (void) getrlimit(RLIMIT_NOFILE, &rl);
        }
        return rl.rlim_cur > 1u << 20 ? 1u << 20 : (unsigned) rl.rlim_cur;
}

/* The daemon's work is latency: a perf ring holds about a quarter of a
 * second of DWARF samples, and on a loaded machine a daemon at the same
 * priority as the programs it profiles drains too late. Where allowed
 * (root, or the unit's Nice=), run ahead of them; the helper goes back to 0. */
static void raise_priority(void) {
        errno = 0;
        int nice_now = getpriority(PRIO_PROCESS, 0);
        if (errno == 0 && nice_now > PERISCOPED_NICE)
                (void) setpriority(PRIO_PROCESS, 0, PERISCOPED_NICE);
}

/* perf_event_open's capabilities go to the opener, forked while this
 * process still has them and nothing else is set up; then every
 * capability the daemon does not use is dropped. */
static int take_perf_then_drop_capabilities(Manager *m) {
        int r;
        if (perf_opener_wanted()) {
                r = perf_opener_start(&m->perf_opener);
                if (r < 0) {
                        log_error_errno(r, "cannot start the perf opener: %m");
                        return r;
                }
                log_debug("perf opener: pid %d, %s", (int) perf_opener_pid(m->perf_opener),
                          perf_opener_has_sys_admin(m->perf_opener) ? "CAP_PERFMON and CAP_SYS_ADMIN" : "CAP_PERFMON");
        }
        int paranoid = perf_event_paranoid();
        if (paranoid > 2 && !(m->perf_opener && perf_opener_has_sys_admin(m->perf_opener)))
                log_warning("kernel.perf_event_paranoid is %d: this kernel opens perf events only for CAP_SYS_ADMIN, "
                            "which periscoped %s: every recording will fail (set the sysctl to 2 to allow it)",
                            paranoid,
                            m->perf_opener ? "was not given (the unit's CapabilityBoundingSet= lacks it)"
                                           : "does not have (it does not run as root)");
        r = capability_drop_unused(m->perf_opener != NULL);
        if (r < 0)
                log_error_errno(r, "cannot drop unused capabilities: %m");
        return r;
}

/* The bus connection, the face and the signals, on the event loop. */
static int serve(Daemon *d, const DaemonOptions *o) {
        Manager *m = &d->m;
        int r = bus_connect(o->kind, o->address, o->peer_fd, &m->bus);
        if (r < 0) {
                log_error_errno(r, "cannot connect to %s: %m", bus_kind_describe(o->kind, o->address));
                return r;
        }
        if ((r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL)) < 0 ||
            (r = o->sysprofd ? sysprof3_new(m, &d->sysprof3) : profiler_register(m)) < 0 ||
            (r = sd_bus_add_match(m->bus, NULL,
                                  "type='signal',path='/org/freedesktop/DBus/Local',"
                                  "interface='org.freedesktop.DBus.Local',member='Disconnected'",
                                  on_disconnected, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m)) < 0 || (r = watch_perf_opener(m)) < 0) {
                log_error_errno(r, "setting up failed: %m");
                return r;
        }
        (void) sd_bus_set_exit_on_disconnect(m->bus, false);
        if (o->kind == BUS_PEER) {
                r = bus_peer_finish_auth(m->bus);
                if (r < 0) {
                        log_error_errno(r, "the peer did not authenticate: %m");
                        return r;
                }
        } else {
                r = sd_bus_request_name(m->bus, d->bus_name, 0);
                if (r < 0) {
                        return log_error_errno(r,
                                               "cannot own %s: %m (is another periscoped%s running, and does "
                                               "the bus policy dbus/%s.conf allow it?)",
                                               d->bus_name, o->sysprofd ? " or sysprofd" : "", d->bus_name);
                }
        }
        if (o->kind != BUS_PEER && m->idle_timeout_usec > 0) {
                (void) sd_event_now(m->event, CLOCK_MONOTONIC, &m->busy_until);
                r = sd_event_add_time_relative(m->event, &m->idle_timer, CLOCK_MONOTONIC,
                                               m->idle_timeout_usec < IDLE_CHECK_USEC ? m->idle_timeout_usec
                                                                                      : IDLE_CHECK_USEC,
                                               0, on_idle_check, d);
                if (r < 0) {
                        log_error_errno(r, "idle timer: %m");
                        return r;
                }
        }
        r = sd_event_loop(m->event);
        if (r < 0)
                log_error_errno(r, "event loop failed: %m");
        return r;
}

/* Frees what run set up, in the order that lets each part give back what
 * it holds of the others. */
static void daemon_done(Daemon *d) {
        Manager *m = &d->m;
        manager_cancel_starts(m);
        free(m->starts);
        /* Anything still alive is finalized without stages; each free
         * removes it from the list. */
        while (m->n_recordings > 0)
                recording_bus_free(m->recordings[m->n_recordings - 1]);
        free(m->recordings);
        m->stop_timer = sd_event_source_disable_unref(m->stop_timer);
        sysprof3_free(d->sysprof3);
        sd_event_source_disable_unref(m->idle_timer);
        sd_event_source_disable_unref(m->perf_opener_watch);
        unwind_tables_free(m->unwind_tables);
        user_file_jobs_free(m->user_file_jobs);
        manager_free_user_file_helpers(m);
        sd_bus_slot_unref(m->profiler_slot);
        manager_drop_polkit_waits(m);
        sd_bus_flush_close_unref(m->bus);
        user_limits_free(m->limits); /* after the bus: calls waiting for polkit give their charges back */
        sd_event_unref(m->event);
        perf_opener_free(m->perf_opener);
}

int daemon_run(const DaemonOptions *o) {
        Daemon d = {
                .m = { .peer = o->kind == BUS_PEER },
                .bus_name = o->sysprofd ? SYSPROF3_BUS_NAME : PROFILER_NAME,
        };
        Manager *m = &d.m;
        if (o->idle_timeout_set)
                m->idle_timeout_usec = o->idle_timeout_usec;
        else
                m->idle_timeout_usec = o->kind == BUS_SYSTEM ? DEFAULT_SYSTEM_IDLE_TIMEOUT_USEC : 0;
        m->max_addresses = o->max_addresses;
        m->symbolize_budget_ms = o->symbolize_budget_ms;
        m->stop_budget_ms = o->stop_budget_ms;
        m->perf_event_paranoid_file = o->perf_event_paranoid_file;
        m->rlimit_files = raise_fd_limit();
        raise_priority();
        /* while CAP_CHOWN is still ours: the debuginfod fetcher's cache */
        _cleanup_free_ char *why = NULL;
        if (debuginfod_fetch_prepare_root_cache(&why) < 0)
                log_warning("%s: debug files will not be fetched", why);
        int r = take_perf_then_drop_capabilities(m);
        if (r >= 0) {
                manager_init_helper_config(m);
                r = user_limits_new(&o->limits, &m->limits);
                if (r < 0)
                        log_error_errno(r, "cannot set up the per-user limits: %m");
        }
        if (r >= 0) {
                sigset_t mask;
                sigemptyset(&mask);
                sigaddset(&mask, SIGTERM);
                sigaddset(&mask, SIGINT);
                sigprocmask(SIG_BLOCK, &mask, NULL);
                signal(SIGPIPE, SIG_IGN);
                r = sd_event_default(&m->event);
                if (r < 0)
                        log_error_errno(r, "cannot create the event loop: %m");
        }
        if (r >= 0)
                r = serve(&d, o);
        if (r >= 0 && m->perf_opener_lost)
                r = log_error_errno(-PERF_OPENER_GONE,
                                    "exiting with a failure: the perf opener is gone (%s); a new periscoped records "
                                    "again",
                                    perf_opener_gone_reason(m->perf_opener));
        daemon_done(&d);
        return r;
}
