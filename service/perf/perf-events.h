/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-events.h: the perf_event_open side of a recording. Opens cpu-clock
 * sampling events (per task with inherit, or per CPU for the whole system),
 * maps one ring buffer per CPU, and hands every record found in the rings to
 * a callback after checking its size against the ring. Nothing here knows
 * about captures; perf-record.h decodes the records. */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf-opener.h"
#include "perf-ring.h"

typedef struct PerfEvents PerfEvents;

typedef struct PerfEventsConfig {
        uint32_t frequency;        /* samples per second per CPU/task */
        bool kernel;               /* kernel samples and kernel callchains */
        uint64_t sample_type;      /* PERF_SAMPLE_* (IP|TID|TIME|CPU|CALLCHAIN at least) */
        uint64_t sample_regs_user; /* with PERF_SAMPLE_REGS_USER */
        uint32_t sample_stack_user;/* bytes, with PERF_SAMPLE_STACK_USER */
        bool exclude_callchain_user; /* kernel part only in the callchain (user part unwound from the copy) */
        unsigned ring_pages;       /* data pages per CPU ring (power of two); 0: default */
        PerfOpener *opener;        /* the daemon's perf opener (borrowed); NULL: open them here */
        PerfOpenerWait wait;       /* how the opener's answers are awaited (perf_open_wait()); NULL: here */
        void *wait_userdata;
        /* Off-CPU (docs/off-cpu.md): beside each sampling event a
         * context-switches event with context_switch=1 writing into the same
         * ring: PERF_RECORD_SWITCH records at every switch and, at most
         * `frequency` times a second, a sample (stack) at a switch-out.
         * Needs PERF_SAMPLE_IDENTIFIER in sample_type (to tell its samples
         * from the CPU clock's: perf_events_is_switch_id()). */
        bool off_cpu;
        /* A budget (the owner's per-user limits): asked before the events
         * of one task (tid > 0) or the whole system (tid -1) are opened,
         * for the n_fds fds they take at most (one per CPU, three with
         * off_cpu); a negative errno refuses them, which the add call
         * returns with nothing of that task opened. NULL: no budget. What
         * it granted stays taken until perf_events_free(). */
        int (*reserve)(void *userdata, pid_t tid, size_t n_fds);
        void *reserve_userdata;
} PerfEventsConfig;

/* Prepares an empty set of events with one (not yet mapped) ring per CPU. */
int perf_events_new(const PerfEventsConfig *config, PerfEvents **ret);

/* Frees events and rings. NULL is a no-op. */
PerfEvents *perf_events_free(PerfEvents *p);

/* Samples task `tid` (and, through inherit, every thread and child it
 * creates later) on every CPU, into the per-CPU rings. The config's
 * reserve() is asked first. The new events start disabled, also while
 * recording: perf_events_start_task() starts them once the task was
 * checked (or perf_events_enable(), all). */
int perf_events_add_task(PerfEvents *p, pid_t tid);

/* Starts task tid's events if the events are enabled (a task added while
 * recording); its revoked events stay stopped. */
int perf_events_start_task(PerfEvents *p, pid_t tid);

/* Stops the events of task tid for good (perf_events_enable() skips them):
 * for a task that turned out not to be the one that was authorized (its
 * process ended and the pid was reused while the events were opened).
 * Returns how many events were revoked. */
int perf_events_revoke_task(PerfEvents *p, pid_t tid);

/* From now on the opener's answers are awaited through wait (NULL: on
 * this stack, perf_open()): a recording opens its first events on its
 * start's fiber, the later ones (a process joining a container, a
 * re-attach after an exec) on its attach fiber. */
void perf_events_set_wait(PerfEvents *p, PerfOpenerWait wait, void *userdata);

/* Samples everything on every CPU. */
int perf_events_add_system(PerfEvents *p);

/* Takes an event someone else opened (fd, owned from now on) as one of
 * cpu's: the first becomes that CPU's ring (mapped here), later ones write
 * into it. Its records must have the layout of p's config. For
 * org.gnome.Sysprof3.Unwinder, whose client opens the events. */
int perf_events_adopt(PerfEvents *p, int fd, int cpu);

/* Starts/stops counting on every event. */
int perf_events_enable(PerfEvents *p);
int perf_events_disable(PerfEvents *p);

/* The most bytes of ring buffers the events may map (a ring and its
 * metadata page for every CPU), known before any event is added. */
uint64_t perf_events_get_max_ring_bytes(const PerfEvents *p);

/* Number of rings (one per CPU that has at least one event) and the fd that
 * polls readable when ring i passes its watermark. */
size_t perf_events_get_n_rings(const PerfEvents *p);
int perf_events_get_ring_fd(const PerfEvents *p, size_t i);

/* Hands every pending record of every ring to handler, all rings merged in
 * time order. Records whose size does not fit the ring are counted
 * (perf_events_get_bad_records) and the rest of that ring is dropped.
 * Returns the number of records handled. */
int perf_events_drain(PerfEvents *p, PerfRecordHandler handler, void *userdata);

/* Records dropped because their header was malformed. */
uint64_t perf_events_get_bad_records(const PerfEvents *p);

/* The ids (PERF_SAMPLE_IDENTIFIER) of the off-CPU (context-switches)
 * events opened so far: a sample with one was taken at a switch-out. */
const uint64_t *perf_events_get_switch_ids(const PerfEvents *p, size_t *ret_n);

/* The two kinds of off-CPU events, as bits. */
#define PERF_EVENTS_SWITCH_RECORDS 1 /* PERF_RECORD_SWITCH records */
#define PERF_EVENTS_SWITCH_STACKS 2  /* a sample at each switch-out */

/* Stops (pause) or restarts the off-CPU events of these kinds alone, the
 * sampling ones going on: how a recording samples a storm of context
 * switches in time (docs/off-cpu.md). Returns 1 when it changed something,
 * 0 when not. */
int perf_events_pause_switches(PerfEvents *p, int kinds, bool pause);

/* A stack sample at every period-th switch-out from now on (1: every
 * one). Per task only the events opened by perf_events_add_task() and the
 * threads created after take it (inherited events keep theirs): the
 * recording uses it for per-CPU events (perf_events_add_system()). */
int perf_events_set_switch_period(PerfEvents *p, uint64_t period);

/* The fds the events of one task (or the whole system) take at most. */
size_t perf_events_fds_per_task(const PerfEvents *p);

/* Number of perf events opened so far. */
size_t perf_events_get_n_events(const PerfEvents *p);

/* True if the running kernel fills in build-ids in MMAP2 records. */
bool perf_events_have_build_ids(const PerfEvents *p);
