/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.h: the daemon's state: the event loop, the bus connection, the
 * recordings being served on it, and what they share (the unwind tables,
 * how helpers are started). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "helper-client.h"
#include "recording-bus.h"
#include "recording.h"

typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        bool peer;                 /* one client over a private peer-to-peer connection */
        sd_bus_slot *profiler_slot;
        RecordingBus **recordings; /* their D-Bus faces, which own them */
        size_t n_recordings, allocated_recordings;
        unsigned next_recording_id;
        unsigned rlimit_files;     /* fds the process may hold */
        bool exiting;              /* leave the event loop once no recording is left */
        sd_bus_slot **polkit_waits;/* calls waiting for polkit: their (floating) slots */
        size_t n_polkit_waits, allocated_polkit_waits;
        uint64_t idle_timeout_usec;/* exit after this long without work; 0 = never */
        uint64_t busy_until;       /* CLOCK_MONOTONIC usec of the last moment with work */
        sd_event_source *idle_timer;
        struct UnwindTables *unwind_tables; /* daemon-lifetime unwind tables (created on first use) */
        UserLimits *limits;        /* what each non-root uid may hold at once */
        HelperClientConfig helper_config; /* every helper the daemon starts (wait hook: manager_spill_rings) */
        void (*spill_others)(void *userdata); /* other rings to spill while waiting (the sysprofd drop-in's) */
        void *spill_others_userdata;
        struct OwnerHelper *user_file_helpers; /* parse Podman JSON and /.flatpak-info: one per owner (first use) */
        size_t n_user_file_helpers, allocated_user_file_helpers;
        struct UserFileJobs *user_file_jobs; /* calls' parses of users' files, on a fiber (first use) */
        size_t max_addresses;      /* per recording (--max-addresses); 0: the default */
        unsigned symbolize_budget_ms; /* per recording (--symbolize-budget); 0: the default */
        unsigned stop_budget_ms;      /* --stop-budget: the post-stop stages' time at a stop, for all */
        sd_event_source *stop_timer;  /* exiting: hurries, then cuts every recording's stages short */
        bool stop_hurried;            /* the first of its two times went by */
        PerfOpener *perf_opener;      /* opens every perf event (root daemon); NULL: the daemon itself */
        sd_event_source *perf_opener_watch;   /* its socket hanging up */
        bool perf_opener_lost;                /* it died: exiting (with a failure) to be started again */
        const char *perf_event_paranoid_file; /* --perf-event-paranoid-file (tests); NULL: the sysctl */
        struct RecordingStart **starts;       /* recordings starting on a fiber (manager_start_recording_async) */
        size_t n_starts, allocated_starts;
} Manager;

#define MANAGER_DEFAULT_STOP_BUDGET_MS 10000
#define MANAGER_MAX_STOP_BUDGET_S 600

/* The helper configuration of the daemon: while a helper request waits,
 * every recording's rings are spilled (manager_spill_rings). */
void manager_init_helper_config(Manager *m);

/* Moves every recording's ring contents to its spill (a HelperClient wait
 * hook: the single-threaded daemon is waiting for the helper). */
void manager_spill_rings(void *userdata);

/* The helper for the files users write (Podman's storage JSON,
 * /.flatpak-info) of owner's recordings: one per owner (uid), never lent
 * to another's, kept running while owner has a recording, so a lookup does
 * not wait for a sandbox to start; NULL when it cannot be made. Once the
 * owner's last recording is freed, its helper, and its unwind tables'
 * helper, are stopped. */
HelperClient *manager_get_user_file_helper(Manager *m, uid_t owner);

/* Stops every owner's user-file helper (at exit). */
void manager_free_user_file_helpers(Manager *m);

/* The daemon's queue of calls whose users' files the helper parses
 * (user-file-jobs.h), created on first use; NULL when out of memory. */
struct UserFileJobs *manager_get_user_file_jobs(Manager *m);

/* The daemon's unwind tables, created on first use; NULL when out of memory. */
struct UnwindTables *manager_get_unwind_tables(Manager *m);

/* Starts a recording and its D-Bus face for the caller of `call` into
 * capture_fd (recording_bus_start) and keeps it in the list until the face
 * is freed; when the daemon is exiting and none is left, the event loop
 * exits. Takes over *options. On failure error says why. */
int manager_start_recording(Manager *m, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                            const Authorization *auth, int capture_fd, PerfOpenerWait perf_wait,
                            void *perf_wait_userdata, RecordingBus **ret, sd_bus_error *error);

/* As manager_start_recording(), on a fiber of its own: the perf opener's
 * answers for its events (CPUs x events x threads of them) are awaited off
 * the event loop's stack, so every other caller is served meanwhile; call
 * is answered from there (the recording's path, or the refusal). Takes
 * over *options and capture_fd. Returns 1 (answered later), or negative
 * with error set (call not answered). */
int manager_start_recording_async(Manager *m, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                                  const Authorization *auth, int capture_fd, sd_bus_error *error);

/* Ends every recording still starting on its fiber: its waits for the
 * perf opener give up, its call is refused (the daemon exits). */
void manager_cancel_starts(Manager *m);

/* What every call waiting for polkit keeps (Record, a sysprofd drop-in
 * call): the first member of its own state, which the slot of
 * authorize_recording_async() owns. */
typedef struct PolkitWait {
        Manager *mgr;              /* NULL until kept */
        sd_bus_slot *slot;         /* the bus's (floating) */
        sd_bus_message *call;
        Caller caller;             /* sender points into call */
} PolkitWait;

/* polkit is being asked: w (inside the state slot frees) keeps call and
 * caller, slot becomes the bus's, and the manager remembers the wait (the
 * daemon is not idle meanwhile; at exit the wait is dropped). On failure
 * the slot is dropped, which frees the state. */
int manager_keep_polkit_wait(Manager *m, sd_bus_slot *slot, sd_bus_message *call, const Caller *caller,
                             PolkitWait *w);

/* Gives back what w keeps and forgets the wait; for the state's free. */
void polkit_wait_done(PolkitWait *w);

/* Drops every call still waiting for polkit (exit), unanswered: each
 * holds its message, which holds the bus, so the bus would never be freed. */
void manager_drop_polkit_waits(Manager *m);

/* The service is going away (SIGTERM, peer gone, its perf opener lost):
 * every recording ends now (reason shutdown, or client-vanished for a
 * peer that left); their post-stop
 * stages share stop_budget_ms: at 70% of it they are hurried, at its end
 * cut short (recording_cut_short()); the event loop exits once every recording is
 * finished (lingering finished ones do not hold it). Called again (a
 * second signal): cut short now. */
void manager_end_all(Manager *m);

/* Registers org.periscope.Profiler1 at /org/periscope/Profiler1 (profiler.c). */
int profiler_register(Manager *m);
