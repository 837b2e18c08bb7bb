/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory-replay.h: what became of each allocation of a capture. The
 * ALLOCATION frames (from libperiscope-memory.so or Sysprof's memprof) are
 * replayed in time order (the rings of different threads are not in file
 * order), matching each free to the block it frees, so every allocation
 * gets its fate: still live at the end (leaked), freed before its thread
 * allocated anything else (a short-lived temporary, heaptrack's definition:
 * no timing involved), or freed later. Both the call-site tables of
 * `periscope report --memory` and its stack views weigh by these fates. */
#pragma once

#include <stdint.h>

#include <glib.h>

#include "report-profile.h"

typedef enum MemoryFate {
        MEMORY_FATE_LEAKED,    /* never freed while recording */
        MEMORY_FATE_TEMPORARY, /* freed before its thread allocated anything else */
        MEMORY_FATE_FREED,     /* freed, later */
} MemoryFate;

typedef struct MemoryReplayStats {
        uint64_t n_allocs, n_frees, total_bytes;
        uint64_t peak_bytes;             /* most bytes live at once */
        int64_t peak_time;               /* capture time when the peak was reached */
        uint64_t live_count, live_bytes; /* at the end */
        uint64_t unmatched_frees;        /* frees of blocks allocated before recording started */
} MemoryReplayStats;

typedef struct MemoryReplay MemoryReplay;

MemoryReplay *memory_replay_new(void);
void memory_replay_free(MemoryReplay *m);

/* Notes one allocation event e of the capture model (an allocation when its
 * size is > 0, a free when 0; negative sizes and samples are ignored).
 * stack is the caller's handle for the allocation's stack or call site,
 * given back with its fate. */
void memory_replay_add(MemoryReplay *m, const ReportEvent *e, gpointer stack);

/* Number of frames noted. */
guint memory_replay_count(const MemoryReplay *m);

typedef void (*MemoryFateFunc)(gpointer stack, uint64_t size, MemoryFate fate, gpointer userdata);

/* Replays the frames noted, in time order (file order among equal times),
 * and calls fn once per allocation with its stack handle, size and fate;
 * fills *stats (may be NULL). */
void memory_replay_run(MemoryReplay *m, MemoryFateFunc fn, gpointer userdata, MemoryReplayStats *stats);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MemoryReplay, memory_replay_free)
