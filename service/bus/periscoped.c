/* periscoped.c: entry point of the Periscope profiling service. Serves
 * org.periscope.Profiler1 on the system bus (default), a session bus, a bus at
 * an address, or one client over a peer-to-peer connection on an inherited fd;
 * with --sysprofd, org.gnome.Sysprof3 instead (service/sysprof3/). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <systemd/sd-id128.h>
#include <unistd.h>

#include "basic.h"
#include "capability-drop.h"
#include "manager.h"
#include "user-file-jobs.h"
#include "protocol.h"
#include "recording-bus.h"
#include "sysprof3.h"
#include "unwind.h"

typedef enum BusKind { BUS_SYSTEM, BUS_SESSION, BUS_ADDRESS, BUS_PEER } BusKind;

/* What main() runs: the manager, and with --sysprofd the org.gnome.Sysprof3
 * face, under the bus name it owns. */
typedef struct Daemon {
        Manager m;
        Sysprof3 *sysprof3;
        const char *bus_name;
} Daemon;

static void usage(FILE *out) {
        fprintf(out,
                "Usage: periscoped [--system | --session-bus | --address=ADDRESS | --peer-fd=FD] [--sysprofd]\n\n"
                "The Periscope profiling service: records CPU stacks into Sysprof captures over D-Bus.\n\n"
                "  --system           own %s on the system bus (default)\n"
                "  --session-bus      own it on the session bus (tests)\n"
                "  --address=ADDRESS  own it on the bus at ADDRESS (tests)\n"
                "  --peer-fd=FD       serve one client over the connected socket FD (no bus); exit\n"
                "                     once it hangs up and its recordings are finalized\n"
                "  --sysprofd         own org.gnome.Sysprof3 instead, as a drop-in for Sysprof's sysprofd\n"
                "                     (Service, Unwinder, Profiler; docs/sysprofd-drop-in.md)\n"
                "  --idle-timeout=SECONDS  exit after SECONDS without recordings (default 120 with\n"
                "                     --system, where D-Bus activation restarts it; 0 = never)\n"
                "  --max-recordings-per-user=N  recordings (and --sysprofd live unwinding sessions)\n"
                "                     one non-root user may run at once (default %d; 0 = no limit)\n"
                "  --max-locked-memory-per-user=MIB  perf ring memory one non-root user's\n"
                "                     recordings may lock (default %llu, or two DWARF recordings'\n"
                "                     rings if more; 0 = no limit)\n"
                "  --max-control-rings-per-user=N  control fd rings of one non-root user's\n"
                "                     recordings (default %d; 0 = no limit)\n"
                "  --max-pending-authorizations-per-user=N  calls of one non-root user kept\n"
                "                     waiting for polkit's answer (default %d; 0 = no limit)\n"
                "  --max-addresses=N  distinct addresses one recording gets symbolized (default 200000;\n"
                "                     the rest stay module+0xOFFSET)\n"
                "  --symbolize-budget=SECONDS  time the helper may spend symbolizing one recording\n"
                "                     (default 120)\n"
                "  --stop-budget=SECONDS  at SIGTERM, time every recording's post-stop stages get in\n"
                "                     all before they are cut short (default 10; 0…600, 0 = none)\n"
                "  --version          print the version\n",
                PROFILER_NAME, USER_LIMITS_DEFAULT_RECORDINGS,
                (unsigned long long) (USER_LIMITS_DEFAULT_LOCKED_MEMORY >> 20), USER_LIMITS_DEFAULT_CONTROL_RINGS,
                USER_LIMITS_DEFAULT_PENDING_AUTHORIZATIONS);
}

/* A per-user limit option's value: 0…max. */
static int parse_limit(const char *name, const char *arg, uint64_t max, uint64_t *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || v > max) {
                log_error("--%s needs a number 0…%llu (0 = no limit), got '%s'", name, (unsigned long long) max, arg);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        log_info("signal %u, finalizing %zu recording(s)", si->ssi_signo, m->n_recordings);
        manager_end_all(m);
        return 0;
}

