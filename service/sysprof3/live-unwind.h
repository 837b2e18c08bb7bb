/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* live-unwind.h: one org.gnome.Sysprof3.Unwinder.Unwind session, as
 * Sysprof 48's live unwinder: the client's perf events (opened through
 * PerfEventOpen, with user stack copies) are read here, each sample's user
 * stack is unwound with Periscope's DWARF unwinder (service/unwind/), and
 * the result goes to the client's capture fd as a capture stream (the file
 * header, then PROCESS, MAP, FORK, EXIT and SAMPLE frames) that Sysprof
 * merges into its own capture. Runs on the daemon's event loop; ends when
 * the event fd becomes readable, the capture fd cannot be written, or the
 * daemon stops. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "perf.h"
#include "unwind.h"

typedef struct LiveUnwind LiveUnwind;

typedef struct LiveUnwindSetup {
        sd_event *event;
        UnwindTables *tables;      /* the daemon's (borrowed) */
        PerfRecordLayout layout;   /* what the events' records hold */
        uint32_t stack_size;       /* bytes of user stack per sample (0: frame pointers only) */
        bool kernel;               /* the caller may see kernel addresses */
        uid_t uid;                 /* the caller */
        bool system;               /* the events sample every process (snapshot them all) */
        const int32_t *pids;       /* else the processes they sample (copied) */
        size_t n_pids;
        size_t max_pinned_files;
        unsigned id;               /* for the log */
        void (*on_end)(LiveUnwind *u, void *userdata); /* the session ended (free it there) */
        void *userdata;
} LiveUnwindSetup;

/* Starts a session on perf_fds[i] (events of cpus[i]), all owned from now
 * on (closed on failure too), writing to capture_fd (a dup is taken) until
 * event_fd (owned) is readable. The processes it starts with are written
 * from the event loop's next iteration, after the call was answered. */
int live_unwind_start(const LiveUnwindSetup *setup, int *perf_fds, const int *cpus, size_t n, int event_fd,
                      int capture_fd, LiveUnwind **ret);

/* Drains what is left (samples still waiting for a table compiling are
 * unwound without it), flushes, and frees. NULL is a no-op. */
LiveUnwind *live_unwind_free(LiveUnwind *u);

/* Moves what the rings hold to the session's spill, to be unwound at the
 * next drain: while the daemon waits (for the helper, or writing the start
 * snapshot), the kernel would drop what does not fit a ring. */
void live_unwind_spill_rings(LiveUnwind *u);

/* The perf ring memory a session on events of these CPUs maps and locks
 * in the daemon: one ring (4 MiB and a page) per distinct CPU. */
uint64_t live_unwind_ring_bytes(const int *cpus, size_t n);

/* Whom the session serves. */
uid_t live_unwind_get_uid(const LiveUnwind *u);

/* Samples written so far (tests, logs). */
uint64_t live_unwind_get_samples(const LiveUnwind *u);
