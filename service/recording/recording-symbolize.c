/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-symbolize.c: the last post-stop stage, naming every address
 * the recording noted, and the statistics of what the stages could not
 * finish when the service was stopping. */
#include "recording-private.h"

#include <stdio.h>
#include <stdlib.h>

#include "basic.h"
#include "symbolize.h"

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
static int symbolize_stage(void *part, Recording *rec, const RecordingStageInput *in, RecordingStageResults *results,
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
        *run = (SymbolizeRun){ in->recording_id, results, progress, done, userdata, NULL };
        int r = symbolize_stage_start(in->event, &si, symbolize_progress, symbolize_done, run, &run->job);
        if (r < 0)
                return r;
        /* the run belongs to symbolize_done() now */
        *ret_job = (RecordingStageJob){ symbolize_cancel, run->job };
        TAKE_PTR(run);
        return 1;
}

/* What the post-stop stages could not finish (the service was stopping):
 * `periscope info` and `periscope record` say it. */
static void symbolize_write_stats(void *part, Recording *rec, CaptureStatsBuffer *out) {
        char cut[64];
        if (rec->stage_results.cut)
                (void) capture_stats_add_string(out, CAPTURE_STAT_CUT_SHORT,
                                                recording_cut_to_string(rec->stage_results.cut, cut, sizeof cut));
        if (rec->stage_results.cut & RECORDING_CUT_SYMBOLIZE) {
                (void) capture_stats_add_string(out, CAPTURE_STAT_NAMES_MISSING,
                                                rec->cut.why ? rec->cut.why : "cut short");
                (void) capture_stats_add_u64(out, CAPTURE_STAT_NAMES_CUT_SHORT, rec->stage_results.names_cut_short);
        }
}

const RecordingPartVTable recording_part_symbolize = {
        .name = "symbolize",
        .stage_name = "symbolize",
        .stage = symbolize_stage,
        .write_stats = symbolize_write_stats,
};
