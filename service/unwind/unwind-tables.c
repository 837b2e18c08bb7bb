/* unwind-tables.c: compile-on-first-sight unwind tables through the helper. */
#include "unwind-tables.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic.h"
#include "unwind-table-cache.h"
#include "process.h"

/* The vdso has no file: its key is this device with the image size as
 * "inode" (one vdso image per kernel and ABI). */
#define VDSO_KEY_DEV UINT64_MAX

struct UnwindTables {
        HelperClientConfig helper_config;
        HelperClient *helper;
        UnwindTableCache cache;
        UnwindTablesStats stats;
        bool helper_broken;        /* helper could not be created: stop trying */
};

int unwind_tables_new(const HelperClientConfig *helper, UnwindTables **ret) {
        UnwindTables *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        if (helper)
                t->helper_config = *helper;
        *ret = t;
        return 0;
}

UnwindTables *unwind_tables_free(UnwindTables *t) {
        if (!t)
                return NULL;
        if (t->helper)
                helper_client_free(t->helper);
        unwind_table_cache_clear(&t->cache);
        free(t);
        return NULL;
}

UnwindTablesStats unwind_tables_get_stats(const UnwindTables *t) {
        UnwindTablesStats s = t->stats;
        s.bytes = t->cache.bytes;
        return s;
}

static bool is_vdso(const ProcessMapping *m) {
        return vdso_is_mapping(m->filename);
}

static int ensure_helper(UnwindTables *t) {
        if (t->helper)
                return 0;
        if (t->helper_broken)
                return -ENOTCONN;
        int r = helper_client_new(&t->helper_config, &t->helper);
        if (r < 0)
                t->helper_broken = true;
        return r;
}

/* The cache key of the file behind m; false for code without a file. */
static bool mapping_key(const ProcessMapping *m, UnwindFileKey *key) {
        *key = (UnwindFileKey) {};
        if (is_vdso(m)) {
                key->dev = VDSO_KEY_DEV;
                key->ino = m->end - m->start;
                return true;
        }
        if (!m->pinned)
                return false; /* anonymous or JIT code, or a file that could not be pinned */
        key->dev = makedev(m->dev_major, m->dev_minor);
        key->ino = m->inode;
        key->build_id_len = m->build_id_size <= sizeof(m->build_id) ? m->build_id_size : 0;
        memcpy(key->build_id, m->build_id, key->build_id_len);
        return true;
}

/* A pin whose dev/inode was never checked (an MMAP2 with only a build-id,
 * of a process gone before its file was opened by path) may be a newer file
 * than the one mapped: a table compiled from it would unwind the old code
 * wrongly, so the file must carry the mapping's build-id. */
static bool pin_needs_build_id_check(const ProcessMapping *m) {
        return m->pinned && !m->pinned->identity_checked && m->build_id_size > 0;
}

static bool pin_build_id_matches(UnwindTables *t, const ProcessMapping *m) {
        PinnedFile *pin = m->pinned;
        if (pin->build_id_check == PINNED_BUILD_ID_UNCHECKED) {
                HelperIdentity id;
                _cleanup_free_ char *why = NULL;
                int r = helper_client_identify(t->helper, pin->fd, 0, &id, &why);
                bool same = r >= 0 && id.build_id_size == m->build_id_size &&
                            memcmp(id.build_id, m->build_id, m->build_id_size) == 0;
                pin->build_id_check = same ? PINNED_BUILD_ID_MATCHES : PINNED_BUILD_ID_DIFFERS;
                if (r == HELPER_CLIENT_FAILED)
                        t->stats.helper_failures++;
                if (!same) {
                        log_warning("no unwind table for %s: %s", m->filename ? m->filename : "?",
                                r < 0 ? (why ? why : strerror(-r))
                                      : "binary changed since it was mapped (build-id differs)");
                        t->stats.failed++;
                }
        }
        return pin->build_id_check == PINNED_BUILD_ID_MATCHES;
}

const UnwindTable *unwind_tables_peek(UnwindTables *t, const ProcessMapping *m, bool *known) {
        UnwindFileKey key;
        const UnwindTable *table = NULL;

        if (pin_needs_build_id_check(m) && m->pinned->build_id_check == PINNED_BUILD_ID_DIFFERS) {
                *known = true; /* decided: no table from that file */
                return NULL;
        }
        if (!mapping_key(m, &key)) {
                *known = true;
                return NULL;
        }
        *known = unwind_table_cache_get(&t->cache, &key, &table);
        return *known ? table : NULL;
}

const UnwindTable *unwind_tables_get(UnwindTables *t, int32_t pid, const ProcessMapping *m) {
        UnwindFileKey key;
        const UnwindTable *table = NULL;
        _cleanup_free_ char *why = NULL;
        void *blob = NULL;
        size_t size = 0;
        const char *reason = NULL;
        int r;

        if (!mapping_key(m, &key))
                return NULL;
        if (unwind_table_cache_get(&t->cache, &key, &table))
                return table;

        int64_t t0 = now_monotonic_ms();
        r = ensure_helper(t);
        if (r >= 0) {
                if (is_vdso(m)) {
                        _cleanup_free_ uint8_t *image = NULL;
                        size_t image_size = 0;
                        r = vdso_image_read(pid, m->start, m->end, HELPER_MAX_UNWIND_IMAGE, &image, &image_size);
                        if (r < 0)
                                return NULL; /* the process is gone: try again with the next one */
                        if (r >= 0)
                                r = helper_client_compile_unwind(t->helper, -1, image, image_size, &blob, &size, &why);
                } else if (pin_needs_build_id_check(m) && !pin_build_id_matches(t, m))
                        return NULL; /* not cached: the key may be right for another file */
                else
                        r = helper_client_compile_unwind(t->helper, m->pinned->fd, NULL, 0, &blob, &size, &why);
        }
        if (r == HELPER_CLIENT_FAILED)
                t->stats.helper_failures++;
        if (r < 0 && r != -ENODATA)
                log_warning("no unwind table for %s: %s", m->filename ? m->filename : "?",
                        why ? why : strerror(-r));
        /* The client validated the blob already; the cache validates again
         * because it keeps a view of exactly the bytes it owns. */
        r = unwind_table_cache_put(&t->cache, &key, r >= 0 ? blob : NULL, size, &table, &reason);
        if (r < 0 && reason)
                log_warning("unwind table of %s rejected: %s", m->filename ? m->filename : "?",
                        reason);
        if (now_monotonic_ms() - t0 >= 100)
                log_info("unwind table of %s compiled in %lld ms", m->filename ? m->filename : "?",
                         (long long) (now_monotonic_ms() - t0));
        if (table)
                t->stats.compiled++;
        else
                t->stats.failed++;
        return table;
}
