/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-ring.h: reading perf ring buffers. A reader walks one ring between
 * its tail and a snapshot of its head, checking every record size against
 * the ring; perf_rings_merge walks several rings (one per CPU) at once in
 * record time order, so that an exec or mmap that happened on one CPU is
 * handled before the samples taken after it on another. */
#pragma once

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* Called for each record; the record is contiguous, 8-byte aligned and
 * exactly `size` bytes (== header->size). Return negative to stop reading
 * that ring (the record counts as read). */
typedef int (*PerfRecordHandler)(const struct perf_event_header *header, size_t size, void *userdata);

/* When a record happened (CLOCK_MONOTONIC ns); 0 when it does not say. */
typedef uint64_t (*PerfRecordTime)(const struct perf_event_header *header, size_t size, void *userdata);

/* One ring, read from tail up to a snapshot of its head. */
typedef struct PerfRingReader {
        const uint8_t *data;       /* the data area */
        uint64_t data_size;        /* a power of two */
        uint64_t head;             /* data_head when the read began */
        uint64_t tail;             /* the next record; data_tail when done */
        uint8_t *copy;             /* 64 KiB: a record that wraps, made contiguous */
        uint64_t bad_records;      /* malformed headers (each drops the rest of the ring) */
} PerfRingReader;

/* The next record, without consuming it: 1 and the record, or 0 at the end.
 * A size smaller than a header, larger than what is left or not a multiple
 * of 8, or a head more than the ring ahead of the tail, counts one bad
 * record and ends the read (tail jumps to head). */
int perf_ring_reader_peek(PerfRingReader *r, const struct perf_event_header **ret, size_t *ret_size);

/* Hands every record of one ring to handler in ring order. Returns the
 * number of records handled. */
int perf_ring_consume(PerfRingReader *r, PerfRecordHandler handler, void *userdata);

/* Hands the records of n rings to handler by time (ties keep ring order,
 * then reader order). Each ring must be in time order itself, as the
 * kernel writes a CPU's ring. Returns the number of records handled. */
int perf_rings_merge(PerfRingReader *readers, size_t n, PerfRecordTime time_of, void *time_userdata,
                     PerfRecordHandler handler, void *userdata);
