/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-stats.c: a recording's statistics: the periscope.stats block
 * (its own keys, then each part's, in the parts' order) and the counts
 * the D-Bus face shows. */
#include "recording-private.h"

#include <stdarg.h>
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

void recording_stats_printf(RecordingStatsText *s, const char *fmt, ...) {
        if (s->len < 0 || (size_t) s->len >= sizeof(s->buf))
                return; /* full: the rest is left out */
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(s->buf + s->len, sizeof(s->buf) - (size_t) s->len, fmt, ap);
        va_end(ap);
        s->len = k < 0 ? -1 : s->len + k;
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
static void recording_write_own_stats(Recording *rec, RecordingStatsText *s, int64_t end) {
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        const SampleUnwindStats *ust = &pst.unwind;
        size_t n_pids;
        (void) process_maps_get_pids(rec->maps, &n_pids);
        size_t n_addrs;
        (void) address_set_get_entries(rec->addresses, &n_addrs);
        recording_stats_printf(s,
                               "samples=%llu\nlost_samples=%llu\nbad_records=%llu\nprocesses=%zu\n"
                               "pinned_files=%zu\npin_failures=%llu\naddresses=%zu\nreason=%s\nduration_ns=%lld\n"
                               "unwind=%s\nkernel=%s\nunwound_samples=%llu\nunwound_frames=%llu\n"
                               "unwind_fp_frames=%llu\nunwind_ends=%llu\nunwind_stops_early=%llu\n"
                               "spilled_records=%llu\nhelper_failures=%llu\nunwind_helper_failures=%llu\n"
                               "user_addresses=%llu\nuser_addresses_named=%llu\n",
                               (unsigned long long) rec->samples, (unsigned long long) pst.lost_samples,
                               (unsigned long long) recording_bad_records(rec), n_pids, pinned_files_get_n(rec->pinned),
                               (unsigned long long) pinned_files_get_failures(rec->pinned), n_addrs,
                               recording_end_reason_to_string(rec->reason), (long long) (end - rec->start_time),
                               record_unwind_to_string(rec->options.unwind), rec->kernel ? "true" : "false",
                               (unsigned long long) ust->samples, (unsigned long long) ust->frames,
                               (unsigned long long) ust->fp_frames, (unsigned long long) ust->stops[UNWIND_STOP_END],
                               (unsigned long long) (ust->samples - ust->stops[UNWIND_STOP_END]),
                               (unsigned long long) pst.spilled_records,
                               (unsigned long long) recording_helper_failures(rec),
                               (unsigned long long) recording_unwind_helper_failures(rec),
                               (unsigned long long) rec->stage_results.user_addresses,
                               (unsigned long long) rec->stage_results.user_named);
        /* Why user stacks ended, one line per reason ("unwind_stop_no_info=3"). */
        for (int i = 0; i < _UNWIND_STOP_MAX; i++)
                if (ust->stops[i] > 0)
                        recording_stats_printf(s, "unwind_stop_%s=%llu\n", unwind_stop_to_string(i),
                                               (unsigned long long) ust->stops[i]);
        /* The budgets: addresses left as module+0xOFFSET, the helper's time. */
        recording_stats_printf(s,
                               "address_budget=%zu\naddresses_over_budget=%llu\nhelper_ms=%llu\n"
                               "helper_budget_ms=%u\nhelper_budget_spent=%s\n",
                               rec->budgets.max_addresses,
                               (unsigned long long) address_set_get_over_limit(rec->addresses),
                               (unsigned long long) rec->stage_results.helper_ms, rec->budgets.symbolize_ms,
                               rec->stage_results.helper_budget_spent ? "true" : "false");
}

void recording_write_stats(Recording *rec) {
        RecordingStatsText s = {};
        int64_t now = now_monotonic_ns();
        /* The capture covers the sampling window, not the post-stop work:
         * a 3 s recording lasts 3 s, whatever symbolizing took after. */
        int64_t end = rec->sampling_end_time > 0 ? rec->sampling_end_time : now;
        recording_write_own_stats(rec, &s, end);
        FOREACH_PART(p, rec)
                PART_CALL(p, write_stats, rec, &s);
        if (s.len < 0)
                s.len = 0;
        if ((size_t) s.len >= sizeof(s.buf))
                s.len = (int) sizeof(s.buf) - 1;
        int r = capture_writer_add_metadata(rec->writer, now, -1, -1, "periscope.stats", s.buf, (size_t) s.len);
        if (r < 0)
                recording_fail(rec, r, "writing the statistics failed: %m");
        for (RecordingPart *p = rec->parts; r >= 0 && p < rec->parts + rec->n_parts; p++)
                if (p->vtable->write_stats_frames)
                        p->vtable->write_stats_frames(p->state, rec, now);
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
