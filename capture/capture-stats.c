/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-stats.c: the `key=value` blocks of a capture (capture-stats.h):
 * the key table, a bounded writer and a bounded reader. */
#include "capture-stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

static const char *const capture_stat_table[_CAPTURE_STAT_MAX] = {
        [CAPTURE_STAT_SAMPLES] = "samples",
        [CAPTURE_STAT_LOST_SAMPLES] = "lost_samples",
        [CAPTURE_STAT_BAD_RECORDS] = "bad_records",
        [CAPTURE_STAT_PROCESSES] = "processes",
        [CAPTURE_STAT_PINNED_FILES] = "pinned_files",
        [CAPTURE_STAT_PIN_FAILURES] = "pin_failures",
        [CAPTURE_STAT_ADDRESSES] = "addresses",
        [CAPTURE_STAT_REASON] = "reason",
        [CAPTURE_STAT_DURATION_NS] = "duration_ns",
        [CAPTURE_STAT_UNWIND] = "unwind",
        [CAPTURE_STAT_KERNEL] = "kernel",
        [CAPTURE_STAT_UNWOUND_SAMPLES] = "unwound_samples",
        [CAPTURE_STAT_UNWOUND_FRAMES] = "unwound_frames",
        [CAPTURE_STAT_UNWIND_FP_FRAMES] = "unwind_fp_frames",
        [CAPTURE_STAT_UNWIND_ENDS] = "unwind_ends",
        [CAPTURE_STAT_UNWIND_STOPS_EARLY] = "unwind_stops_early",
        [CAPTURE_STAT_SPILLED_RECORDS] = "spilled_records",
        [CAPTURE_STAT_HELPER_FAILURES] = "helper_failures",
        [CAPTURE_STAT_UNWIND_HELPER_FAILURES] = "unwind_helper_failures",
        [CAPTURE_STAT_USER_ADDRESSES] = "user_addresses",
        [CAPTURE_STAT_USER_ADDRESSES_NAMED] = "user_addresses_named",
        [CAPTURE_STAT_ADDRESS_BUDGET] = "address_budget",
        [CAPTURE_STAT_ADDRESSES_OVER_BUDGET] = "addresses_over_budget",
        [CAPTURE_STAT_HELPER_MS] = "helper_ms",
        [CAPTURE_STAT_HELPER_BUDGET_MS] = "helper_budget_ms",
        [CAPTURE_STAT_HELPER_BUDGET_SPENT] = "helper_budget_spent",
        [CAPTURE_STAT_CONTAINER_JOINED] = "container_joined",
        [CAPTURE_STAT_CONTAINER_REFUSED] = "container_refused",
        [CAPTURE_STAT_CONTAINER_FAILED] = "container_failed",
        [CAPTURE_STAT_CONTAINER_PROCESSES_LEFT] = "container_processes_left",
        [CAPTURE_STAT_CONTAINER_STOPPED] = "container_stopped",
        [CAPTURE_STAT_PERF_EVENTS] = "perf_events",
        [CAPTURE_STAT_FOLLOWED_THREADS] = "followed_threads",
        [CAPTURE_STAT_NOT_FOLLOWED] = "not_followed",
        [CAPTURE_STAT_TRACE_FDS] = "trace_fds",
        [CAPTURE_STAT_TRACE_FRAMES] = "trace_frames",
        [CAPTURE_STAT_TRACE_FRAMES_REFUSED] = "trace_frames_refused",
        [CAPTURE_STAT_TRACE_FRAMES_SKIPPED] = "trace_frames_skipped",
        [CAPTURE_STAT_CUT_SHORT] = "cut_short",
        [CAPTURE_STAT_NAMES_MISSING] = "names_missing",
        [CAPTURE_STAT_NAMES_CUT_SHORT] = "names_cut_short",
        [CAPTURE_STAT_OFF_CPU] = "off_cpu",
        [CAPTURE_STAT_OFF_CPU_MIN_NS] = "off_cpu_min_ns",
        [CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLE_HZ] = "off_cpu_switch_sample_hz",
        [CAPTURE_STAT_OFF_CPU_BLOCKED] = "off_cpu_blocked",
        [CAPTURE_STAT_OFF_CPU_BLOCKED_NS] = "off_cpu_blocked_ns",
        [CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT] = "off_cpu_blocked_short",
        [CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT_NS] = "off_cpu_blocked_short_ns",
        [CAPTURE_STAT_OFF_CPU_RUNNABLE] = "off_cpu_runnable",
        [CAPTURE_STAT_OFF_CPU_RUNNABLE_NS] = "off_cpu_runnable_ns",
        [CAPTURE_STAT_OFF_CPU_STACKS] = "off_cpu_stacks",
        [CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLES] = "off_cpu_switch_samples",
        [CAPTURE_STAT_OFF_CPU_HELD_DROPPED] = "off_cpu_held_dropped",
        [CAPTURE_STAT_OFF_CPU_UNPAIRED] = "off_cpu_unpaired",
        [CAPTURE_STAT_OFF_CPU_SPANNED_PAUSE] = "off_cpu_spanned_pause",
        [CAPTURE_STAT_OFF_CPU_IN_PROGRESS] = "off_cpu_in_progress",
        [CAPTURE_STAT_OFF_CPU_PAUSES] = "off_cpu_pauses",
        [CAPTURE_STAT_OFF_CPU_PAUSED_NS] = "off_cpu_paused_ns",
        [CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_RECORDS_PER_S] = "off_cpu_peak_switch_records_per_s",
        [CAPTURE_STAT_OFF_CPU_STACK_PAUSES] = "off_cpu_stack_pauses",
        [CAPTURE_STAT_OFF_CPU_STACKS_PAUSED_NS] = "off_cpu_stacks_paused_ns",
        [CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_SAMPLES_PER_S] = "off_cpu_peak_switch_samples_per_s",
        [CAPTURE_STAT_OFF_CPU_MAX_STACK_PERIOD] = "off_cpu_max_stack_period",
        [CAPTURE_STAT_PYTHON_PROCESSES] = "python_processes",
        [CAPTURE_STAT_PYTHON_SAMPLES] = "python_samples",
        [CAPTURE_STAT_PYTHON_FRAMES] = "python_frames",
        [CAPTURE_STAT_PYTHON_READ_FAILURES] = "python_read_failures",
        [CAPTURE_STAT_PYTHON_UNMATCHED] = "python_unmatched",
        [CAPTURE_STAT_PYTHON_AFTER_EXIT] = "python_after_exit",
        [CAPTURE_STAT_PYTHON_LATE] = "python_late",
        [CAPTURE_STAT_PYTHON_READ_NS] = "python_read_ns",
        [CAPTURE_STAT_PYTHON_DELAY_MEAN_NS] = "python_delay_mean_ns",
        [CAPTURE_STAT_PYTHON_DELAY_MAX_NS] = "python_delay_max_ns",
};

