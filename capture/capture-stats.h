/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-stats.h: Periscope's `key=value` blocks in a capture, defined once
 * for the service that writes them and analysis/ and the CLI that read
 * them (docs/capture-format.md):
 *  - METADATA `periscope.stats`: what the recorder counted (the CaptureStat
 *    keys below, plus `unwind_stop_<reason>` per reason user stacks ended);
 *  - METADATA `periscope.control`: what the control sockets carried;
 *  - FILE_CHUNK `periscope:container`: a process's container.
 * A block is lines `key=value\n`: a key is [a-z0-9_-], a value any bytes but
 * a newline. The writer appends typed values into a growing, bounded
 * buffer; the reader parses a block, skipping (and counting) lines that are
 * not of that shape, and looks values up by key. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture-types.h"
#include "capture-writer.h"

#define CAPTURE_STATS_ID "periscope.stats"
#define CAPTURE_CONTROL_ID "periscope.control"
#define CAPTURE_CONTAINER_PATH "periscope:container"

/* The keys of a `periscope:container` description (docs/containers.md). */
#define CAPTURE_CONTAINER_ENGINE "engine"
#define CAPTURE_CONTAINER_ID "id"
#define CAPTURE_CONTAINER_NAME "name"
#define CAPTURE_CONTAINER_IMAGE "image"
#define CAPTURE_CONTAINER_RUNTIME "runtime"
#define CAPTURE_CONTAINER_OWNER_UID "owner-uid"
#define CAPTURE_CONTAINER_ROOTLESS "rootless"

#define CAPTURE_STATS_MAX 65536        /* bytes of a block, written or read */
#define CAPTURE_STATS_KEY_MAX 64       /* bytes of a key */
#define CAPTURE_STATS_MAX_ENTRIES 1024 /* lines of a block read */
#define CAPTURE_STAT_UNWIND_STOP_PREFIX "unwind_stop_"

/* The keys of `periscope.stats`, in the order the service writes them. */
typedef enum CaptureStat {
        CAPTURE_STAT_SAMPLES,
        CAPTURE_STAT_LOST_SAMPLES,
        CAPTURE_STAT_BAD_RECORDS,
        CAPTURE_STAT_PROCESSES,
        CAPTURE_STAT_PINNED_FILES,
        CAPTURE_STAT_PIN_FAILURES,
        CAPTURE_STAT_ADDRESSES,
        CAPTURE_STAT_REASON,
        CAPTURE_STAT_DURATION_NS,
        CAPTURE_STAT_UNWIND,
        CAPTURE_STAT_KERNEL,
        CAPTURE_STAT_UNWOUND_SAMPLES,
        CAPTURE_STAT_UNWOUND_FRAMES,
        CAPTURE_STAT_UNWIND_FP_FRAMES,
        CAPTURE_STAT_UNWIND_ENDS,
        CAPTURE_STAT_UNWIND_STOPS_EARLY,
        CAPTURE_STAT_SPILLED_RECORDS,
        CAPTURE_STAT_HELPER_FAILURES,
        CAPTURE_STAT_UNWIND_HELPER_FAILURES,
        CAPTURE_STAT_USER_ADDRESSES,
        CAPTURE_STAT_USER_ADDRESSES_NAMED,
        /* (here: unwind_stop_<reason>, capture_stats_add_unwind_stop()) */
        CAPTURE_STAT_ADDRESS_BUDGET,
        CAPTURE_STAT_ADDRESSES_OVER_BUDGET,
        CAPTURE_STAT_HELPER_MS,
        CAPTURE_STAT_HELPER_BUDGET_MS,
        CAPTURE_STAT_HELPER_BUDGET_SPENT,
        CAPTURE_STAT_CONTAINER_JOINED,
        CAPTURE_STAT_CONTAINER_REFUSED,
        CAPTURE_STAT_CONTAINER_FAILED,
        CAPTURE_STAT_CONTAINER_PROCESSES_LEFT,
        CAPTURE_STAT_CONTAINER_STOPPED,
        CAPTURE_STAT_PERF_EVENTS,
        CAPTURE_STAT_FOLLOWED_THREADS,
        CAPTURE_STAT_NOT_FOLLOWED,
        CAPTURE_STAT_TRACE_FDS,
        CAPTURE_STAT_TRACE_FRAMES,
        CAPTURE_STAT_TRACE_FRAMES_REFUSED,
        CAPTURE_STAT_TRACE_FRAMES_SKIPPED,
        CAPTURE_STAT_CUT_SHORT,
        CAPTURE_STAT_NAMES_MISSING,
        CAPTURE_STAT_NAMES_CUT_SHORT,
        CAPTURE_STAT_OFF_CPU,
        CAPTURE_STAT_OFF_CPU_MIN_NS,
        CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLE_HZ,
        CAPTURE_STAT_OFF_CPU_BLOCKED,
        CAPTURE_STAT_OFF_CPU_BLOCKED_NS,
        CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT,
        CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT_NS,
        CAPTURE_STAT_OFF_CPU_RUNNABLE,
        CAPTURE_STAT_OFF_CPU_RUNNABLE_NS,
        CAPTURE_STAT_OFF_CPU_STACKS,
        CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLES,
        CAPTURE_STAT_OFF_CPU_HELD_DROPPED,
        CAPTURE_STAT_OFF_CPU_UNPAIRED,
        CAPTURE_STAT_OFF_CPU_SPANNED_PAUSE,
        CAPTURE_STAT_OFF_CPU_IN_PROGRESS,
        CAPTURE_STAT_OFF_CPU_PAUSES,
        CAPTURE_STAT_OFF_CPU_PAUSED_NS,
        CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_RECORDS_PER_S,
        CAPTURE_STAT_OFF_CPU_STACK_PAUSES,
        CAPTURE_STAT_OFF_CPU_STACKS_PAUSED_NS,
        CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_SAMPLES_PER_S,
        CAPTURE_STAT_OFF_CPU_MAX_STACK_PERIOD,
        CAPTURE_STAT_PYTHON_PROCESSES,     /* interpreters located (docs/python.md) */
        CAPTURE_STAT_PYTHON_SAMPLES,       /* samples given Python frames */
        CAPTURE_STAT_PYTHON_FRAMES,        /* Python frames written into them */
        CAPTURE_STAT_PYTHON_READ_FAILURES, /* samples whose Python frames could not be read */
        CAPTURE_STAT_PYTHON_UNMATCHED,     /* samples whose eval calls and Python entry frames disagreed */
        CAPTURE_STAT_PYTHON_AFTER_EXIT,    /* samples drained after their process exited: nothing to read */
        CAPTURE_STAT_PYTHON_LATE,          /* samples drained too late to read their frames: left native */
        CAPTURE_STAT_PYTHON_READ_NS,       /* time spent reading chains, all samples */
        CAPTURE_STAT_PYTHON_DELAY_MEAN_NS, /* how long after the sample its Python frames were read, on average */
        CAPTURE_STAT_PYTHON_DELAY_MAX_NS,  /* and at most */
        _CAPTURE_STAT_MAX,
        _CAPTURE_STAT_INVALID = -EINVAL,
} CaptureStat;

