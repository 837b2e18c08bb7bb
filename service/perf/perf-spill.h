/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-spill.h: records moved out of the perf rings while the daemon waits
 * for the helper (an unwind table compiling, a file being symbolized). The
 * kernel drops whatever does not fit its ring; a wait of a second at 999 Hz
 * with 16 KiB stack copies is more than a 4 MiB ring holds. While waiting,
 * the rings are copied here as they are (nothing is parsed, no table is
 * needed); the next drain hands the spilled records on first, in the order
 * they were spilled, then reads the rings. A sample's stack copy is cut to
 * the bytes the kernel marked valid (dyn_size), so the spill holds several
 * times more samples than the ring. Bounded: past `max_bytes` a record is
 * dropped and, when it is a sample, counted as lost. */
#pragma once

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-record.h"
#include "perf-ring.h"

typedef struct PerfSpill {
        PerfRecordLayout layout;   /* how the recording's samples are laid out */
        uint8_t *data;
        size_t size, allocated;
        size_t max_bytes;          /* 0: PERF_SPILL_DEFAULT_MAX_BYTES */
        uint64_t dropped_samples;  /* samples that did not fit */
        uint64_t spilled_records;  /* every record ever spilled, for statistics */
} PerfSpill;

/* 64 MiB: about two seconds of two CPUs at 999 Hz with 16 KiB stack copies. */
#define PERF_SPILL_DEFAULT_MAX_BYTES (64u * 1024u * 1024u)

/* Copies one record (header->size bytes, 8-byte aligned) to the end of the
 * spill; a PerfRecordHandler. Returns 0, or -ENOBUFS when it did not fit
 * (the record is dropped and counted; reading goes on). */
int perf_spill_add(const struct perf_event_header *header, size_t size, void *userdata);

/* Hands spilled records to handler in spill order, at most max_records of
 * them (a slice: the rest stays for the next replay), and empties the
 * spill of what it handed on. A handler returning -EAGAIN keeps that
 * record and the ones after it for the next replay; any other negative
 * return stops the replay, discards the rest and is returned; else the
 * number of records handed on (max_records with records left: the slice
 * ended). The handler must not add to this spill. */
int perf_spill_replay(PerfSpill *s, size_t max_records, PerfRecordHandler handler, void *userdata);

/* Frees the buffer (the layout and bound stay). */
void perf_spill_done(PerfSpill *s);
