/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon.h: running periscoped once its command line is read: the perf
 * opener and the capabilities, the event loop, the bus, one of its two
 * faces (org.periscope.Profiler1, or org.gnome.Sysprof3 with --sysprofd)
 * and the idle exit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus.h"

/* What the command line asked for (periscoped.c's parse_argv()). */
typedef struct DaemonOptions {
        BusKind kind;
        const char *address;   /* BUS_ADDRESS */
        int peer_fd;           /* BUS_PEER */
        bool sysprofd;         /* serve org.gnome.Sysprof3 instead of org.periscope.Profiler1 */
        bool idle_timeout_set; /* else 120 s on the system bus, never elsewhere */
        uint64_t idle_timeout_usec;
        size_t max_addresses;         /* 0: the default */
        unsigned symbolize_budget_ms; /* 0: the default */
        unsigned stop_budget_ms;
        const char *perf_event_paranoid_file; /* tests: read in place of the sysctl for authorization */
        UserLimitsConfig limits;
} DaemonOptions;

/* Runs the daemon until it exits (idle, signal, peer gone). Returns 0, or a
 * negative errno when it could not start or its loop failed (logged). */
int daemon_run(const DaemonOptions *o);
