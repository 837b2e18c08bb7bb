/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-table-cache.c: file identity → validated unwind table. */
#include "unwind-table-cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct UnwindTableCacheEntry {
        UnwindFileKey key;
        void *blob;                       /* owned; NULL when the file has no table */
        size_t size;
        UnwindTable table;
};

static int key_compare(const UnwindFileKey *a, const UnwindFileKey *b) {
        if (a->dev != b->dev)
                return a->dev < b->dev ? -1 : 1;
        if (a->ino != b->ino)
                return a->ino < b->ino ? -1 : 1;
        if (a->build_id_len != b->build_id_len)
                return a->build_id_len < b->build_id_len ? -1 : 1;
        return memcmp(a->build_id, b->build_id, a->build_id_len);
}

/* Index of key, or of where it would be inserted; *found says which. */
static size_t search(const UnwindTableCache *cache, const UnwindFileKey *key, bool *found) {
        size_t lo = 0, hi = cache->n_entries;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = key_compare(&cache->entries[mid]->key, key);
                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

bool unwind_table_cache_get(const UnwindTableCache *cache, const UnwindFileKey *key, const UnwindTable **table) {
        bool found;
        size_t i = search(cache, key, &found);

        if (!found)
                return false;
        *table = cache->entries[i]->blob ? &cache->entries[i]->table : NULL;
        return true;
}

int unwind_table_cache_put(UnwindTableCache *cache, const UnwindFileKey *key, void *blob, size_t size,
                           const UnwindTable **table, const char **reason) {
        return unwind_table_cache_put_sliced(cache, key, blob, size, table, reason, NULL, NULL);
}

int unwind_table_cache_put_sliced(UnwindTableCache *cache, const UnwindFileKey *key, void *blob, size_t size,
                                  const UnwindTable **table, const char **reason, void (*yield)(void *userdata),
                                  void *userdata) {
        UnwindTableCacheEntry *e;
        bool found;
        size_t i;
        int r = 0;

        *table = NULL;
        if (reason)
                *reason = NULL;
        if (key->build_id_len > UNWIND_BUILD_ID_MAX) {
                free(blob);
                return -EINVAL;
        }
        i = search(cache, key, &found);
        if (found) {
                /* First answer wins: a file's table never changes under a sampler. */
                free(blob);
                e = cache->entries[i];
                *table = e->blob ? &e->table : NULL;
                return 0;
        }

        e = calloc(1, sizeof(*e));
        if (!e) {
                free(blob);
                return -ENOMEM;
        }
        e->key = *key;
        if (blob) {
                r = unwind_table_validate_sliced(blob, size, &e->table, reason, yield, userdata);
                if (r < 0) {
                        free(blob);
                        blob = NULL;
                }
        }
        e->blob = blob;
        e->size = blob ? size : 0;
        /* the validation may have let the event loop run: look again */
        i = search(cache, key, &found);
        if (found) {
                free(e->blob);
                free(e);
                e = cache->entries[i];
                *table = e->blob ? &e->table : NULL;
                return 0;
        }

        if (cache->n_entries == cache->allocated) {
                size_t n = cache->allocated ? cache->allocated * 2 : 64;
                UnwindTableCacheEntry **p = reallocarray(cache->entries, n, sizeof(*p));
                if (!p) {
                        free(e->blob);
                        free(e);
                        return -ENOMEM;
                }
                cache->entries = p;
                cache->allocated = n;
        }
        memmove(&cache->entries[i + 1], &cache->entries[i], (cache->n_entries - i) * sizeof(*cache->entries));
        cache->entries[i] = e;
        cache->n_entries++;
        cache->bytes += e->size;
        *table = e->blob ? &e->table : NULL;
        return r;
}

void unwind_table_cache_clear(UnwindTableCache *cache) {
        for (size_t i = 0; i < cache->n_entries; i++) {
                free(cache->entries[i]->blob);
                free(cache->entries[i]);
        }
        free(cache->entries);
        *cache = (UnwindTableCache) {};
}
