/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording.h: one recording, without D-Bus: its perf events, capture
 * writer, process tables, event sources and post-stop stages. Its life:
 *   recording_start()  given what it needs (RecordingSetup): the caller
 *                      authorized it; snapshot + perf armed
 *   → records drained into the capture every 100 ms (and at watermarks)
 *   → recording_end(reason): Stop, duration, command exit, client gone, error
 *   → drain → post-stop stages (recording-stages.h, each given its inputs and
 *     a progress callback; "finishing": symbolization goes on in the event
 *     loop) → stats METADATA → flush → observer's finished()
 * Each optional concern (off-CPU, container follow, JIT files, control and
 * trace fds, counters, each stage) is a part of its own behind one
 * interface (recording-private.h) that recording.c loops over.
 * Its D-Bus face is bus/recording-bus.c; what it tells the world goes
 * through its RecordingObserver. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "capture.h"
#include "control.h"
#include "counters.h"
#include "helper-client.h"
#include "message-ids.h"
#include "perf.h"
#include "process.h"
#include "pump.h"
#include "recording-options.h"
#include "recording-stages.h"
#include "resolver.h"
#include "symbolize.h"
#include "unwind.h"
#include "user-limits.h"

typedef struct Recording Recording;

typedef enum RecordingState {
        RECORDING_STATE_RECORDING,
        RECORDING_STATE_STOPPING,  /* draining */
        RECORDING_STATE_FINISHING, /* post-stop stages (in the event loop: the service serves others) */
        RECORDING_STATE_FINISHED,
} RecordingState;

typedef enum RecordingEndReason {
        RECORDING_END_NONE,
        RECORDING_END_STOPPED,     /* Stop() */
        RECORDING_END_DURATION,    /* duration-ms elapsed */
        RECORDING_END_COMMAND_EXITED,
        RECORDING_END_CLIENT_VANISHED,
        RECORDING_END_SHUTDOWN,    /* the service is stopping */
        RECORDING_END_ERROR,
        RECORDING_END_TARGETS_EXITED, /* every process given in "pids" exited */
} RecordingEndReason;

/* What a recording tells its owner (the D-Bus face), as it happens. */
typedef struct RecordingObserver {
        /* State, Samples, LostSamples, Bytes or Processes changed. */
        void (*changed)(Recording *r, void *userdata);
        /* A post-stop stage's progress. */
        void (*progress)(Recording *r, const char *stage, uint64_t done, uint64_t total, void *userdata);
        /* The recording is over and its capture closed (recording_get_stats()
         * says how it went). The recording is still valid; free it later,
         * never from this callback. */
        void (*finished)(Recording *r, void *userdata);
} RecordingObserver;

/* What one recording may cost the service after Stop (docs/security.md,
 * "Availability"). */
typedef struct RecordingBudgets {
        size_t max_addresses;      /* distinct addresses symbolized; the rest stay module+0xOFFSET */
        unsigned symbolize_ms;     /* the helper's time answering its symbolize requests */
} RecordingBudgets;

#define RECORDING_DEFAULT_MAX_ADDRESSES 200000
#define RECORDING_DEFAULT_SYMBOLIZE_MS  120000

/* What a recording gets when it starts, instead of knowing the daemon. */
typedef struct RecordingSetup {
        sd_event *event;
        unsigned id;                     /* for logs and the D-Bus path */
        uid_t owner_uid;                 /* who asked */
        bool kernel;                     /* the owner may see kernel addresses */
        bool check_owner;                /* on the owner's own rights: each process is checked again,
                                          * held by pidfd, when its events are opened */
        size_t max_pinned_files;         /* the recording's share of the daemon's fds */
        UnwindTables *unwind_tables;     /* the daemon's (dwarf/auto; NULL for fp) */
        UserLimits *limits;              /* the daemon's per-uid limits (ring memory, control rings) */
        HelperClientConfig helper;       /* how helpers are started (symbolize stage) */
        HelperClient *user_file_helper;  /* the daemon's helper for Podman JSON and /.flatpak-info (borrowed) */
        RecordingBudgets budgets;        /* what it may cost the service (0s: the defaults) */
        PerfOpener *perf_opener;         /* the daemon's (borrowed); NULL: events opened here */
        PerfOpenerWait perf_wait;        /* recording_start() on a fiber: how it awaits the opener */
        void *perf_wait_userdata;
        const RecordingObserver *observer;
        void *observer_userdata;
} RecordingSetup;

