/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-table-cache.h: validated unwind tables kept for the life of the
 * daemon, keyed by file identity (device, inode, build-id), so each file is
 * compiled by the helper and validated once however many processes map it.
 * A failed compile is remembered too, so a file is never retried. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#define UNWIND_BUILD_ID_MAX 64

typedef struct UnwindFileKey {
        uint64_t dev, ino;
        uint8_t build_id_len;
        uint8_t build_id[UNWIND_BUILD_ID_MAX];
} UnwindFileKey;

typedef struct UnwindTableCacheEntry UnwindTableCacheEntry;

typedef struct UnwindTableCache {
        UnwindTableCacheEntry **entries;  /* sorted by key */
        size_t n_entries, allocated;
        size_t bytes;                     /* sum of table blob sizes */
} UnwindTableCache;

/* Looks a file up. Returns true when the file is known; *table is then its
 * table, or NULL when its compile or validation failed earlier. */
bool unwind_table_cache_get(const UnwindTableCache *cache, const UnwindFileKey *key, const UnwindTable **table);

/* Validates blob (taking ownership of it, a malloc'd buffer, in every case)
 * and stores it under key. Returns 0 with *table set, or the validator's
 * negative errno with *reason set; a rejected file is remembered as "no
 * table". blob may be NULL to record a failed compile. */
int unwind_table_cache_put(UnwindTableCache *cache, const UnwindFileKey *key, void *blob, size_t size,
                           const UnwindTable **table, const char **reason);

/* The same, calling yield(userdata) (may be NULL) between slices of the
 * validation (unwind_table_validate_sliced()). */
int unwind_table_cache_put_sliced(UnwindTableCache *cache, const UnwindFileKey *key, void *blob, size_t size,
                                  const UnwindTable **table, const char **reason, void (*yield)(void *userdata),
                                  void *userdata);

/* Frees every table. */
void unwind_table_cache_clear(UnwindTableCache *cache);