#define IDLE_CHECK_USEC (5ull * 1000000)
/* nice value periscoped takes where it may (see raise_priority) */
#define PERISCOPED_NICE (-10)

/* Exits a bus-activated service nobody has used for a while; D-Bus starts
 * it again on the next call. */
static int on_idle_check(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        Manager *m = &d->m;
        uint64_t now;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (m->n_recordings > 0 || m->n_polkit_waits > 0 || sysprof3_busy(d->sysprof3) ||
            sd_bus_get_n_queued_read(m->bus, NULL) > 0)
                m->busy_until = now;
        else if (now - m->busy_until >= m->idle_timeout_usec) {
                log_info("idle for %llu s, exiting",
                        (unsigned long long) (m->idle_timeout_usec / 1000000));
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

static int connect_bus(BusKind kind, const char *address, int peer_fd, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;
        switch (kind) {
        case BUS_SYSTEM:
                return sd_bus_open_system(ret);
        case BUS_SESSION:
                return sd_bus_open_user(ret);
        case BUS_ADDRESS:
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                if ((r = sd_bus_set_address(bus, address)) < 0 || (r = sd_bus_set_bus_client(bus, true)) < 0 ||
                    (r = sd_bus_negotiate_fds(bus, true)) < 0 || (r = sd_bus_start(bus)) < 0) {
                        sd_bus_unref(bus);
                        return r;
                }
                *ret = bus;
                return 0;
        case BUS_PEER: {
                sd_id128_t id;
                r = sd_id128_randomize(&id);
                if (r < 0)
                        return r;
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                if ((r = sd_bus_set_fd(bus, peer_fd, peer_fd)) < 0 || (r = sd_bus_set_server(bus, true, id)) < 0 ||
                    (r = sd_bus_negotiate_fds(bus, true)) < 0 || (r = sd_bus_start(bus)) < 0) {
                        sd_bus_unref(bus);
                        return r;
                }
                *ret = bus;
                return 0;
        }
        }
        return -EINVAL;
}

/* Completes the server side of authentication before the event loop runs,
 * then handles whatever the client sent in the same read as "BEGIN": sd-bus
 * keeps such bytes buffered and the event loop would not wake up for them. */
static int peer_finish_auth(sd_bus *bus) {
        int r;
        while (!sd_bus_is_ready(bus)) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                r = sd_bus_wait(bus, 10 * 1000000ull);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -ETIMEDOUT;
        }
        do
                r = sd_bus_process(bus, NULL);
        while (r > 0);
        return r;
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

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "system", no_argument, NULL, 's' },
                { "session-bus", no_argument, NULL, 'S' },
                { "address", required_argument, NULL, 'a' },
                { "peer-fd", required_argument, NULL, 'p' },
                { "idle-timeout", required_argument, NULL, 'i' },
                { "sysprofd", no_argument, NULL, 'y' },
                { "max-recordings-per-user", required_argument, NULL, 'R' },
                { "max-locked-memory-per-user", required_argument, NULL, 'M' },
                { "max-control-rings-per-user", required_argument, NULL, 'C' },
                { "max-pending-authorizations-per-user", required_argument, NULL, 'P' },
                { "max-addresses", required_argument, NULL, 'A' },
                { "symbolize-budget", required_argument, NULL, 'B' },
                { "stop-budget", required_argument, NULL, 'T' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        BusKind kind = BUS_SYSTEM;
        const char *address = NULL;
        int peer_fd = -1, c, r;
        long idle_timeout = -1, max_addresses = 0;
        double symbolize_budget = 0, stop_budget = MANAGER_DEFAULT_STOP_BUDGET_MS / 1000.0;
        bool sysprofd = false;
        UserLimitsConfig limits;
        user_limits_config_default(&limits);

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        kind = BUS_SYSTEM;
                        break;
                case 'S':
                        kind = BUS_SESSION;
                        break;
                case 'a':
                        kind = BUS_ADDRESS;
                        address = optarg;
                        break;
                case 'p': {
                        char *end;
                        long v = strtol(optarg, &end, 10);
                        if (*end || v < 0 || v > 65535) {
                                log_error("--peer-fd needs an fd number, got '%s'", optarg);
                                return 2;
                        }
                        kind = BUS_PEER;
                        peer_fd = (int) v;
                        break;
                }
                case 'i': {
                        char *end;
                        idle_timeout = strtol(optarg, &end, 10);
                        if (*end || idle_timeout < 0 || idle_timeout > 86400) {
                                log_error("--idle-timeout needs 0…86400 seconds, got '%s'", optarg);
                                return 2;
                        }
                        break;
                }
                case 'y':
                        sysprofd = true;
                        break;
                case 'R':
                        if (parse_limit("max-recordings-per-user", optarg, 100000,
                                        &limits.max[USER_RESOURCE_RECORDINGS]) < 0)
                                return 2;
                        break;
                case 'M': {
                        uint64_t mib;
                        if (parse_limit("max-locked-memory-per-user", optarg, 1u << 30, &mib) < 0)
                                return 2;
                        limits.max[USER_RESOURCE_LOCKED_MEMORY] = mib << 20;
                        break;
                }
                case 'C':
                        if (parse_limit("max-control-rings-per-user", optarg, 100000,
                                        &limits.max[USER_RESOURCE_CONTROL_RINGS]) < 0)
                                return 2;
                        break;
                case 'P':
                        if (parse_limit("max-pending-authorizations-per-user", optarg, 100000,
                                        &limits.max[USER_RESOURCE_PENDING_AUTHORIZATIONS]) < 0)
                                return 2;
                        break;
                case 'A': {
                        char *end;
                        max_addresses = strtol(optarg, &end, 10);
                        if (*end || max_addresses < 1 || max_addresses > 100000000) {
                                log_error("--max-addresses needs 1…100000000, got '%s'", optarg);
                                return 2;
                        }
                        break;
                }
                case 'B': {
                        char *end;
                        symbolize_budget = strtod(optarg, &end);
                        if (*end || !(symbolize_budget >= 0.001 && symbolize_budget <= 86400)) {
                                log_error("--symbolize-budget needs 0.001…86400 seconds, got '%s'", optarg);
                                return 2;
                        }
                        break;
                }
                case 'T': {
                        char *end;
                        errno = 0;
                        stop_budget = strtod(optarg, &end);
                        if (errno || end == optarg || *end ||
                            !(stop_budget >= 0 && stop_budget <= MANAGER_MAX_STOP_BUDGET_S)) {
                                log_error("--stop-budget needs 0…%d seconds, got '%s'", MANAGER_MAX_STOP_BUDGET_S,
                                          optarg);
                                return 2;
                        }
                        break;
                }
                case 'V':
                        printf("periscoped %s\n", PERISCOPE_VERSION);
                        return 0;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return 2;
        }

        if (sysprofd && kind == BUS_PEER) {
                log_error("--sysprofd needs a bus (Sysprof finds sysprofd by its bus name), not --peer-fd");
                return 2;
        }
        Daemon d = { .m = { .peer = kind == BUS_PEER }, .bus_name = sysprofd ? SYSPROF3_BUS_NAME : PROFILER_NAME };
        if (idle_timeout < 0)
                idle_timeout = kind == BUS_SYSTEM ? 120 : 0;
        d.m.idle_timeout_usec = (uint64_t) idle_timeout * 1000000;
        d.m.max_addresses = (size_t) max_addresses;
        d.m.symbolize_budget_ms = (unsigned) (symbolize_budget * 1000);
        d.m.stop_budget_ms = (unsigned) (stop_budget * 1000);
        d.m.rlimit_files = raise_fd_limit();
        raise_priority();
        r = capability_drop_unused();
        if (r < 0) {
                log_error("cannot drop unused capabilities: %s", strerror(-r));
                return 1;
        }
        manager_init_helper_config(&d.m);
        r = user_limits_new(&limits, &d.m.limits);
        if (r < 0) {
                log_error("cannot set up the per-user limits: %s", strerror(-r));
                return 1;
        }
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);

        r = sd_event_default(&d.m.event);
        if (r < 0) {
                log_error("cannot create the event loop: %s", strerror(-r));
                user_limits_free(d.m.limits);
                return 1;
        }
        r = connect_bus(kind, address, peer_fd, &d.m.bus);
        if (r < 0) {
                log_error("cannot connect to %s: %s",
                        kind == BUS_PEER ? "the peer" : kind == BUS_ADDRESS ? address : kind == BUS_SESSION ? "the session bus" : "the system bus",
                        strerror(-r));
                sd_event_unref(d.m.event);
                user_limits_free(d.m.limits);
                return 1;
        }
        if ((r = sd_bus_attach_event(d.m.bus, d.m.event, SD_EVENT_PRIORITY_NORMAL)) < 0 ||
            (r = sysprofd ? sysprof3_new(&d.m, &d.sysprof3) : profiler_register(&d.m)) < 0 ||
            (r = sd_bus_add_match(d.m.bus, NULL, "type='signal',path='/org/freedesktop/DBus/Local',"
                                               "interface='org.freedesktop.DBus.Local',member='Disconnected'",
                                  on_disconnected, &d.m)) < 0 ||
            (r = sd_event_add_signal(d.m.event, NULL, SIGTERM, on_signal, &d.m)) < 0 ||
            (r = sd_event_add_signal(d.m.event, NULL, SIGINT, on_signal, &d.m)) < 0) {
                log_error("setting up failed: %s", strerror(-r));
                goto out;
        }
        (void) sd_bus_set_exit_on_disconnect(d.m.bus, false);
        if (kind == BUS_PEER) {
                r = peer_finish_auth(d.m.bus);
                if (r < 0) {
                        log_error("the peer did not authenticate: %s", strerror(-r));
                        goto out;
                }
        } else {
                r = sd_bus_request_name(d.m.bus, d.bus_name, 0);
                if (r < 0) {
                        log_error("cannot own %s: %s (is another periscoped%s running, and does "
                                        "the bus policy dbus/%s.conf allow it?)",
                                d.bus_name, strerror(-r), sysprofd ? " or sysprofd" : "", d.bus_name);
                        goto out;
                }
        }
        if (kind != BUS_PEER && d.m.idle_timeout_usec > 0) {
                (void) sd_event_now(d.m.event, CLOCK_MONOTONIC, &d.m.busy_until);
                r = sd_event_add_time_relative(d.m.event, &d.m.idle_timer, CLOCK_MONOTONIC,
                                               d.m.idle_timeout_usec < IDLE_CHECK_USEC ? d.m.idle_timeout_usec : IDLE_CHECK_USEC,
                                               0, on_idle_check, &d);
                if (r < 0) {
                        log_error("idle timer: %s", strerror(-r));
                        goto out;
                }
        }
        r = sd_event_loop(d.m.event);
        if (r < 0)
                log_error("event loop failed: %s", strerror(-r));
out:
        /* Anything still alive is finalized without stages; each free
         * removes it from the list. */
        while (d.m.n_recordings > 0)
                recording_bus_free(d.m.recordings[d.m.n_recordings - 1]);
        free(d.m.recordings);
        d.m.stop_timer = sd_event_source_disable_unref(d.m.stop_timer);
        sysprof3_free(d.sysprof3);
        sd_event_source_disable_unref(d.m.idle_timer);
        unwind_tables_free(d.m.unwind_tables);
        user_file_jobs_free(d.m.user_file_jobs);
        helper_client_free(d.m.user_file_helper);
        sd_bus_slot_unref(d.m.profiler_slot);
        manager_drop_polkit_waits(&d.m);
        sd_bus_flush_close_unref(d.m.bus);
        user_limits_free(d.m.limits); /* after the bus: calls waiting for polkit give their charges back */
        sd_event_unref(d.m.event);
        return r < 0 ? 1 : 0;
}
