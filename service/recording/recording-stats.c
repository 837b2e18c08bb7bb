/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-stats.c: a recording's statistics: the periscope.stats block
 * (its own keys, then each part's, in the parts' order) and the counts
 * the D-Bus face shows. */
#include "recording-private.h"

#include <stdio.h>
#include <string.h>

#include "basic.h"

static const char *const reason_names[] = {
        [RECORDING_END_NONE] = "none",
        [RECORDING_END_STOPPED] = "stopped",
        [RECORDING_END_DURATION] = "duration",
        [RECORDING_END_COMMAND_EXITED] = "command-exited",
        [RECORDING_END_CLIENT_VANISHED] = "client-vanished",
        [RECORDING_END_SHUTDOWN] = "shutdown",
        [RECORDING_END_ERROR] = "error",
        [RECORDING_END_TARGETS_EXITED] = "targets-exited",
};

const char *recording_end_reason_to_string(RecordingEndReason reason) {
        return (size_t) reason < ELEMENTSOF(reason_names) ? reason_names[reason] : "unknown";
}

const char *recording_state_to_string(RecordingState state) {
        switch (state) {
        case RECORDING_STATE_RECORDING:
                return "recording";
        case RECORDING_STATE_STOPPING:
                return "stopping";
        case RECORDING_STATE_FINISHING:
                return "finishing";
        case RECORDING_STATE_FINISHED:
                return "finished";
        }
        return "unknown";
}

/* Files the sandboxed helper failed on during this recording: in its
 * post-stop stages, and compiling unwind tables (the daemon's tables are
 * shared: what failed while this recording ran). */
uint64_t recording_unwind_helper_failures(const Recording *rec) {
        if (!rec->unwind_tables)
                return 0;
        return unwind_tables_get_stats(rec->unwind_tables).helper_failures - rec->unwind_helper_failures_start;
}

uint64_t recording_helper_failures(const Recording *rec) {
        return rec->stage_results.helper_failures + recording_unwind_helper_failures(rec);
}

/* Samples the kernel lost or the pump's spill dropped. */
uint64_t recording_lost_samples(const Recording *rec) {
        SamplePumpStats st = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &st);
        return st.lost_samples;
}

/* Malformed records: those the rings' readers and the pump dropped. */
uint64_t recording_bad_records(const Recording *rec) {
        SamplePumpStats st = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &st);
        return rec->bad_records + st.bad_records;
}

/* The recording's own keys: samples, processes, files, unwinding, the
 * budgets of symbolization (docs/security.md). */
static void recording_write_own_stats(Recording *rec, CaptureStatsBuffer *b, int64_t end) {
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        const SampleUnwindStats *ust = &pst.unwind;
        size_t n_pids;
        (void) process_maps_get_pids(rec->maps, &n_pids);
        size_t n_addrs;
        (void) address_set_get_entries(rec->addresses, &n_addrs);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_SAMPLES, rec->samples);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_LOST_SAMPLES, pst.lost_samples);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_BAD_RECORDS, recording_bad_records(rec));
        (void) capture_stats_add_u64(b, CAPTURE_STAT_PROCESSES, n_pids);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_PINNED_FILES, pinned_files_get_n(rec->pinned));
        (void) capture_stats_add_u64(b, CAPTURE_STAT_PIN_FAILURES, pinned_files_get_failures(rec->pinned));
        (void) capture_stats_add_u64(b, CAPTURE_STAT_ADDRESSES, n_addrs);
        (void) capture_stats_add_string(b, CAPTURE_STAT_REASON, recording_end_reason_to_string(rec->reason));
        (void) capture_stats_add_i64(b, CAPTURE_STAT_DURATION_NS, end - rec->start_time);
        (void) capture_stats_add_string(b, CAPTURE_STAT_UNWIND, record_unwind_to_string(rec->options.unwind));
        (void) capture_stats_add_bool(b, CAPTURE_STAT_KERNEL, rec->kernel);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_UNWOUND_SAMPLES, ust->samples);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_UNWOUND_FRAMES, ust->frames);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_UNWIND_FP_FRAMES, ust->fp_frames);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_UNWIND_ENDS, ust->stops[UNWIND_STOP_END]);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_UNWIND_STOPS_EARLY, ust->samples - ust->stops[UNWIND_STOP_END]);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_SPILLED_RECORDS, pst.spilled_records);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_HELPER_FAILURES, recording_helper_failures(rec));
        (void) capture_stats_add_u64(b, CAPTURE_STAT_UNWIND_HELPER_FAILURES, recording_unwind_helper_failures(rec));
        (void) capture_stats_add_u64(b, CAPTURE_STAT_USER_ADDRESSES, rec->stage_results.user_addresses);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_USER_ADDRESSES_NAMED, rec->stage_results.user_named);
        /* Why user stacks ended, one line per reason ("unwind_stop_no_info=3"). */
        for (int i = 0; i < _UNWIND_STOP_MAX; i++)
                if (ust->stops[i] > 0)
                        (void) capture_stats_add_unwind_stop(b, unwind_stop_to_string(i), ust->stops[i]);
        /* The budgets: addresses left as module+0xOFFSET, the helper's time. */
        (void) capture_stats_add_u64(b, CAPTURE_STAT_ADDRESS_BUDGET, rec->budgets.max_addresses);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_ADDRESSES_OVER_BUDGET, address_set_get_over_limit(rec->addresses));
        (void) capture_stats_add_u64(b, CAPTURE_STAT_HELPER_MS, rec->stage_results.helper_ms);
        (void) capture_stats_add_u64(b, CAPTURE_STAT_HELPER_BUDGET_MS, rec->budgets.symbolize_ms);
        (void) capture_stats_add_bool(b, CAPTURE_STAT_HELPER_BUDGET_SPENT, rec->stage_results.helper_budget_spent);
}

