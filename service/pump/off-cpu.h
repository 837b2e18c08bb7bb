/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu.h: from context switches to off-CPU intervals (docs/off-cpu.md).
 * The pump hands every PERF_RECORD_SWITCH of a recording with off-CPU
 * profiles here, and every sample the context-switches event took at a
 * switch-out. Per thread the tracker pairs the switch-out with the next
 * switch-in: the interval's length, and whether the thread blocked or was
 * preempted (runnable). The sample taken at the switch-out is held (copied,
 * its stack cut to the valid part) until the switch-in says whether it is
 * kept: a blocked interval of at least min_ns gets its stack unwound and
 * written; shorter ones are only counted, and preempted ones are written
 * without a stack ("waiting for a CPU"). */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf.h"

/* What a recording's threads did off the CPU, counted. */
typedef struct OffCpuCounts {
        uint64_t blocked, blocked_ns;             /* blocked intervals >= min_ns */
        uint64_t blocked_short, blocked_short_ns; /* blocked intervals < min_ns: counted only */
        uint64_t runnable, runnable_ns;           /* preempted intervals (waiting for a CPU) */
        uint64_t stacks;                          /* blocked intervals written with their stack */
} OffCpuCounts;

typedef struct OffCpuThread {
        uint32_t tid, pid; /* tid 0: an empty slot */
        bool out, preempt;
        bool exited; /* PERF_RECORD_EXIT seen: its last switch-out is no wait */
        uint32_t cpu;
        uint64_t out_time;
        uint8_t *held; /* the switch-out sample, or NULL */
        size_t held_size;
        uint64_t held_time;
        OffCpuCounts counts;
} OffCpuThread;

/* One interval, ended by a switch-in. */
typedef struct OffCpuInterval {
        uint32_t pid, tid, cpu;
        uint64_t time; /* switch-out, CLOCK_MONOTONIC ns */
        uint64_t duration_ns;
        uint8_t state;    /* PERF_OFF_CPU_BLOCKED or _RUNNABLE */
        bool in_progress; /* still off the CPU when sampling ended: cut there */
} OffCpuInterval;

/* Bytes of held samples beyond which a new one is dropped (counted). */
#define OFF_CPU_MAX_HELD_BYTES (32u * 1024u * 1024u)

typedef struct OffCpuTracker {
        uint64_t min_ns;
        PerfRecordLayout layout;
        OffCpuThread *threads; /* open addressing on tid */
        size_t n_threads, allocated;
        size_t held_bytes;
        uint8_t *handed; /* the sample last handed on */
        size_t handed_size;
        OffCpuCounts total;
        uint64_t switch_samples; /* samples taken at switch-outs */
        uint64_t held_dropped;   /* switch-out samples dropped (memory bound) */
        uint64_t unpaired;       /* switch-ins without a switch-out seen */
        uint64_t switch_records; /* PERF_RECORD_SWITCH records taken */
        uint64_t resumed_at;     /* the off-CPU events restarted then: an
                                                   * interval out before it spans a pause */
        uint64_t spanned_pause;  /* intervals dropped for that */
        uint64_t in_progress;    /* intervals cut at the end of sampling */
} OffCpuTracker;

/* Keeps the switch-out sample of s->tid (record h of size bytes, parsed
 * as s) until that thread's switch-in. Returns 0 or -ENOMEM. */
int off_cpu_tracker_hold(OffCpuTracker *t, const struct perf_event_header *h, size_t size, const PerfSample *s);

/* Takes one switch record. Returns 1 when it ended an interval worth
 * writing (*ret filled; *ret_held/_size the held sample to unwind, or NULL
 * for an interval without a stack), valid until the next call; else 0. */
int off_cpu_tracker_switch(OffCpuTracker *t, const PerfSwitch *sw, OffCpuInterval *ret,
                           const struct perf_event_header **ret_held, size_t *ret_held_size);

/* A thread exited (PERF_RECORD_EXIT): its last switch-out, before or after
 * this, starts no wait. A switch-in of the tid again is a new thread. */
void off_cpu_tracker_exit(OffCpuTracker *t, uint32_t tid);

/* At the end of sampling (end_time, after the last switch record): the
 * next thread still off the CPU from *cursor on (start at 0), its
 * interval cut at end_time and marked in_progress, as
 * off_cpu_tracker_switch() returns one. Returns 1 with it, 0 when none
 * is left; the waits they count are counted as ended waits are. */
int off_cpu_tracker_end_next(OffCpuTracker *t, uint64_t end_time, size_t *cursor, OffCpuInterval *ret,
                             const struct perf_event_header **ret_held, size_t *ret_held_size);

/* Frees the threads and what they hold. */
void off_cpu_tracker_done(OffCpuTracker *t);