const char *capture_stat_to_string(CaptureStat s) {
        return s >= 0 && s < _CAPTURE_STAT_MAX ? capture_stat_table[s] : NULL;
}

CaptureStat capture_stat_from_string(const char *s) {
        if (s)
                for (int i = 0; i < _CAPTURE_STAT_MAX; i++)
                        if (strcmp(capture_stat_table[i], s) == 0)
                                return (CaptureStat) i;
        return _CAPTURE_STAT_INVALID;
}

/* [a-z0-9_-], 1 to CAPTURE_STATS_KEY_MAX bytes. */
static bool key_is_valid(const char *key, size_t len) {
        if (len == 0 || len > CAPTURE_STATS_KEY_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') || key[i] == '_' ||
                      key[i] == '-'))
                        return false;
        return true;
}

/* ---- writing ---- */

void capture_stats_buffer_clear(CaptureStatsBuffer *b) {
        free(b->data);
        *b = (CaptureStatsBuffer) {};
}

static int buffer_fail(CaptureStatsBuffer *b, int r) {
        if (b->error == 0)
                b->error = r;
        return b->error;
}

static int buffer_append(CaptureStatsBuffer *b, const char *s, size_t len) {
        if (b->len + len > CAPTURE_STATS_MAX)
                return buffer_fail(b, -E2BIG);
        if (GROW_ARRAY(b->data, b->allocated, b->len + len, 1024) < 0)
                return buffer_fail(b, -ENOMEM);
        memcpy(b->data + b->len, s, len);
        b->len += len;
        return 0;
}

