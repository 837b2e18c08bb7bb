/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-stages.c: the post-stop stages, in the order they run. */
#include "recording-stages.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "basic.h"
#include "fiber.h"
#include "symbolize.h"

/* The control rings' drain while it goes on in the event loop. */
typedef struct ControlDrainRun {
        unsigned recording_id;
        ControlServer *control;
        uint64_t total;
        RecordingStageDone done;
        RecordingStageProgress progress;
        void *userdata;
} ControlDrainRun;

static void control_drained(void *userdata) {
        _cleanup_free_ ControlDrainRun *run = userdata;
        log_recording(LOG_INFO, run->recording_id, "control rings: %.1f MiB left at the Stop copied from the event loop",
                      run->total / 1048576.0);
        run->progress("control-rings", run->total, run->total, run->userdata);
        run->done(0, run->userdata);
}

static void control_drain_cancel(void *job) {
        ControlDrainRun *run = job;
        control_server_stop(run->control); /* the rest at once */
        control_drained(run);
}

/* Copies what programs had written to their control rings when the
 * recording stopped (up to 4 MiB a ring) into the capture, before the
 * symbolize stage names the addresses it holds; a slice at a time, so a
 * program that flooded its rings does not hold the service at its Stop. */
static int stage_control_rings(const RecordingStageInput *in, RecordingStageResults *results,
                               RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                               RecordingStageJob *ret_job) {
        if (!in->control)
                return 0;
        uint64_t total = control_server_get_backlog(in->control);
        if (total == 0)
                return 0;
        _cleanup_free_ ControlDrainRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (ControlDrainRun) { in->recording_id, in->control, total, done, progress, userdata };
        progress("control-rings", 0, total, userdata);
        int r = control_server_drain_async(in->control, control_drained, run);
        if (r <= 0)
                return r;
        /* the run belongs to control_drained() now */
        *ret_job = (RecordingStageJob) { control_drain_cancel, run };
        TAKE_PTR(run);
        return 1;
}

/* The descriptions of processes whose /.flatpak-info still waited for its
 * parse when sampling stopped (docs/containers.md). */
typedef struct DescribeRun {
        const RecordingStageInput *in;
        RecordingStageProgress progress;
        RecordingStageDone done;
        void *userdata;
        Fiber *fiber;
        HelperClient *helper;
        uint64_t described, total;
} DescribeRun;

static int describe_run_wait(int fd, unsigned timeout_ms, void *userdata) {
        DescribeRun *run = userdata;
        return fiber_wait_readable(fd, timeout_ms, run->fiber);
}

static void describe_run_yield(void *userdata) {
        DescribeRun *run = userdata;
        (void) fiber_yield(run->fiber);
}

void recording_repin(Resolver *resolver, ProcessMaps *maps, PinnedFiles *pinned, pid_t pid) {
        PodmanStorage *storage;
        const PodmanContainer *container;
        if (resolver && pinned && resolver_get_podman(resolver, pid, &storage, &container) >= 0)
                (void) process_repin_mappings(maps, pinned, pid);
}

static int describe_body(Fiber *f, void *userdata) {
        DescribeRun *run = userdata;
        const RecordingStageInput *in = run->in;
        HelperClientConfig c = in->helper;
        c.time_budget_ms = 0;
        c.timeout_ms = 5000; /* users' files are small: longer is hung */
        c.wait_readable = describe_run_wait;
        c.wait_readable_userdata = run;
        c.yield = describe_run_yield;
        int r = helper_client_new(&c, &run->helper);
        if (r < 0)
                return r;
        pid_t pid;
        while (resolver_next_pending(in->resolver, &pid) > 0) {
                r = resolver_parse_pending(in->resolver, pid, run->helper);
                if (r < 0 && r != -ENOENT) {
                        resolver_drop_pending(in->resolver, pid); /* rejected, or no time left */
                        r = 0; /* a Podman process is still described: its id, what was found */
                }
                size_t n_maps = 0;
                /* described only when recorded (rescans look at others too) */
                if (r >= 0 && process_maps_get(in->maps, (int32_t) pid, &n_maps) && n_maps > 0) {
                        recording_repin(in->resolver, in->maps, in->pinned, pid);
                        r = container_frames_write(in->writer, in->resolver, in->end_time, pid);
                        if (r < 0)
                                return r;
                        run->described++;
                }
                run->progress("container-descriptions", run->described, run->total, run->userdata);
                (void) fiber_yield(f);
        }
        return 0;
}