/* What the D-Bus face shows of a recording. */
typedef struct RecordingStats {
        RecordingState state;
        RecordingEndReason reason;
        const char *error_message; /* NULL unless it failed */
        uint64_t samples, lost_samples, bad_records, bytes;
        uint64_t duration_ns;      /* the sampling window once it ended, else so far */
        uint64_t helper_failures;  /* files the sandboxed helper failed on (tables and symbols) */
        uint64_t unwind_helper_failures;     /* ... of them for unwind tables: DWARF stacks missing */
        uint64_t user_addresses, user_named; /* distinct user-space addresses symbolized, named */
        uint64_t addresses_over_budget; /* address occurrences past the budget: not symbolized */
        bool helper_budget_spent;  /* the helper's time budget ran out while symbolizing */
        size_t processes, pinned_files;
        bool follows_container;    /* option "container": the two below mean something */
        unsigned joined_processes;
        bool container_stopped;
        uint64_t trace_fds;        /* trace fds handed out; the two below mean something if > 0 */
        uint64_t trace_frames, trace_frames_refused;
        unsigned cut;             /* RECORDING_CUT_*: what the post-stop stages could not finish */
        const char *cut_short;    /* why they were cut short, or NULL */
        uint64_t names_cut_short; /* addresses left unnamed by it (`periscope symbolize` names them) */
        bool off_cpu;             /* option "off-cpu": the ones below mean something */
        uint64_t off_cpu_waits, off_cpu_blocked_ns,
                off_cpu_stacks;                               /* blocked waits written, their time, with a stack */
        uint64_t off_cpu_short;                               /* blocked waits under the minimum: counted only */
        uint64_t off_cpu_paused_ns, off_cpu_stacks_paused_ns; /* the governor's pauses (docs/off-cpu.md) */
        uint64_t python_processes; /* interpreters located (docs/python.md); the two below mean something if > 0 */
        uint64_t python_samples, python_read_failures;
} RecordingStats;

/* Starts a recording into capture_fd (already checked). Takes over
 * *options. On failure a negative errno, *ret_why says why and what to do
 * (the D-Bus message, or NULL when out of memory) and *ret_error_name its
 * org.periscope.Error.* name (protocol/dbus-api.h; NULL: from the errno). */
int recording_start(const RecordingSetup *setup, RecordOptions *options, int capture_fd, Recording **ret,
                    const char **ret_error_name, char **ret_why);

/* Ends the recording (no-op unless recording): see the sequence above. */
void recording_end(Recording *r, RecordingEndReason reason, int error, const char *message);

/* The service is going away: a post-stop stage under way ends now (what
 * it did not reach is marked unresolved or not merged), the stages after
 * it do not run, and the capture is completed. */
void recording_cancel_stages(Recording *r);

/* The service is stopping and the post-stop stages' time runs out. With
 * now false (hurry): the symbolize stage only identifies the files it has
 * not reached (their build-ids), it names no more. With now true (the time
 * is up): the stage under way ends now and the ones after it run at once
 * without the helper, so the capture is complete at once. What they could
 * not do is said in its statistics (cut_short=…, names_missing=why) and in
 * Finished, and the symbol tables keep every mapping's build-id for
 * `periscope symbolize`. why is a static string ("cut short by
 * shutdown"). No-op once finished. */
void recording_cut_short(Recording *r, const char *why, bool now);

/* Names of the RECORDING_CUT_* bits set in cut, in stage order, comma
 * separated, into buf. */
const char *recording_cut_to_string(unsigned cut, char *buf, size_t size);

/* Frees everything (ends it first if needed, without stages: the observer
 * still hears finished()). Accepts NULL; returns NULL. */
Recording *recording_free(Recording *r);


/* Moves the records in the rings to the spill (a helper request is under
 * way and the rings would overflow); the next drain handles them first. */
void recording_spill_rings(Recording *r);

/* Whether the recording ends by itself (a duration or a command), so it may
 * outlive the client that started it. */
bool recording_outlives_client(const Recording *r);

void recording_get_stats(const Recording *r, RecordingStats *ret);

/* When it started: CLOCK_MONOTONIC ns, as in the capture header. */
int64_t recording_get_start_time(const Recording *r);

/* Name of a reason, as in Finished's stats "reason". */
const char *recording_end_reason_to_string(RecordingEndReason reason);
const char *recording_state_to_string(RecordingState state);

/* The rest of this folder's public interface: other folders include this header only. */
#include "daemon-resolver.h"
#include "recording-control.h"
#include "recording-trace.h"