/* Then each part's keys, in the parts' order; then frames of their own. */
void recording_write_stats(Recording *rec) {
        CaptureStatsBuffer b = {};
        int64_t now = now_monotonic_ns();
        /* The capture covers the sampling window, not the post-stop work:
         * a 3 s recording lasts 3 s, whatever symbolizing took after. */
        int64_t end = rec->sampling_end_time > 0 ? rec->sampling_end_time : now;
        recording_write_own_stats(rec, &b, end);
        FOREACH_PART(p, rec)
        PART_CALL(p, write_stats, rec, &b);
        int r = capture_writer_add_stats(rec->writer, now, CAPTURE_STATS_ID, &b);
        capture_stats_buffer_clear(&b);
        if (r < 0)
                recording_fail(rec, r, "writing the statistics failed: %m");
        for (RecordingPart *p = rec->parts; r >= 0 && p < rec->parts + rec->n_parts; p++)
                PART_CALL(p, write_stats_frames, rec, now);
        capture_writer_set_end_time(rec->writer, end);
}

const char *recording_cut_to_string(unsigned cut, char *buf, size_t size) {
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {
                { RECORDING_CUT_UNWIND_TABLES, "unwind-tables" },
                { RECORDING_CUT_TRACE_FDS, "trace-fds" },
                { RECORDING_CUT_SYMBOLIZE, "symbolize" },
        };
        size_t len = 0;
        if (size > 0)
                buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if ((cut & names[i].bit) && len < size) {
                        int k = snprintf(buf + len, size - len, "%s%s", len ? "," : "", names[i].name);
                        if (k < 0)
                                break;
                        len += (size_t) k;
                }
        return buf;
}

void recording_get_stats(const Recording *rec, RecordingStats *ret) {
        size_t n_pids = 0;
        (void) process_maps_get_pids(rec->maps, &n_pids);
        *ret = (RecordingStats){
                .state = rec->state,
                .reason = rec->reason,
                .error_message = rec->error == 0      ? NULL
                                 : rec->error_message ? rec->error_message
                                                      : strerror(-rec->error),
                .samples = rec->samples,
                .duration_ns = (uint64_t) ((rec->sampling_end_time > 0 ? rec->sampling_end_time : now_monotonic_ns()) -
                                           rec->start_time),
                .lost_samples = recording_lost_samples(rec),
                .bad_records = recording_bad_records(rec),
                .helper_failures = recording_helper_failures(rec),
                .unwind_helper_failures = recording_unwind_helper_failures(rec),
                .user_addresses = rec->stage_results.user_addresses,
                .user_named = rec->stage_results.user_named,
                .addresses_over_budget = address_set_get_over_limit(rec->addresses),
                .helper_budget_spent = rec->stage_results.helper_budget_spent,
                .bytes = rec->writer ? capture_writer_get_bytes(rec->writer) : rec->final_bytes,
                .processes = n_pids,
                .pinned_files = pinned_files_get_n(rec->pinned),
                .cut = rec->stage_results.cut,
                .cut_short = rec->cut.why,
                .names_cut_short = rec->stage_results.names_cut_short,
        };
        FOREACH_PART(p, rec)
        PART_CALL(p, get_stats, rec, ret);
}
