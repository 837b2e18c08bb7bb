/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-trace.c: the part of a recording's trace fds (Sysprof's
 * SYSPROF_TRACE_FD, service/control/trace-fd.c): handed out while it
 * records (Recording1.OpenTraceFd), merged into its capture by its
 * "trace-fds" post-stop stage, after the last drain, so the addresses in
 * their SAMPLE and ALLOCATION frames get symbolized too. */
#include "recording-trace.h"
#include "recording-private.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"
#include "fiber.h"

typedef struct Trace {
        TraceFds *fds;    /* NULL until the first is opened */
        TraceMerge merge; /* what their frames must satisfy, where they go */
        bool merging;     /* sampling stopped with trace fds to merge */
} Trace;

int recording_open_trace_fd(Recording *rec, int *ret_fd) {
        Trace *t = recording_part_get(rec, &recording_part_trace);
        if (rec->state != RECORDING_STATE_RECORDING || !rec->writer || !t)
                return -ESTALE;
        if (!t->fds) {
                int r = trace_fds_new(&t->fds);
                if (r < 0)
                        return r;
        }
        return trace_fds_open(t->fds, ret_fd);
}

static int pid_compare(const void *a, const void *b) {
        int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
        return (x > y) - (x < y);
}

/* The recording's processes: those of its snapshot and those its events
 * saw fork (every record is drained by now). */
static bool pid_recorded(int32_t pid, void *userdata) {
        Recording *rec = userdata;
        size_t n = 0;
        const int32_t *pids = process_maps_get_pids(rec->maps, &n);
        return pid > 0 && pids && bsearch(&pid, pids, n, sizeof(int32_t), pid_compare);
}

/* The checks the frames must pass: pids of the recording's processes,
 * times inside it (up to now). A program's bad frames only count as
 * refused. */
static void trace_close(void *part, Recording *rec) {
        Trace *t = part;
        if (!t->fds || !rec->writer || rec->error)
                return;
        t->merge = (TraceMerge){
                .writer = rec->writer,
                .ids = &rec->counter_ids,
                .start_time = rec->start_time,
                .end_time = now_monotonic_ns(),
                .pid_known = pid_recorded,
                .address_func = recording_note_program_addresses,
                .userdata = rec,
        };
        t->merging = true;
}

/* The trace-fd merge while it runs on a fiber. */
typedef struct TraceMergeRun {
        unsigned recording_id;
        RecordingStageResults *results;
        TraceFds *trace;
        TraceMerge merge;
        RecordingStageDone done;
        RecordingStageProgress progress;
        void *userdata;
        Fiber *fiber;
} TraceMergeRun;

static int trace_merge_yield(void *fiber) {
        return fiber_yield(fiber);
}

static int trace_merge_body(Fiber *f, void *userdata) {
        TraceMergeRun *run = userdata;
        run->merge.yield = trace_merge_yield;
        run->merge.yield_userdata = f;
        return trace_fds_merge(run->trace, &run->merge);
}

static void trace_merge_done(int result, void *userdata) {
        _cleanup_free_ TraceMergeRun *run = userdata;
        const TraceFdStats *st = trace_fds_get_stats(run->trace);
        log_recording(LOG_INFO, run->recording_id, "%llu trace fd(s): %llu frames merged, %llu refused, %llu skipped%s",
                      (unsigned long long) st->fds, (unsigned long long) st->frames_copied,
                      (unsigned long long) st->frames_refused, (unsigned long long) st->frames_skipped,
                      result == -ECANCELED ? " (cut short: the recording is going away)" : "");
        run->progress("trace-fds", st->fds, st->fds, run->userdata);
        if (result == -ECANCELED)
                run->results->cut |= RECORDING_CUT_TRACE_FDS;
        run->done(result == -ECANCELED ? 0 : result, run->userdata); /* said above */
}

static void trace_merge_cancel(void *job) {
        TraceMergeRun *run = job;
        fiber_cancel(run->fiber);
}

/* Merges the frames programs wrote into their trace fds (Sysprof's
 * SYSPROF_TRACE_FD, up to TRACE_MAX_BYTES each) into the capture, before
 * the symbolize stage names the addresses they hold. On a fiber: the
 * checks and the copy of a large file give way to the event loop. */
static int trace_stage(void *part, Recording *rec, const RecordingStageInput *in, RecordingStageResults *results,
                       RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                       RecordingStageJob *ret_job) {
        Trace *t = part;
        if (!t->merging || !in->writer)
                return 0;
        if (in->cut && in->cut->now) {
                log_recording(LOG_INFO, in->recording_id, "trace fds not merged: %s", in->cut->why);
                results->cut |= RECORDING_CUT_TRACE_FDS;
                return 0;
        }
        _cleanup_free_ TraceMergeRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (TraceMergeRun){ in->recording_id, results, t->fds, t->merge, done, progress, userdata, NULL };
        progress("trace-fds", 0, trace_fds_get_stats(t->fds)->fds, userdata);
        int r = fiber_start(in->event, "merging a recording's trace fds", trace_merge_body, trace_merge_done, run,
                            &run->fiber);
        if (r < 0)
                return r;
        /* the run belongs to trace_merge_done() now */
        *ret_job = (RecordingStageJob){ trace_merge_cancel, run };
        TAKE_PTR(run);
        return 1;
}

/* Frames merged, and refused (garbage, foreign pids, times outside the recording). */
static void trace_write_stats(void *part, Recording *rec, CaptureStatsBuffer *out) {
        Trace *t = part;
        const TraceFdStats *st = t->fds ? trace_fds_get_stats(t->fds) : NULL;
        if (!st || st->fds == 0)
                return;
        (void) capture_stats_add_u64(out, CAPTURE_STAT_TRACE_FDS, st->fds);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_TRACE_FRAMES, st->frames_copied);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_TRACE_FRAMES_REFUSED, st->frames_refused);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_TRACE_FRAMES_SKIPPED, st->frames_skipped);
}

static void trace_get_stats(const void *part, const Recording *rec, RecordingStats *ret) {
        const Trace *t = part;
        const TraceFdStats *st = t->fds ? trace_fds_get_stats(t->fds) : NULL;
        if (!st)
                return;
        ret->trace_fds = st->fds;
        ret->trace_frames = st->frames_copied;
        ret->trace_frames_refused = st->frames_refused;
}

static void trace_free(void *part, Recording *rec) {
        Trace *t = part;
        t->fds = trace_fds_free(t->fds);
}

const RecordingPartVTable recording_part_trace = {
        .name = "trace",
        .size = sizeof(Trace),
        .close = trace_close,
        .stage_name = "trace-fds",
        .stage = trace_stage,
        .write_stats = trace_write_stats,
        .get_stats = trace_get_stats,
        .free = trace_free,
};
