/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-private.h: what a Recording holds and how its parts plug in,
 * for recording.c and the files of this folder only; everyone else sees
 * the opaque type of recording.h and its functions. */
#pragma once

#include <stdarg.h>

#include "off-cpu-governor.h"
#include "recording.h"

/* ---- the parts (recording-follow.c, recording-off-cpu.c, ...) ---- */

/* One optional concern of a recording (off-CPU, container follow, JIT
 * files, ...), driven by recording.c through this table the way systemd's
 * Manager drives units through their UnitVTable. Every hook is optional
 * (NULL: nothing to do) and gets the part's own state (size bytes, zeroed)
 * and the recording. Hooks run in the order of recording.c's table.
 * Nothing here is called per sample but `sample`, and that only for the
 * parts that set it: records other than samples and batches (drains,
 * ticks). */
typedef struct RecordingPartVTable {
        const char *name;
        size_t size; /* of its state */

        /* Before the perf events exist: 1 keeps the part; 0 declines (not
         * for these options: nothing else of it is called); a negative
         * errno fails the start, *ret_why says why (the D-Bus message)
         * and *ret_name its org.periscope.Error.* name (NULL: from the
         * errno). It may ask cfg for the events it needs. NULL: kept. */
        int (*start)(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why);
        /* The events run and the snapshot is in the capture: sampling begins. */
        int (*begin)(void *part, Recording *rec, const char **ret_name, char **ret_why);

        /* Records the pump hands on: mmap2 after the recording's own frames
         * of it, comm and task before. */
        int (*mmap2)(void *part, Recording *rec, const PerfMmap2 *m);
        int (*comm)(void *part, Recording *rec, const PerfComm *c);
        int (*task)(void *part, Recording *rec, const PerfTask *t, bool fork);
        /* The kernel removed pid's events at an exec (set-id, capabilities). */
        int (*exec_lost)(void *part, Recording *rec, pid_t pid);
        /* Each built sample (on-CPU and off-CPU stacks) before it is written:
         * the part may put other frames in its place, *addrs then pointing
         * to its own buffer (valid until its next call) and *n their count.
         * Only the parts that set it are asked (rec->sample_parts), so it
         * costs nothing to the recordings of none. */
        int (*sample)(void *part, Recording *rec, const PerfSample *s, const uint64_t **addrs, size_t *n);

        void (*drain)(void *part, Recording *rec, bool last); /* after each drain of the rings */
        void (*tick)(void *part, Recording *rec);             /* every 100 ms, after the drain */

        void (*stop)(void *part, Recording *rec);    /* sampling stopped, before the last drain */
        void (*drained)(void *part, Recording *rec); /* after it, the events still open */
        void (*close)(void *part, Recording *rec);   /* the events closed, before the post-stop stages */

        /* Its post-stop stage (recording-stages.h), in table order. */
        const char *stage_name;
        int (*stage)(void *part, Recording *rec, const RecordingStageInput *in, RecordingStageResults *results,
                     RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                     RecordingStageJob *ret_job);

        void (*finish)(void *part, Recording *rec);                               /* after the stages */
        void (*write_stats)(void *part, Recording *rec, CaptureStatsBuffer *out); /* its periscope.stats keys */
        void (*write_stats_frames)(void *part, Recording *rec, int64_t now);      /* frames after periscope.stats */
        void (*get_stats)(const void *part, const Recording *rec, RecordingStats *ret);
        void (*free)(void *part, Recording *rec);
} RecordingPartVTable;

typedef struct RecordingPart {
        const RecordingPartVTable *vtable;
        void *state;
} RecordingPart;

extern const RecordingPartVTable recording_part_follow;
extern const RecordingPartVTable recording_part_budgets;
extern const RecordingPartVTable recording_part_describe;
extern const RecordingPartVTable recording_part_ends;
extern const RecordingPartVTable recording_part_counters;
extern const RecordingPartVTable recording_part_control;
extern const RecordingPartVTable recording_part_trace;
extern const RecordingPartVTable recording_part_pinned_files;
extern const RecordingPartVTable recording_part_symbolize;
extern const RecordingPartVTable recording_part_off_cpu;
extern const RecordingPartVTable recording_part_jit;
extern const RecordingPartVTable recording_part_python;

/* Over the parts kept, in table order; a hook that returns nothing. */
#define FOREACH_PART(p, rec) for (RecordingPart *p = (rec)->parts; p < (rec)->parts + (rec)->n_parts; p++)
#define PART_CALL(p, hook, ...) ((p)->vtable->hook ? (p)->vtable->hook((p)->state, __VA_ARGS__) : (void) 0)

/* The state of the recording's part of that table, NULL when it declined. */
void *recording_part_get(const Recording *rec, const RecordingPartVTable *vtable);

/* ---- the recording ---- */

struct Recording {
        unsigned id;
        uid_t owner_uid;
        bool kernel;
        bool check_owner;
        UserLimits *limits;
        UserCharge ring_charge;        /* the perf rings, against the owner's limit */
        UserCharge event_charge;       /* its perf event fds, against the owner's limit (recording-budgets.c) */
        UserCharge thread_charge;      /* the threads its events were opened on, likewise */
        char budget_message[384];      /* why the last of those two refused */
        uint64_t threads_not_followed; /* processes and threads left out during the recording for them */
        uint64_t n_events, n_threads;  /* what it held of them at its end (the statistics) */
        sd_event *event;
        HelperClientConfig helper;
        RecordingBudgets budgets;
        PerfOpener *perf_opener;  /* borrowed; NULL: events opened here */
        PerfOpenerWait perf_wait; /* during recording_start() only (RecordingSetup) */
        void *perf_wait_userdata;
        const RecordingObserver *observer;
        void *observer_userdata;