/* "prefix" "suffix" "=" value "\n": the line appended whole, or nothing. */
static int buffer_add_line(CaptureStatsBuffer *b, const char *prefix, const char *suffix, const char *value,
                           size_t value_len) {
        if (b->error < 0)
                return b->error;
        size_t pl = strlen(prefix), sl = suffix ? strlen(suffix) : 0;
        if (pl + sl > CAPTURE_STATS_KEY_MAX || !key_is_valid(prefix, pl) || (suffix && !key_is_valid(suffix, sl)))
                return buffer_fail(b, -EINVAL);
        if (b->len + pl + sl + 2 + value_len > CAPTURE_STATS_MAX)
                return buffer_fail(b, -E2BIG);
        (void) buffer_append(b, prefix, pl);
        (void) buffer_append(b, suffix ? suffix : "", sl);
        (void) buffer_append(b, "=", 1);
        (void) buffer_append(b, value, value_len);
        return buffer_append(b, "\n", 1);
}

static const char *key_name(CaptureStat key) {
        const char *k = capture_stat_to_string(key);
        return k ? k : ""; /* "": refused as a key */
}

int capture_stats_add_u64_key(CaptureStatsBuffer *b, const char *key, uint64_t value) {
        char v[24];
        int n = snprintf(v, sizeof v, "%" PRIu64, value);
        return buffer_add_line(b, key ? key : "", NULL, v, (size_t) n);
}

int capture_stats_add_string_key(CaptureStatsBuffer *b, const char *key, const char *value) {
        if (!value)
                return buffer_fail(b, -EINVAL);
        return buffer_add_line(b, key ? key : "", NULL, value, strcspn(value, "\n"));
}

int capture_stats_add_u64(CaptureStatsBuffer *b, CaptureStat key, uint64_t value) {
        return capture_stats_add_u64_key(b, key_name(key), value);
}

int capture_stats_add_i64(CaptureStatsBuffer *b, CaptureStat key, int64_t value) {
        char v[24];
        int n = snprintf(v, sizeof v, "%" PRId64, value);
        return buffer_add_line(b, key_name(key), NULL, v, (size_t) n);
}

int capture_stats_add_bool(CaptureStatsBuffer *b, CaptureStat key, bool value) {
        return capture_stats_add_string_key(b, key_name(key), value ? "true" : "false");
}

int capture_stats_add_string(CaptureStatsBuffer *b, CaptureStat key, const char *value) {
        return capture_stats_add_string_key(b, key_name(key), value);
}

int capture_stats_add_unwind_stop(CaptureStatsBuffer *b, const char *reason, uint64_t value) {
        char v[24];
        int n = snprintf(v, sizeof v, "%" PRIu64, value);
        if (!reason)
                return buffer_fail(b, -EINVAL);
        return buffer_add_line(b, CAPTURE_STAT_UNWIND_STOP_PREFIX, reason, v, (size_t) n);
}

const char *capture_stats_buffer_get(const CaptureStatsBuffer *b, size_t *ret_len) {
        *ret_len = b->len;
        return b->data ? b->data : "";
}

int capture_writer_add_stats(CaptureWriter *w, int64_t time, const char *id, const CaptureStatsBuffer *b) {
        if (b->error < 0)
                return b->error;
        size_t len;
        const char *text = capture_stats_buffer_get(b, &len);
        return capture_writer_add_metadata(w, time, -1, -1, id, text, len);
}

