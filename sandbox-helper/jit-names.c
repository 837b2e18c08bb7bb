/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-names.c: JIT_NAMES. The file's entries are read in order; then,
 * from the last entry back, each takes the addresses it covers that no
 * later entry took (a "next free address" chain with path compression),
 * so an address gets the newest code placed there in O((entries + n)
 * log n), whatever the entries overlap. Names are read from the file only
 * for the addresses answered. */
#include "jit-names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit-entries.h"
#include "jitdump.h"
#include "perf-map.h"

/* The first address index >= i that no entry has taken yet. */
static size_t next_free(size_t *next, size_t i) {
        size_t root = i;
        while (next[root] != root)
                root = next[root];
        while (next[i] != root) {
                size_t up = next[i];
                next[i] = root;
                i = up;
        }
        return root;
}

/* For every address, the index of the last entry covering it, or SIZE_MAX. */
static int assign(const JitEntries *e, const uint64_t *addresses, size_t n, size_t *owner) {
        _cleanup_free_ size_t *next = malloc((n + 1) * sizeof *next);
        if (!next)
                return -ENOMEM;
        for (size_t i = 0; i <= n; i++)
                next[i] = i;
        for (size_t i = 0; i < n; i++)
                owner[i] = SIZE_MAX;
        for (size_t k = e->n; k > 0; k--) {
                const JitEntry *en = &e->entries[k - 1];
                /* the first address >= start */
                size_t lo = en->start == 0 ? 0 : bsearch_first_above(addresses, n, sizeof *addresses, 0, en->start - 1);
                for (size_t i = next_free(next, lo); i < n && addresses[i] - en->start < en->size;
                     i = next_free(next, i + 1)) {
                        owner[i] = k - 1;
                        next[i] = i + 1;
                }
        }
        return 0;
}

/* The entry's name, read from the file: NULL when it is no longer there. */
static char *read_name(int fd, const JitEntry *en) {
        char *name = malloc(en->name_size + 1u);
        if (!name)
                return NULL;
        ssize_t k = read_full(fd, name, en->name_size, (off_t) en->name_offset);
        if (k != (ssize_t) en->name_size || memchr(name, '\0', en->name_size)) {
                free(name); /* the file changed under us */
                return NULL;
        }
        name[en->name_size] = '\0';
        helper_utf8_sanitize(name);
        return name;
}

int jit_names_run(int fd, uint32_t format, const uint64_t *addresses, size_t n, HelperWriter *w) {
        JitEntries e = {};
        int r = format == HELPER_JIT_PERF_MAP ? perf_map_read(fd, &e) : jitdump_read(fd, &e);
        _cleanup_free_ size_t *owner = malloc((n ? n : 1) * sizeof *owner);
        if (r >= 0 && !owner)
                r = -ENOMEM;
        if (r >= 0)
                r = assign(&e, addresses, n, owner);
        if (r < 0) {
                jit_entries_done(&e);
                return r;
        }
        helper_put_u32(w, e.read);
        helper_put_u32(w, e.refused);
        helper_put_u32(w, (uint32_t) n);
        for (size_t i = 0; i < n && r >= 0; i++) {
                const JitEntry *en = owner[i] != SIZE_MAX ? &e.entries[owner[i]] : NULL;
                _cleanup_free_ char *name = en ? read_name(fd, en) : NULL;
                _cleanup_free_ char *file = NULL;
                uint32_t line = 0;
                if (name && format == HELPER_JIT_DUMP && (r = jitdump_source_line(fd, &e, en, addresses[i], &file, &line)) < 0)
                        break;
                helper_put_u8(w, name ? HELPER_JIT_NAMED : HELPER_JIT_NOT_COVERED);
                helper_put_u8(w, file ? HELPER_JIT_HAS_SOURCE : 0);
                helper_put_u16(w, 0);
                helper_put_u64(w, name ? en->start : 0);
                helper_put_u64(w, name ? en->size : 0);
                helper_put_u32(w, line);
                helper_put_string(w, name ? name : "", HELPER_MAX_NAME);
                helper_put_string(w, file ? file : "", HELPER_MAX_PATH);
        }
        jit_entries_done(&e);
        return r < 0 ? r : 0;
}
