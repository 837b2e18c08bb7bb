/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-private.h: what a Recording holds, for recording.c and its
 * parts in this folder only; everyone else sees the opaque type of
 * recording.h and its functions. */
#pragma once

#include "recording.h"

struct Recording {
        unsigned id;
        uid_t owner_uid;
        bool kernel;
        bool check_owner;
        UserLimits *limits;
        UserCharge ring_charge;    /* the perf rings, against the owner's limit */
        UserCharge event_charge;   /* its perf event fds, against the owner's limit */
        UserCharge thread_charge;  /* the threads its events were opened on, likewise */
        char budget_message[384];  /* why the last of those two refused */
        uint64_t threads_not_followed; /* processes and threads left out during the recording for them */
        uint64_t n_events, n_threads;  /* what it held of them at its end (the statistics) */
        sd_event *event;
        HelperClientConfig helper;
        RecordingBudgets budgets;
        PerfOpener *perf_opener; /* borrowed; NULL: events opened here */
        PerfOpenerWait perf_wait; /* during recording_start() only (RecordingSetup) */
        void *perf_wait_userdata;
        const RecordingObserver *observer;
        void *observer_userdata;

        RecordOptions options;
        int64_t start_time;        /* CLOCK_MONOTONIC ns, as in the capture header */
        int64_t sampling_end_time; /* when sampling stopped (0: not yet): the capture's end */

        CaptureWriter *writer;
        PerfEvents *perf;
        OffCpuGovernor off_cpu_governor; /* `off-cpu`: pauses its events under a switch storm */
        SamplePump *pump;            /* the rings to recording.c's sink (spill, unwinder queue, slices) */
        UnwindTables *unwind_tables; /* the daemon's (borrowed); NULL: no DWARF */
        ProcessMaps *maps;
        ThreadTable *thread_names; /* current name per tid: what a new thread inherits */
        PinnedFiles *pinned;
        JitFiles *jit_files;             /* the processes' perf maps, pinned at first sight */
        Resolver *resolver;        /* containers/sandboxes: pin fallback, per-process descriptions */
        struct Fiber *describe_fiber;  /* parses processes' /.flatpak-info, writes their descriptions */
        HelperClient *describe_helper; /* its helper (waits go back to the loop); used on it only */
        CallerOpener *as_caller;   /* owner other than root: opens with its rights; NULL for root */
        AddressSet *addresses;
        ContainerFollow *follow;   /* `container`: processes joining it are added on the tick */
        struct Fiber *attach_fiber; /* opens the later events (joins, re-attaches), awaiting the opener */
        bool attach_scan;           /* a container rescan waits for it */
        pid_t *attach_execs;        /* processes to sample again after an exec, waiting for it */
        size_t n_attach_execs, allocated_attach_execs;

        sd_event_source *tick;     /* drain + flush */
        sd_event_source **ring_sources;
        size_t n_ring_sources;
        sd_event_source *duration_timer;
        sd_event_source *command_source;
        int command_pidfd;
        sd_event_source **target_sources; /* one per "pids" process (pidfd), when they bound the recording */
        size_t n_target_sources, n_targets_alive;
        char *command_cmdline;     /* the held command's until its exec names it */

        RecordingState state;
        RecordingEndReason reason;
        int error;                 /* negative errno of the first failure */
        char *error_message;
        size_t stage;              /* index into recording_stages */
        RecordingStageInput stage_input; /* what the stages get (valid while finishing) */
        RecordingStageJob stage_job;     /* the stage going on in the event loop, if any */
        bool stages_cancelled;           /* recording_cancel_stages(): none starts any more */
        SymbolizeCut cut;                /* recording_cut_short(): why (static), and whether now */

        uint64_t samples;
        uint64_t bad_records; /* malformed records the rings' readers dropped (the pump counts its own) */
        RecordingStageResults stage_results;  /* what the post-stop stages reported */
        uint64_t unwind_helper_failures_start; /* the shared tables' count when the recording began */
        bool told_table_wait;                  /* "N samples wait for unwind tables" was logged */
        bool awaiting_tables;      /* stopped: samples wait for tables compiling (before the stages) */
        uint64_t samples_before_wait; /* r->samples when that wait began (its Progress) */
        uint64_t published_samples;
        uint64_t final_bytes;      /* Bytes once the writer is closed */
        unsigned ticks;

        /* Control fd rings and system counters (recording-control.c). */
        ControlServer *control;
        UserCharge control_ring_charge; /* its rings, against the owner's limit */
        Counters *counters;
        CounterIdAllocator counter_ids;
        TraceFds *trace;           /* Sysprof trace fds handed out (recording-trace.c); NULL if none */
};