static void describe_done(int result, void *userdata) {
        _cleanup_free_ DescribeRun *run = userdata;
        helper_client_free(run->helper);
        log_recording(LOG_INFO, run->in->recording_id, "%llu sandboxed processes described after sampling%s",
                      (unsigned long long) run->described, result == -ECANCELED ? " (cut short)" : "");
        run->done(result == -ECANCELED ? 0 : result, run->userdata);
}

static void describe_cancel(void *job) {
        DescribeRun *run = job;
        fiber_cancel(run->fiber);
}

/* Parses the /.flatpak-info files that still wait (processes seen shortly
 * before the stop) and writes those processes' descriptions. On a fiber:
 * the helper's waits go back to the event loop. */
static int stage_container_descriptions(const RecordingStageInput *in, RecordingStageResults *results,
                                        RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                                        RecordingStageJob *ret_job) {
        pid_t pid;
        if (!in->resolver || !in->writer || resolver_next_pending(in->resolver, &pid) <= 0)
                return 0;
        uint64_t total = 0;
        for (; resolver_next_pending(in->resolver, &pid) > 0 && in->cut && in->cut->now; total++)
                resolver_drop_pending(in->resolver, pid);
        if (total > 0) {
                log_recording(LOG_INFO, in->recording_id, "%llu sandboxed processes not described: %s",
                              (unsigned long long) total, in->cut->why);
                return 0;
        }
        total = resolver_count_pending(in->resolver);
        _cleanup_free_ DescribeRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (DescribeRun) { in, progress, done, userdata, NULL, NULL, 0, total };
        progress("container-descriptions", 0, total, userdata);
        int r = fiber_start(in->event, "describing a recording's sandboxed processes", describe_body, describe_done,
                            run, &run->fiber);
        if (r < 0)
                return r;
        /* the run belongs to describe_done() now */
        *ret_job = (RecordingStageJob) { describe_cancel, run };
        TAKE_PTR(run);
        return 1;
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
static int stage_trace_fds(const RecordingStageInput *in, RecordingStageResults *results,
                           RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                           RecordingStageJob *ret_job) {
        if (!in->trace || !in->writer)
                return 0;
        if (in->cut && in->cut->now) {
                log_recording(LOG_INFO, in->recording_id, "trace fds not merged: %s", in->cut->why);
                results->cut |= RECORDING_CUT_TRACE_FDS;
                return 0;
        }
        _cleanup_free_ TraceMergeRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (TraceMergeRun) { in->recording_id, results, in->trace, in->trace_merge, done, progress, userdata, NULL };
        progress("trace-fds", 0, trace_fds_get_stats(in->trace)->fds, userdata);
        int r = fiber_start(in->event, "merging a recording's trace fds", trace_merge_body, trace_merge_done, run, &run->fiber);
        if (r < 0)
                return r;
        /* the run belongs to trace_merge_done() now */
        *ret_job = (RecordingStageJob) { trace_merge_cancel, run };
        TAKE_PTR(run);
        return 1;
}

/* Writes which files were pinned and how, as the embedded file
 * /.periscope/pinned-files (one line per file:
 * "major:minor inode how checked|unchecked path"), so a report can
 * say where each file's symbols came from. */
static int stage_pinned_files(const RecordingStageInput *in, RecordingStageResults *results,
                              RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                              RecordingStageJob *ret_job) {
        size_t n = pinned_files_get_n(in->pinned);
        size_t size = 0, allocated = 0;
        _cleanup_free_ char *buf = NULL;
        progress("pinned-files", 0, n, userdata);
        for (size_t i = 0; i < n; i++) {
                const PinnedFile *p = pinned_files_get(in->pinned, i);
                char line[PATH_MAX + 128];
                int len = snprintf(line, sizeof(line), "%u:%u %llu %s %s %s\n", major(p->dev), minor(p->dev),
                                   (unsigned long long) p->inode, pinned_file_how_to_string(p->how),
                                   p->identity_checked ? "checked" : "unchecked", p->path);
                if (len < 0 || (size_t) len >= sizeof(line))
                        continue;
                if (size + (size_t) len + 1 > allocated) {
                        size_t a = allocated ? allocated * 2 : 4096;
                        while (a < size + (size_t) len + 1)
                                a *= 2;
                        char *b = realloc(buf, a);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        allocated = a;
                }
                memcpy(buf + size, line, (size_t) len);
                size += (size_t) len;
        }
        progress("pinned-files", n, n, userdata);
        if (size == 0 || !in->writer)
                return 0;
        /* A METADATA frame holds at most one frame of text: large lists go in a file. */
        return capture_writer_add_file(in->writer, in->start_time, -1, -1, "/.periscope/pinned-files", buf, size);
}

/* The symbolize stage while it runs in the event loop. */
typedef struct SymbolizeRun {
        unsigned recording_id;
        RecordingStageResults *results;
        RecordingStageProgress progress;
        RecordingStageDone done;
        void *userdata;
        SymbolizeJob *job;
} SymbolizeRun;

static void symbolize_progress(uint64_t done, uint64_t total, void *userdata) {
        SymbolizeRun *run = userdata;
        run->progress("symbolize", done, total, run->userdata);
}

/* What a symbolize run did, into the results and the log. */
static void symbolize_account(unsigned recording_id, RecordingStageResults *results, int result,
                              const SymbolizeStats *st, int64_t msec) {
        results->helper_failures += st->helper_failures;
        results->user_addresses += st->user_addresses;
        results->user_named += st->user_resolved;
        results->helper_ms += st->helper_ms;
        results->helper_budget_spent |= st->helper_budget_spent;
        results->names_cut_short += st->cut_short;
        if (st->cut_short > 0)
                results->cut |= RECORDING_CUT_SYMBOLIZE;
        if (result >= 0)
                log_recording(LOG_INFO, recording_id,
                              "symbolized %llu addresses (%llu named, %llu unresolved, %llu of them cut short) in "
                              "%llu files, %llu debug files, %llu helper failures, %llu named from JIT files, helper "
                              "busy %llu ms%s, %lld ms",
                              (unsigned long long) st->addresses, (unsigned long long) st->resolved,
                              (unsigned long long) st->unresolved, (unsigned long long) st->cut_short,
                              (unsigned long long) st->files, (unsigned long long) st->debug_files,
                              (unsigned long long) st->helper_failures, (unsigned long long) st->jit_named,
                              (unsigned long long) st->helper_ms, st->helper_budget_spent ? " (time budget spent)" : "",
                              (long long) msec);
}

static void symbolize_done(int result, const SymbolizeStats *st, int64_t msec, void *userdata) {
        _cleanup_free_ SymbolizeRun *run = userdata;
        symbolize_account(run->recording_id, run->results, result, st, msec);
        run->done(result, run->userdata);
}

static void symbolize_cancel(void *job) {
        symbolize_job_cancel(job);
}

/* Names every address the recording noted and embeds the symbol tables in
 * its capture (option "symbolize"; skipped when off), in the event loop. */
static int stage_symbolize(const RecordingStageInput *in, RecordingStageResults *results,
                           RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                           RecordingStageJob *ret_job) {
        if (!in->options->symbolize || !in->writer || !in->addresses)
                return 0;
        SymbolizeStageInput si = {
                .writer = in->writer,
                .addresses = in->addresses,
                .maps = in->maps,
                .pinned = in->pinned,
                .jit_files = in->jit_files,
                .resolver = in->resolver,
                .kernel_symbols = in->kernel,
                .debuginfod = in->options->debuginfod,
                .helper = in->helper,
                .cut = in->cut,
        };
        if (in->cut && in->cut->now) {
                /* No time left: no helper; the tables say what is missing,
                 * with the build-ids `periscope symbolize` needs (kernel
                 * names still come from kallsyms, in the daemon). */
                SymbolizeStats st;
                int64_t msec;
                progress("symbolize", 0, 0, userdata);
                int r = symbolize_stage_run(&si, NULL, NULL, &st, &msec);
                symbolize_account(in->recording_id, results, r, &st, msec);
                return r;
        }
        _cleanup_free_ SymbolizeRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (SymbolizeRun) { in->recording_id, results, progress, done, userdata, NULL };
        int r = symbolize_stage_start(in->event, &si, symbolize_progress, symbolize_done, run, &run->job);
        if (r < 0)
                return r;
        /* the run belongs to symbolize_done() now */
        *ret_job = (RecordingStageJob) { symbolize_cancel, run->job };
        TAKE_PTR(run);
        return 1;
}

const RecordingStage recording_stages[] = {
        { "container-descriptions", stage_container_descriptions },
        { "control-rings", stage_control_rings },
        { "trace-fds", stage_trace_fds },
        { "pinned-files", stage_pinned_files },
        { "symbolize", stage_symbolize },
};

const size_t recording_n_stages = ELEMENTSOF(recording_stages);
