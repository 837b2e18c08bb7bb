/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* periscoped.c: entry point of the Periscope profiling service: reads the
 * command line (parse_argv) and runs the daemon (daemon.c). It serves
 * org.periscope.Profiler1 (service/bus/) on the system bus (default), a
 * session bus, a bus at an address, or to one client over a peer-to-peer
 * connection on an inherited fd; with --sysprofd, org.gnome.Sysprof3
 * (service/sysprof3/) instead. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "basic.h"
#include "build-features.h"
#include "bus.h"
#include "daemon.h"
#include "protocol.h"

#define MAX_IDLE_TIMEOUT_S 86400
#define MAX_PEER_FD 65535
#define MAX_LIMIT 100000
#define MAX_LOCKED_MEMORY_MIB (1ull << 30)
#define MAX_PERF_EVENTS (1u << 20)
#define MAX_ADDRESSES 100000000
#define MAX_SYMBOLIZE_BUDGET_S 86400

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
                "                     --system, where D-Bus activation restarts it; 0…%d, 0 = never)\n"
                "  --max-recordings-per-user=N  recordings (and --sysprofd live unwinding sessions)\n"
                "                     one non-root user may run at once (default %d; 0 = no limit)\n"
                "  --max-locked-memory-per-user=MIB  perf ring memory one non-root user's\n"
                "                     recordings may lock (default %llu, or two DWARF recordings'\n"
                "                     rings if more; 0 = no limit)\n"
                "  --max-control-rings-per-user=N  control fd rings of one non-root user's\n"
                "                     recordings (default %d; 0 = no limit)\n"
                "  --max-pending-authorizations-per-user=N  calls of one non-root user kept\n"
                "                     waiting for polkit's answer (default %d; 0 = no limit)\n"
                "  --max-perf-events-per-user=N  perf events (fds of periscoped's: one per thread and\n"
                "                     CPU, three with --off-cpu) one non-root user's recordings may hold\n"
                "                     (default %d, or a quarter of the hard fd limit if less; 0 = no limit)\n"
                "  --max-threads-per-user=N  threads one non-root user's recordings may have their\n"
                "                     events opened on (default %d; 0 = no limit)\n"
                "  --max-addresses=N  distinct addresses one recording gets symbolized (default 200000;\n"
                "                     1…%d; the rest stay module+0xOFFSET)\n"
                "  --symbolize-budget=SECONDS  time the helper may spend symbolizing one recording\n"
                "                     (default 120; 0.001…%d)\n"
                "  --stop-budget=SECONDS  at SIGTERM, time every recording's post-stop stages get in\n"
                "                     all before they are cut short (default 10; 0…%d, 0 = none)\n"
                "  --perf-event-paranoid-file=PATH  tests only: read the kernel.perf_event_paranoid\n"
                "                     that authorization goes by from PATH, not the sysctl\n"
                "  --version          print the version and the features built in\n",
                PROFILER_NAME, MAX_IDLE_TIMEOUT_S, USER_LIMITS_DEFAULT_RECORDINGS,
                (unsigned long long) (USER_LIMITS_DEFAULT_LOCKED_MEMORY >> 20), USER_LIMITS_DEFAULT_CONTROL_RINGS,
                USER_LIMITS_DEFAULT_PENDING_AUTHORIZATIONS, USER_LIMITS_DEFAULT_PERF_EVENTS,
                USER_LIMITS_DEFAULT_THREADS, MAX_ADDRESSES, MAX_SYMBOLIZE_BUDGET_S, MANAGER_MAX_STOP_BUDGET_S);
}

/* The value of --NAME: a whole number in [min, max] (parse_bounded_u64).
 * what says what it counts, note what 0 means; both go into the message. */
static int parse_number(const char *name, const char *arg, uint64_t min, uint64_t max, const char *what,
                        const char *note, uint64_t *ret) {
        int r = parse_bounded_u64(arg, min, max, ret);
        if (r < 0)
                log_error("--%s=%s: %s: needs %s, %" PRIu64 "…%" PRIu64 "%s", name, arg,
                          r == -ERANGE ? "out of range" : "not a whole number", what, min, max, note);
        return r;
}