/* ---- reading ---- */

struct CaptureStats {
        char *text; /* a copy, cut into keys and values in place */
        CaptureStatsEntry *entries;
        size_t n_entries, allocated;
        size_t n_malformed;
};

void capture_stats_free(CaptureStats *s) {
        if (!s)
                return;
        free(s->text);
        free(s->entries);
        free(s);
}

/* Takes the line at l (NUL-terminated, its newline cut) as an entry, or
 * counts it as malformed. */
static int stats_add_line(CaptureStats *s, char *l) {
        char *eq = strchr(l, '=');
        if (!eq || !key_is_valid(l, (size_t) (eq - l)) || s->n_entries >= CAPTURE_STATS_MAX_ENTRIES) {
                s->n_malformed++;
                return 0;
        }
        *eq = '\0';
        if (capture_stats_lookup(s, l)) {
                s->n_malformed++; /* the first one counts */
                return 0;
        }
        if (GROW_ARRAY(s->entries, s->allocated, s->n_entries + 1, 32) < 0)
                return -ENOMEM;
        s->entries[s->n_entries++] = (CaptureStatsEntry) { .key = l, .value = eq + 1 };
        return 0;
}

int capture_stats_parse(const char *text, CaptureStats **ret) {
        size_t len = text ? strnlen(text, CAPTURE_STATS_MAX + 1) : 0;
        if (len > CAPTURE_STATS_MAX)
                return -E2BIG;
        CaptureStats *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->text = strndup(text ? text : "", len);
        if (!s->text) {
                capture_stats_free(s);
                return -ENOMEM;
        }
        for (char *l = s->text, *next; l && *l; l = next) {
                char *nl = strchr(l, '\n');
                next = nl ? nl + 1 : NULL;
                if (nl)
                        *nl = '\0';
                if (*l == '\0')
                        continue; /* an empty line: nothing, not malformed */
                int r = stats_add_line(s, l);
                if (r < 0) {
                        capture_stats_free(s);
                        return r;
                }
        }
        *ret = s;
        return 0;
}

int capture_frame_get_stats(const CaptureFrame *f, const char *id, CaptureStats **ret) {
        if (f->type != CAPTURE_FRAME_METADATA || strcmp(f->metadata.id, id) != 0)
                return 0;
        int r = capture_stats_parse(f->metadata.metadata, ret);
        return r < 0 ? r : 1;
}

size_t capture_stats_get_n_entries(const CaptureStats *s) {
        return s ? s->n_entries : 0;
}

const CaptureStatsEntry *capture_stats_get_entry(const CaptureStats *s, size_t i) {
        return s && i < s->n_entries ? &s->entries[i] : NULL;
}

size_t capture_stats_get_n_malformed(const CaptureStats *s) {
        return s ? s->n_malformed : 0;
}

const char *capture_stats_lookup(const CaptureStats *s, const char *key) {
        if (!s || !key)
                return NULL;
        for (size_t i = 0; i < s->n_entries; i++)
                if (strcmp(s->entries[i].key, key) == 0)
                        return s->entries[i].value;
        return NULL;
}

const char *capture_stats_get(const CaptureStats *s, CaptureStat key) {
        return capture_stats_lookup(s, capture_stat_to_string(key));
}

int capture_stats_get_u64(const CaptureStats *s, CaptureStat key, uint64_t *ret) {
        const char *v = capture_stats_get(s, key);
        if (!v)
                return -ENOENT;
        return parse_bounded_u64(v, 0, UINT64_MAX, ret) < 0 ? -EBADMSG : 0;
}

int capture_stats_get_bool(const CaptureStats *s, CaptureStat key) {
        const char *v = capture_stats_get(s, key);
        if (!v)
                return -ENOENT;
        if (strcmp(v, "true") == 0)
                return 1;
        if (strcmp(v, "false") == 0)
                return 0;
        return -EBADMSG;
}
