/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-fd.h: Sysprof's trace fd (SYSPROF_TRACE_FD, GJS_TRACE_FD,
 * GTK_TRACE_FD): a memfd a profiled program writes a whole capture of its
 * own into (libsysprof-capture's sysprof_capture_writer_new_from_env/_fd).
 * At the end of the recording each one's frames are read as untrusted
 * input, like control-ring data: the file is copied out with pread (the
 * program can change or truncate it at any moment; it is never mapped),
 * every length and field goes through the capture reader's checks, a frame
 * must be of a type a program may claim (frame-copy.h), carry the pid of a
 * process the recording records and a time inside the recording. The frames
 * that pass are appended to the capture in time order, counter ids
 * remapped; the others are counted as refused. A program that writes
 * garbage loses only its own frames. See docs/control-fd.md. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic.h"
#include "capture.h"
#include "counters.h"
#include "frame-copy.h"

#define TRACE_MAX_FDS 16                  /* per recording */
#define TRACE_MAX_BYTES (32u << 20)       /* read of one trace fd; the rest is refused. The
                                           * merge gives way to the event loop (yield) */
#define TRACE_MAX_FRAMES (1u << 20)       /* frames kept of one trace fd */
#define TRACE_MAX_COUNTERS 8192           /* remapped counters, all trace fds together */

typedef struct TraceFds TraceFds;

typedef struct TraceFdStats {
        uint64_t fds;             /* trace fds handed out */
        uint64_t bytes;           /* read from them */
        uint64_t frames_copied;
        uint64_t frames_skipped;  /* well-formed, of a type not copied (PROCESS, MAP, JITMAP...) */
        uint64_t frames_refused;  /* malformed, foreign pid, time outside the recording, over a limit */
        int write_error;          /* first error from the CaptureWriter, or 0 */
} TraceFdStats;

/* Whether pid is one of the recording's processes. */
typedef bool (*TracePidFunc)(int32_t pid, void *userdata);

/* Where the frames go and what they must satisfy. */
typedef struct TraceMerge {
        CaptureWriter *writer;
        CounterIdAllocator *ids;
        int64_t start_time, end_time;  /* CLOCK_MONOTONIC ns: frames outside are refused */
        TracePidFunc pid_known;
        ControlAddressFunc address_func; /* optional */
        void *userdata;                  /* for both callbacks */
        /* optional: called between slices of work (a few hundred frames,
         * 1 MiB read), so a caller on a fiber lets the event loop run; a
         * negative return (cancelled) ends the merge with it */
        int (*yield)(void *yield_userdata);
        void *yield_userdata;
} TraceMerge;

int trace_fds_new(TraceFds **ret);
TraceFds *trace_fds_free(TraceFds *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(TraceFds *, trace_fds_free);

/* A new empty memfd; *ret_fd is the program's copy (O_CLOEXEC, the
 * caller passes it on). -EMFILE once TRACE_MAX_FDS were handed out. */
int trace_fds_open(TraceFds *t, int *ret_fd);

/* Reads every trace fd, appends the frames that pass to m->writer and
 * closes them (only once; later calls do nothing). Refusals are explained
 * by one LOG frame per trace fd. Returns the first writer error, else 0;
 * or m->yield's error (frames not yet copied are dropped). */
int trace_fds_merge(TraceFds *t, const TraceMerge *m);

const TraceFdStats *trace_fds_get_stats(const TraceFds *t);
