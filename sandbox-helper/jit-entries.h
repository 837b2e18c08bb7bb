/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-entries.h: the code entries read from a JIT file (perf map or
 * jitdump), in file order, for the JIT_NAMES request. Names stay in the
 * file: an entry keeps where its name is, so a file of millions of entries
 * costs a few dozen bytes per entry in the helper, not its names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic.h"
#include "protocol.h"

typedef struct JitEntry {
        uint64_t start, size;  /* [start, start + size) in the process, no overflow, size > 0 */
        uint64_t name_offset;  /* file offset of the name */
        uint32_t name_size;    /* bytes, 1..HELPER_MAX_NAME (longer names are cut) */
        uint32_t debug_size;   /* jitdump: bytes of line entries (DEBUG_INFO); 0: none */
        uint64_t debug_offset; /* jitdump: file offset of the first line entry */
        uint64_t debug_base;   /* jitdump: the address the line entries give the code's first byte */
        uint32_t debug_count;  /* jitdump: number of line entries */
} JitEntry;

typedef struct JitEntries {
        JitEntry *entries;
        size_t n, allocated;
        uint32_t read;    /* code entries seen (kept or refused) */
        uint32_t refused; /* malformed entries skipped */
        bool big_endian;  /* jitdump: written by a big-endian host */
} JitEntries;

/* Appends a copy of *entry; -E2BIG past HELPER_JIT_MAX_ENTRIES, -ENOMEM. */
static inline int jit_entries_add(JitEntries *e, const JitEntry *entry) {
        if (e->n >= HELPER_JIT_MAX_ENTRIES)
                return -E2BIG;
        if (GROW_ARRAY(e->entries, e->allocated, e->n + 1, 256) < 0)
                return -ENOMEM;
        e->entries[e->n++] = *entry;
        return 0;
}

/* Frees the entries. */
static inline void jit_entries_done(JitEntries *e) {
        free(e->entries);
        *e = (JitEntries) {};
}