/* The value of --NAME in seconds, a fraction allowed, as milliseconds in
 * [min_ms, max_s] (parse_bounded_seconds). */
static int parse_seconds_ms(const char *name, const char *arg, unsigned min_ms, unsigned max_s, const char *note,
                            unsigned *ret_ms) {
        uint64_t usec;
        int r = parse_bounded_seconds(arg, (uint64_t) min_ms * 1000, (uint64_t) max_s * USEC_PER_SEC, &usec);
        if (r < 0) {
                if (min_ms % 1000 == 0)
                        log_error("--%s=%s: %s: needs seconds, %u…%u%s", name, arg,
                                  r == -ERANGE ? "out of range" : "not a number", min_ms / 1000, max_s, note);
                else
                        log_error("--%s=%s: %s: needs seconds, %u.%03u…%u%s", name, arg,
                                  r == -ERANGE ? "out of range" : "not a number", min_ms / 1000, min_ms % 1000, max_s,
                                  note);
                return r;
        }
        *ret_ms = (unsigned) (usec / 1000);
        return 0;
}

/* Reads the command line into *o. Returns 1 to run, 0 to exit at once
 * (--help, --version), or -EINVAL (said why). */
static int parse_argv(int argc, char **argv, DaemonOptions *o) {
        enum {
                ARG_SYSTEM = 0x100,
                ARG_SESSION_BUS,
                ARG_ADDRESS,
                ARG_PEER_FD,
                ARG_IDLE_TIMEOUT,
                ARG_SYSPROFD,
                ARG_MAX_RECORDINGS,
                ARG_MAX_LOCKED_MEMORY,
                ARG_MAX_CONTROL_RINGS,
                ARG_MAX_PENDING_AUTHORIZATIONS,
                ARG_MAX_PERF_EVENTS,
                ARG_MAX_THREADS,
                ARG_MAX_ADDRESSES,
                ARG_SYMBOLIZE_BUDGET,
                ARG_STOP_BUDGET,
                ARG_PERF_EVENT_PARANOID_FILE,
                ARG_VERSION,
        };
        static const struct option options[] = {
                { "system", no_argument, NULL, ARG_SYSTEM },
                { "session-bus", no_argument, NULL, ARG_SESSION_BUS },
                { "address", required_argument, NULL, ARG_ADDRESS },
                { "peer-fd", required_argument, NULL, ARG_PEER_FD },
                { "idle-timeout", required_argument, NULL, ARG_IDLE_TIMEOUT },
                { "sysprofd", no_argument, NULL, ARG_SYSPROFD },
                { "max-recordings-per-user", required_argument, NULL, ARG_MAX_RECORDINGS },
                { "max-locked-memory-per-user", required_argument, NULL, ARG_MAX_LOCKED_MEMORY },
                { "max-control-rings-per-user", required_argument, NULL, ARG_MAX_CONTROL_RINGS },
                { "max-pending-authorizations-per-user", required_argument, NULL, ARG_MAX_PENDING_AUTHORIZATIONS },
                { "max-perf-events-per-user", required_argument, NULL, ARG_MAX_PERF_EVENTS },
                { "max-threads-per-user", required_argument, NULL, ARG_MAX_THREADS },
                { "max-addresses", required_argument, NULL, ARG_MAX_ADDRESSES },
                { "symbolize-budget", required_argument, NULL, ARG_SYMBOLIZE_BUDGET },
                { "stop-budget", required_argument, NULL, ARG_STOP_BUDGET },
                { "perf-event-paranoid-file", required_argument, NULL, ARG_PERF_EVENT_PARANOID_FILE },
                { "version", no_argument, NULL, ARG_VERSION },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        static const char no_limit[] = " (0 = no limit)";
        uint64_t *limit = o->limits.max, v = 0;
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case ARG_SYSTEM:
                        o->kind = BUS_SYSTEM;
                        break;
                case ARG_SESSION_BUS:
                        o->kind = BUS_SESSION;
                        break;
                case ARG_ADDRESS:
                        o->kind = BUS_ADDRESS;
                        o->address = optarg;
                        break;
                case ARG_PEER_FD:
                        r = parse_number("peer-fd", optarg, 0, MAX_PEER_FD, "an fd number", "", &v);
                        o->kind = BUS_PEER;
                        o->peer_fd = (int) v;
                        break;
                case ARG_IDLE_TIMEOUT:
                        r = parse_number("idle-timeout", optarg, 0, MAX_IDLE_TIMEOUT_S, "seconds", " (0 = never)", &v);
                        o->idle_timeout_set = true;
                        o->idle_timeout_usec = v * USEC_PER_SEC;
                        break;
                case ARG_SYSPROFD:
                        o->sysprofd = true;
                        break;
                case ARG_MAX_RECORDINGS:
                        r = parse_number("max-recordings-per-user", optarg, 0, MAX_LIMIT, "a number of recordings",
                                         no_limit, &limit[USER_RESOURCE_RECORDINGS]);
                        break;
                case ARG_MAX_LOCKED_MEMORY:
                        r = parse_number("max-locked-memory-per-user", optarg, 0, MAX_LOCKED_MEMORY_MIB, "MiB",
                                         no_limit, &v);
                        limit[USER_RESOURCE_LOCKED_MEMORY] = v << 20;
                        break;
                case ARG_MAX_CONTROL_RINGS:
                        r = parse_number("max-control-rings-per-user", optarg, 0, MAX_LIMIT,
                                         "a number of control rings", no_limit, &limit[USER_RESOURCE_CONTROL_RINGS]);
                        break;
                case ARG_MAX_PENDING_AUTHORIZATIONS:
                        r = parse_number("max-pending-authorizations-per-user", optarg, 0, MAX_LIMIT,
                                         "a number of calls", no_limit, &limit[USER_RESOURCE_PENDING_AUTHORIZATIONS]);
                        break;
                case ARG_MAX_PERF_EVENTS:
                        r = parse_number("max-perf-events-per-user", optarg, 0, MAX_PERF_EVENTS, "a number of events",
                                         no_limit, &limit[USER_RESOURCE_PERF_EVENTS]);
                        break;
                case ARG_MAX_THREADS:
                        r = parse_number("max-threads-per-user", optarg, 0, MAX_LIMIT, "a number of threads", no_limit,
                                         &limit[USER_RESOURCE_THREADS]);
                        break;
                case ARG_MAX_ADDRESSES:
                        r = parse_number("max-addresses", optarg, 1, MAX_ADDRESSES, "a number of addresses", "", &v);
                        o->max_addresses = (size_t) v;
                        break;
                case ARG_SYMBOLIZE_BUDGET:
                        r = parse_seconds_ms("symbolize-budget", optarg, 1, MAX_SYMBOLIZE_BUDGET_S, "",
                                             &o->symbolize_budget_ms);
                        break;
                case ARG_STOP_BUDGET:
                        r = parse_seconds_ms("stop-budget", optarg, 0, MANAGER_MAX_STOP_BUDGET_S, " (0 = none)",
                                             &o->stop_budget_ms);
                        break;
                case ARG_PERF_EVENT_PARANOID_FILE:
                        o->perf_event_paranoid_file = optarg;
                        break;
                case ARG_VERSION:
                        printf("periscoped %s\n%s\n", PERISCOPE_VERSION, PERISCOPE_FEATURES);
                        return 0;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return -EINVAL;
                }
                if (r < 0)
                        return -EINVAL;
        }
        if (optind < argc) {
                usage(stderr);
                return -EINVAL;
        }
        if (o->sysprofd && o->kind == BUS_PEER) {
                log_error("--sysprofd needs a bus (Sysprof finds sysprofd by its bus name), not --peer-fd");
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char **argv) {
        DaemonOptions o = {
                .kind = BUS_SYSTEM,
                .peer_fd = -1,
                .stop_budget_ms = MANAGER_DEFAULT_STOP_BUDGET_MS,
        };
        user_limits_config_default(&o.limits);
        /* Under systemd: levels and fields to the journal (journal-log.h). */
        (void) journal_log_setup();

        int r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        return daemon_run(&o) < 0 ? 1 : 0;
}
