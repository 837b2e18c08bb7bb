/* recording.h: one recording: its perf events, capture writer, process
 * tables and D-Bus object (org.periscope.Recording1). Its life:
 *   recording_start()  auth done by the caller; snapshot + perf armed
 *   → records drained into the capture every 100 ms (and at watermarks)
 *   → recording_end(reason): Stop, duration, command exit, client gone, error
 *   → drain → post-stop stages (recording-stages.c, may be asynchronous,
 *     emit Progress) → stats METADATA → flush → Finished(ok, error, stats)
 * Stage code may use every field below. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "address-set.h"
#include "authorization.h"
#include "capture-writer.h"
#include "container-follow.h"
#include "control-ring.h"
#include "counters.h"
#include "manager.h"
#include "perf-events.h"
#include "perf-record.h"
#include "perf-spill.h"
#include "pinned-files.h"
#include "process-maps.h"
#include "record-options.h"
#include "resolver.h"
#include "sample-unwind.h"

#define RECORDING_INTERFACE "org.periscope.Recording1"
#define RECORDING_PATH_PREFIX "/org/periscope/Recording"

typedef enum RecordingState {
        RECORDING_STATE_RECORDING,
        RECORDING_STATE_STOPPING,  /* draining and running post-stop stages */
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

struct Recording {
        Manager *manager;
        unsigned id;
        char *path;
        uid_t owner_uid;
        char *owner;               /* unique bus name; NULL for a peer */
        sd_bus_slot *slot;
        sd_bus_track *track;

        RecordOptions options;
        Authorization auth;
        int64_t start_time;        /* CLOCK_MONOTONIC ns, as in the capture header */

        CaptureWriter *writer;
        PerfEvents *perf;
        PerfRecordLayout layout;
        ProcessMaps *maps;
        PinnedFiles *pinned;
        Resolver *resolver;        /* containers/sandboxes: pin fallback, per-process descriptions */
        AddressSet *addresses;
        ContainerFollow *follow;   /* `container`: processes joining it are added on the tick */

        sd_event_source *tick;     /* drain + flush */
        sd_event_source **ring_sources;
        size_t n_ring_sources;
        sd_event_source *duration_timer;
        sd_event_source *command_source;
        int command_pidfd;
        sd_event_source **target_sources; /* one per "pids" process (pidfd), when they bound the recording */
        size_t n_target_sources, n_targets_alive;
        char *command_cmdline;     /* the held command's until its exec names it */
        sd_event_source *linger;   /* frees a finished recording nobody collects */

        RecordingState state;
        RecordingEndReason reason;
        int error;                 /* negative errno of the first failure */
        char *error_message;
        size_t stage;              /* index into recording_stages */
        sd_bus_message **stop_waiters;
        size_t n_stop_waiters;

        uint64_t samples;
        uint64_t lost_samples;
        uint64_t bad_records;      /* malformed records from the kernel, dropped */
        PerfSpill spill;           /* records moved out of the rings while the helper worked */
        bool draining;             /* reading the rings or the spill right now */
        bool replaying;            /* reading the spill right now */
        SampleUnwinder unwinder;   /* dwarf/auto: tables, queue and counters */
        uint64_t published_samples;
        uint64_t final_bytes;      /* Bytes once the writer is closed */
        bool free_pending;
        unsigned ticks;
        uint64_t sample_buffer[CAPTURE_SAMPLE_MAX_ADDRS];

        /* Control fd rings and system counters (recording-control.c). */
        ControlServer *control;
        Counters *counters;
        CounterIdAllocator counter_ids;
};

/* Starts a recording for the caller of `call` into capture_fd (already
 * checked). Takes over *options. On failure error says why. */
int recording_start(Manager *m, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                    const Authorization *auth, int capture_fd, Recording **ret, sd_bus_error *error);

/* Ends the recording (no-op unless recording): see the sequence above. */
void recording_end(Recording *r, RecordingEndReason reason, int error, const char *message);

/* Unregisters and frees everything (ends it first if needed, without stages). */
void recording_free(Recording *r);

/* For asynchronous stages: the current stage is over (result < 0: it
 * failed; the failure is logged in the stats and the next stage runs). */
void recording_stage_done(Recording *r, int result);

/* Moves the records in the rings to the spill (a helper request is under
 * way and the rings would overflow); the next drain handles them first. */
void recording_spill_rings(Recording *r);

/* Emits Progress(stage, done, total) for a post-stop stage. */
void recording_emit_progress(Recording *r, const char *stage, uint64_t done, uint64_t total);

/* Name of a reason, as in Finished's stats "reason". */
const char *recording_end_reason_to_string(RecordingEndReason reason);
const char *recording_state_to_string(RecordingState state);
