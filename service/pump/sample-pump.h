/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-pump.h: from the perf rings to a sink, the one way samples go
 * (docs/unwinding.md). The pump reads a recording's rings (or an Unwind
 * session's), parses each record, builds each sample's stack (frame
 * pointers, or DWARF unwinding of the copied stack through service/unwind/)
 * and hands the results to a SamplePumpSink: samples with their addresses,
 * mappings, comms and task events. What it keeps on the way is its own:
 *
 * - the spill (perf-spill.h): while the daemon waits for the helper, the
 *   rings are copied here as they are; the next drain hands them on first;
 * - the unwinder's queue (sample-unwind.h): samples whose table still
 *   compiles wait there, in order; while it is full, later samples wait in
 *   the spill (never compiled on the event loop);
 * - slices: at most SAMPLE_UNWIND_FLUSH_BATCH spilled records and queued
 *   samples per drain; the rest goes on from an idle-priority event source
 *   (the sink's wake()), after what the loop has pending (D-Bus calls,
 *   other recordings: Properties.Get stays quick under a backlog);
 * - the counts: samples the kernel lost and the spill dropped, once each,
 *   and malformed records.
 *
 * The sink knows none of this: it writes what it is handed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "off-cpu.h"
#include "perf.h"
#include "process.h"
#include "unwind.h"

typedef struct SamplePump SamplePump;

/* What the pump hands on, in the rings' time order. A callback returning a
 * negative errno stops the drain, which returns it. */
typedef struct SamplePumpSink {
        /* A sample and its stack (innermost first, with context markers);
         * with s->off_cpu_ns > 0 the stack a thread blocked in, taken when
         * it left the CPU, and how long it stayed off (off-cpu.h). */
        int (*sample)(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata);
        /* Every MMAP2 record: the sink puts it in its ProcessMaps first (the
         * pump then asks for the table of an executable one). */
        int (*mmap2)(const PerfMmap2 *m, void *userdata);
        int (*comm)(const PerfComm *c, void *userdata);
        /* FORK (fork true) or EXIT. */
        int (*task)(const PerfTask *t, bool fork, void *userdata);
        /* Optional, before a sample's stack is built: false drops the sample;
         * *dwarf = false builds it from the kernel's callchain; s->regs may
         * point at the sink's own array, valid until the next call. */
        bool (*filter)(PerfSample *s, bool *dwarf, void *userdata);
        /* Optional: work may go on (a slice ended with some left, or unwind
         * tables came): drain again from here. Never called during a drain. */
        void (*wake)(void *userdata);
        /* Optional (required with off_cpu): an interval off the CPU that
         * has no stack (preempted, or its switch was not sampled). */
        int (*off_cpu)(const OffCpuInterval *iv, void *userdata);
} SamplePumpSink;

typedef struct SamplePumpSetup {
        sd_event *event;         /* for the slices */
        PerfRecordLayout layout; /* what the events' records hold */
        RecordUnwind unwind;     /* fp: the kernel's callchains only */
        UnwindTables *tables;    /* the daemon's (borrowed); NULL: no DWARF */
        uint32_t owner;          /* whose samples (the uid): its turn at compiles */
        const ProcessMaps *maps; /* the sink's, where its mmap2() puts mappings */
        bool kernel;             /* keep kernel addresses */
        /* Ask for a table at each new executable mapping and in
         * sample_pump_prepare_all() (not for a whole system: most of its
         * files are never sampled). */
        bool prepare_tables;
        size_t max_addrs;       /* addresses per sample (0: CAPTURE_SAMPLE_MAX_ADDRS) */
        size_t max_spill_bytes; /* 0: PERF_SPILL_DEFAULT_MAX_BYTES */
        /* The events have PerfEventsConfig.off_cpu: pair their switches
         * (off-cpu.h); blocked intervals shorter than this are counted. */
        bool off_cpu;
        uint64_t off_cpu_min_ns;
        const SamplePumpSink *sink;
        void *userdata;
} SamplePumpSetup;

typedef struct SamplePumpStats {
        uint64_t lost_samples;    /* LOST records' counts and samples the spill dropped */
        uint64_t bad_records;     /* malformed records, dropped */
        uint64_t spilled_records; /* records ever moved to the spill */
        uint64_t slices;          /* slices run from the event loop */
        size_t queued;            /* samples waiting in the unwinder's queue now */
        bool waiting;             /* samples wait now (spilled or queued) */
        bool sliced;              /* the last drain stopped at a slice's end with work left */
        SampleUnwindStats unwind; /* the DWARF unwinder's counters */
} SamplePumpStats;

/* A pump handing on to setup->sink (copied: it must outlive the pump). */
int sample_pump_new(const SamplePumpSetup *setup, SamplePump **ret);

/* Frees the spill and the queue (what waits there is dropped: drain with
 * `last` first). NULL is a no-op; returns NULL. */
SamplePump *sample_pump_free(SamplePump *p);

/* The spill first (a slice of it), then every ring of perf (NULL: none any
 * more), then the queued samples whose tables came (a slice). With `last`
 * everything, a table still compiling as none: nothing waits after it.
 * Returns the sink's first error, else 1 when work was left for the next
 * slice (the sink's wake() comes), else 0. A no-op returning 0 during a
 * drain (a sink callback's wait for the helper). */
int sample_pump_drain(SamplePump *p, PerfEvents *perf, bool last);

/* The pump's two inputs as PerfRecordHandlers (userdata: the pump), for
 * records read elsewhere: one record handed on (or into the spill behind
 * the ones waiting there), and one record moved to the spill unparsed. */
int sample_pump_record(const struct perf_event_header *h, size_t size, void *userdata);
int sample_pump_spill_record(const struct perf_event_header *h, size_t size, void *userdata);

/* Moves what perf's rings hold to the spill, unparsed (while the daemon
 * waits for the helper the kernel would drop what does not fit a ring).
 * A no-op during a drain: its readers are in use. */
void sample_pump_spill_rings(SamplePump *p, PerfEvents *perf);

/* Asks for the tables of every mapping in the maps (after a start
 * snapshot) when setup->prepare_tables. */
void sample_pump_prepare_all(SamplePump *p);

/* At the end of sampling, after the last drain: every thread still off
 * the CPU gets its interval up to end_time (CLOCK_MONOTONIC ns), written
 * as ended ones are, so a thread blocked through the end (a deadlock, a
 * long read) is seen. Returns 0 or a negative errno from the sink. */
int sample_pump_end_off_cpu(SamplePump *p, uint64_t end_time);

/* The off-CPU tracker's counts and threads (NULL without off_cpu). */
const OffCpuTracker *sample_pump_get_off_cpu(const SamplePump *p);

/* The off-CPU events were restarted at time (CLOCK_MONOTONIC ns) after a
 * pause: intervals that began before it are dropped. */
void sample_pump_off_cpu_resumed(SamplePump *p, uint64_t time);

/* Statistics and what waits now. */
void sample_pump_get_stats(const SamplePump *p, SamplePumpStats *ret);