/* "lost_samples" for CAPTURE_STAT_LOST_SAMPLES; NULL out of range. */
const char *capture_stat_to_string(CaptureStat s);
/* The key named s, or -EINVAL (unwind_stop_<reason> is not one). */
CaptureStat capture_stat_from_string(const char *s);

/* ---- writing a block ---- */

/* A block being written: zero-initialized (`CaptureStatsBuffer b = {};`),
 * filled by the capture_stats_add_*() calls, handed to
 * capture_writer_add_stats(), freed by capture_stats_buffer_clear(). The
 * first failure (-ENOMEM, -E2BIG past CAPTURE_STATS_MAX, -EINVAL for a bad
 * key) sticks: later calls do nothing and return it, and so does the
 * hand-over, so a caller may check only that one. */
typedef struct CaptureStatsBuffer {
        char *data;
        size_t len, allocated;
        int error;
} CaptureStatsBuffer;

void capture_stats_buffer_clear(CaptureStatsBuffer *b);

int capture_stats_add_u64(CaptureStatsBuffer *b, CaptureStat key, uint64_t value);
int capture_stats_add_i64(CaptureStatsBuffer *b, CaptureStat key, int64_t value);
/* "true"/"false". */
int capture_stats_add_bool(CaptureStatsBuffer *b, CaptureStat key, bool value);
/* value up to its first newline (a value is one line). */
int capture_stats_add_string(CaptureStatsBuffer *b, CaptureStat key, const char *value);
/* `unwind_stop_<reason>=value`; reason is [a-z0-9_-]. */
int capture_stats_add_unwind_stop(CaptureStatsBuffer *b, const char *reason, uint64_t value);
/* A key of another block (`periscope.control`, `periscope:container`). */
int capture_stats_add_u64_key(CaptureStatsBuffer *b, const char *key, uint64_t value);
int capture_stats_add_string_key(CaptureStatsBuffer *b, const char *key, const char *value);

/* The block's text (not NUL-terminated) and its length. */
const char *capture_stats_buffer_get(const CaptureStatsBuffer *b, size_t *ret_len);

/* Writes b as a METADATA frame id (CAPTURE_STATS_ID, CAPTURE_CONTROL_ID):
 * b's sticky error, or the writer's. */
int capture_writer_add_stats(CaptureWriter *w, int64_t time, const char *id, const CaptureStatsBuffer *b);

/* ---- reading a block ---- */

typedef struct CaptureStatsEntry {
        const char *key;
        const char *value;
} CaptureStatsEntry;

typedef struct CaptureStats CaptureStats;

/* Parses text (NUL-terminated, at most CAPTURE_STATS_MAX bytes read) into
 * *ret. Lines that are not `key=value` with a valid key, repeated keys (the
 * first one counts) and lines past CAPTURE_STATS_MAX_ENTRIES are skipped and
 * counted; an empty text is an empty block. 0, -ENOMEM, or -E2BIG when the
 * text is longer than CAPTURE_STATS_MAX. */
int capture_stats_parse(const char *text, CaptureStats **ret);
/* 1 with the block of a METADATA frame with that id (CAPTURE_STATS_ID,
 * CAPTURE_CONTROL_ID), 0 if f is another frame, or a negative errno as
 * capture_stats_parse(). */
int capture_frame_get_stats(const CaptureFrame *f, const char *id, CaptureStats **ret);
void capture_stats_free(CaptureStats *s);

/* The entries in the order of the text; lines skipped as malformed. */
size_t capture_stats_get_n_entries(const CaptureStats *s);
const CaptureStatsEntry *capture_stats_get_entry(const CaptureStats *s, size_t i);
size_t capture_stats_get_n_malformed(const CaptureStats *s);

/* The value of key, or NULL when the block has none (s may be NULL). */
const char *capture_stats_get(const CaptureStats *s, CaptureStat key);
const char *capture_stats_lookup(const CaptureStats *s, const char *key);
/* key's value as a decimal number: 0, -ENOENT when absent, -EBADMSG when
 * not a number (or past UINT64_MAX). */
int capture_stats_get_u64(const CaptureStats *s, CaptureStat key, uint64_t *ret);
/* 1 for "true", 0 for "false", -ENOENT when absent, -EBADMSG otherwise. */
int capture_stats_get_bool(const CaptureStats *s, CaptureStat key);