        RecordOptions options;
        int64_t start_time;        /* CLOCK_MONOTONIC ns, as in the capture header */
        int64_t sampling_end_time; /* when sampling stopped (0: not yet): the capture's end */

        CaptureWriter *writer;
        PerfEvents *perf;
        SamplePump *pump;            /* the rings to the sink (spill, unwinder queue, slices) */
        UnwindTables *unwind_tables; /* the daemon's (borrowed); NULL: no DWARF */
        ProcessMaps *maps;
        ThreadTable *thread_names; /* current name per tid: what a new thread inherits */
        PinnedFiles *pinned;
        JitFiles *jit_files;     /* the processes' perf maps (looked for by the JIT part) */
        Resolver *resolver;      /* containers/sandboxes: pin fallback, per-process descriptions */
        CallerOpener *as_caller; /* owner other than root: opens with its rights; NULL for root */
        AddressSet *addresses;
        CounterIdAllocator counter_ids; /* counters, control rings and trace fds share it */
        char *command_cmdline;          /* the held command's until its exec names it */

        RecordingPart *parts; /* those that did not decline, in table order */
        size_t n_parts;
        RecordingPart **sample_parts; /* those of them with a sample hook */
        size_t n_sample_parts;

        sd_event_source *tick; /* drain + flush */
        sd_event_source **ring_sources;
        size_t n_ring_sources;

        RecordingState state;
        RecordingEndReason reason;
        int error; /* negative errno of the first failure */
        char *error_message;
        size_t stage;                    /* index into parts: the next one's stage */
        RecordingStageInput stage_input; /* what the stages get (valid while finishing) */
        RecordingStageJob stage_job;     /* the stage going on in the event loop, if any */
        bool stages_cancelled;           /* recording_cancel_stages(): none starts any more */
        SymbolizeCut cut;                /* recording_cut_short(): why (static), and whether now */

        uint64_t samples;
        uint64_t bad_records; /* malformed records the rings' readers dropped (the pump counts its own) */
        RecordingStageResults stage_results;   /* what the post-stop stages reported */
        uint64_t unwind_helper_failures_start; /* the shared tables' count when the recording began */
        bool told_table_wait;                  /* "N samples wait for unwind tables" was logged */
        bool awaiting_tables;                  /* stopped: samples wait for tables compiling (before the stages) */
        uint64_t samples_before_wait;          /* r->samples when that wait began (its Progress) */
        uint64_t published_samples;
        uint64_t final_bytes; /* Bytes once the writer is closed */
        unsigned ticks;
};

/* recording.c: remembers the first failure (%m stands for error); the
 * recording ends with it at the next tick. */
void recording_fail(Recording *rec, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A start failure: *ret_why formatted (NULL when out of memory),
 * *ret_name its org.periscope.Error.* name; returns r. */
int recording_start_error(const char **ret_name, char **ret_why, int r, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
/* Tells the observer that what the D-Bus face shows changed. */
void recording_publish(Recording *rec);
/* A stage's progress, to the observer (a RecordingStageProgress). */
void recording_stage_progress(const char *stage, uint64_t done, uint64_t total, void *userdata);

/* recording-perf.c: the events, the snapshot and the rings' sources. */
extern const SamplePumpSink recording_sink; /* recording-sink.c */
/* What every recording holds, whatever its parts: process tables, pins,
 * JIT files, addresses, a resolver, the caller's rights to open files with. */
int recording_new_tables(Recording *rec, const RecordingSetup *setup, const char **ret_name, char **ret_why);
int recording_arm_perf(Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why);
int recording_snapshot(Recording *rec);
/* A refusal of perf_event_open for what, with its cause. Returns r. */
int recording_perf_error(const Recording *rec, const char **ret_name, char **ret_why, int r, const char *what);
int recording_watch_rings(Recording *rec);
void recording_drain(Recording *rec, bool last); /* recording.c */
void recording_pump_wake(void *userdata);        /* recording.c: SamplePumpSink.wake */
/* Whose a process must still be when its maps are read (process_frames_write()). */
uid_t recording_frames_owner(const Recording *rec);

/* recording-budgets.c: the owner's budgets of perf events and threads. */
int recording_reserve_events(void *userdata, pid_t tid, size_t n_fds); /* PerfEventsConfig.reserve */
/* Events on pid's threads, checked again with the process held;
 * -EDQUOT: the budget is spent (budget_message says which). */
int recording_add_process_tasks(Recording *rec, pid_t pid, bool *ret_not_owner);
/* A process left out for them: logged once, counted. */
void recording_not_followed(Recording *rec, pid_t pid, const char *what);

/* recording-describe.c: pins what only pid's container layers hold, once
 * its Podman store was parsed. */
void recording_repin(Resolver *resolver, ProcessMaps *maps, PinnedFiles *pinned, pid_t pid);

/* recording-control.c: notes a program's code addresses (control ring,
 * trace fd) for symbolization; userdata is the Recording (a ControlAddressFunc). */
void recording_note_program_addresses(int32_t pid, const uint64_t *addrs, size_t n, void *userdata);

/* recording-stats.c: the periscope.stats block (capture-stats.h). */
void recording_write_stats(Recording *rec);
uint64_t recording_lost_samples(const Recording *rec);
uint64_t recording_bad_records(const Recording *rec);
uint64_t recording_helper_failures(const Recording *rec);
uint64_t recording_unwind_helper_failures(const Recording *rec);
