/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbols.c: encoder and bounds-checked decoder of the symbol tables that
 * captures embed ("__symbols__" for Sysprof, "__periscope/symbols" for us).
 * Byte layouts: docs/capture-format.md, "Periscope extensions". */
#include "symbols.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "gzip-inflate.h"

/* "__periscope/symbols" layout, version 1 (all little-endian). */
#define PSYM_MAGIC "PSCPSYMB"
#define PSYM_VERSION 1
#define PSYM_HEADER_SIZE 40
#define PSYM_RANGE_SIZE 32
#define PSYM_FRAME_SIZE 24
#define PSYM_MAPPING_SIZE 40

/* "__symbols__" layout of Sysprof 3.46: packed entries of
 * { u64 addr_begin, u64 addr_end (inclusive), u32 pid, u32 offset,
 *   u32 tag_offset, u32 padding } then strings; an all-zero entry ends the
 * entries, offsets count from the start of the blob, 0 means none. */
#define SYSPROF_ENTRY_SIZE 32

#define SYMBOL_MAX_CHAIN 65535u
#define STRINGS_MAX ((size_t) UINT32_MAX - 1)

/* ---- string pool ------------------------------------------------------- */

/* Interned NUL-terminated strings in one buffer; offset 0 is "". */
typedef struct StringPool {
        uint8_t *data;
        size_t len, alloc;
        uint32_t *slots; /* open addressing: offset+1, 0 = empty */
        size_t n_slots, n_used;
} StringPool;

static uint64_t hash_bytes(const char *s, size_t n) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (size_t i = 0; i < n; i++) {
                h ^= (uint8_t) s[i];
                h *= 1099511628211ull;
        }
        return h;
}

static void string_pool_done(StringPool *p) {
        free(p->data);
        free(p->slots);
        *p = (StringPool) {};
}

static int string_pool_rehash(StringPool *p, size_t n_slots) {
        uint32_t *slots = calloc(n_slots, sizeof(uint32_t));
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_slots; i++) {
                if (!p->slots[i])
                        continue;
                const char *s = (const char *) p->data + p->slots[i] - 1;
                size_t j = hash_bytes(s, strlen(s)) & (n_slots - 1);
                while (slots[j])
                        j = (j + 1) & (n_slots - 1);
                slots[j] = p->slots[i];
        }
        free(p->slots);
        p->slots = slots;
        p->n_slots = n_slots;
        return 0;
}

/* Returns the offset of s in the pool (adding it), or a negative errno. */
static int64_t string_pool_intern(StringPool *p, const char *s) {
        if (!s || !*s)
                return 0;
        if (!p->data) {
                if (!(p->data = malloc(4096)))
                        return -ENOMEM;
                p->alloc = 4096;
                p->data[0] = 0;
                p->len = 1;
        }
        if ((p->n_used + 1) * 2 > p->n_slots) {
                int r = string_pool_rehash(p, p->n_slots ? p->n_slots * 2 : 1024);
                if (r < 0)
                        return r;
        }
        size_t n = strlen(s);
        size_t j = hash_bytes(s, n) & (p->n_slots - 1);
        while (p->slots[j]) {
                const char *t = (const char *) p->data + p->slots[j] - 1;
                if (strcmp(s, t) == 0)
                        return p->slots[j] - 1;
                j = (j + 1) & (p->n_slots - 1);
        }
        if (n + 1 > STRINGS_MAX - p->len)
                return -E2BIG;
        if (p->len + n + 1 > p->alloc) {
                size_t want = p->alloc * 2;
                while (want < p->len + n + 1)
                        want *= 2;
                uint8_t *q = realloc(p->data, want);
                if (!q)
                        return -ENOMEM;
                p->data = q;
                p->alloc = want;
        }
        uint32_t off = (uint32_t) p->len;
        memcpy(p->data + off, s, n + 1);
        p->len += n + 1;
        p->slots[j] = off + 1;
        p->n_used++;
        return off;
}

static const char *string_pool_get(const StringPool *p, uint32_t off) {
        return off ? (const char *) p->data + off : NULL;
}

/* ---- builder ----------------------------------------------------------- */

typedef struct BuilderFrame {
        uint32_t function, file, line, flags;
        uint64_t offset;
} BuilderFrame;

typedef struct BuilderRange {
        int32_t pid;
        uint32_t first_frame, n_frames;
        uint64_t begin, end;
        size_t seq; /* insertion order, for a stable sort */
} BuilderRange;

typedef struct BuilderMapping {
        int32_t pid;
        uint32_t flags;
        uint64_t start, end;
        uint32_t path, method, verdict, build_id;
} BuilderMapping;

struct SymbolTableBuilder {
        StringPool strings;
        BuilderFrame *frames;
        size_t n_frames, frames_alloc;
        BuilderRange *ranges;
        size_t n_ranges, ranges_alloc;
        BuilderMapping *mappings;
        size_t n_mappings, mappings_alloc;
        int32_t *pids;
        size_t n_pids, pids_alloc;
        void (*yield)(void *userdata);
        void *yield_userdata;
};

void symbol_table_builder_set_yield(SymbolTableBuilder *b, void (*yield)(void *userdata), void *userdata) {
        b->yield = yield;
        b->yield_userdata = userdata;
}

/* In long loops, every 1024 steps: the caller's event loop may run. */
static void builder_maybe_yield(const SymbolTableBuilder *b, size_t i) {
        if (b->yield && (i & 1023) == 1023)
                b->yield(b->yield_userdata);
}

/* qsort(), in slices when the builder has a yield function. */
static void builder_sort(const SymbolTableBuilder *b, void *base, size_t n, size_t size,
                         int (*cmp)(const void *, const void *)) {
        sort_in_slices(base, n, size, cmp, b->yield, b->yield_userdata);
}

int symbol_table_builder_new(SymbolTableBuilder **ret) {
        SymbolTableBuilder *b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        *ret = b;
        return 0;
}

SymbolTableBuilder *symbol_table_builder_free(SymbolTableBuilder *b) {
        if (!b)
                return NULL;
        string_pool_done(&b->strings);
        free(b->frames);
        free(b->ranges);
        free(b->mappings);
        free(b->pids);
        free(b);
        return NULL;
}

size_t symbol_table_builder_get_n_ranges(const SymbolTableBuilder *b) {
        return b->n_ranges;
}

int symbol_table_builder_add_range(SymbolTableBuilder *b, int32_t pid, uint64_t begin, uint64_t end,
                                   const SymbolFrame *frames, size_t n_frames) {
        if (begin >= end || n_frames == 0 || n_frames > SYMBOL_MAX_CHAIN || !frames)
                return -EINVAL;
        for (size_t i = 0; i < n_frames; i++)
                if (!frames[i].function || !frames[i].function[0])
                        return -EINVAL;
        if (b->n_frames + n_frames > UINT32_MAX || b->n_ranges >= UINT32_MAX)
                return -E2BIG;

        int r = GROW_ARRAY(b->frames, b->frames_alloc, b->n_frames + n_frames, 64);
        if (r < 0)
                return r;
        r = GROW_ARRAY(b->ranges, b->ranges_alloc, b->n_ranges + 1, 64);
        if (r < 0)
                return r;

        /* Consecutive ranges with the same chain (one function sampled at
         * many addresses) share their frames. */
        BuilderFrame tmp[64], *enc = tmp;
        _cleanup_free_ BuilderFrame *heap = NULL;
        if (n_frames > 64) {
                if (!(heap = calloc(n_frames, sizeof(BuilderFrame))))
                        return -ENOMEM;
                enc = heap;
        }
        for (size_t i = 0; i < n_frames; i++) {
                int64_t fn = string_pool_intern(&b->strings, frames[i].function);
                int64_t file = string_pool_intern(&b->strings, frames[i].file);
                if (fn < 0)
                        return (int) fn;
                if (file < 0)
                        return (int) file;
                enc[i] = (BuilderFrame) {
                        .function = (uint32_t) fn,
                        .file = (uint32_t) file,
                        .line = frames[i].line,
                        .flags = frames[i].flags,
                        .offset = frames[i].offset,
                };
        }

        uint32_t first;
        BuilderRange *prev = b->n_ranges ? &b->ranges[b->n_ranges - 1] : NULL;
        if (prev && prev->n_frames == n_frames &&
            memcmp(&b->frames[prev->first_frame], enc, n_frames * sizeof(BuilderFrame)) == 0)
                first = prev->first_frame;
        else {
                first = (uint32_t) b->n_frames;
                memcpy(&b->frames[b->n_frames], enc, n_frames * sizeof(BuilderFrame));
                b->n_frames += n_frames;
        }
        b->ranges[b->n_ranges] = (BuilderRange) {
                .pid = pid,
                .first_frame = first,
                .n_frames = (uint32_t) n_frames,
                .begin = begin,
                .end = end,
                .seq = b->n_ranges,
        };
        b->n_ranges++;
        return 0;
}

int symbol_table_builder_add_unresolved(SymbolTableBuilder *b, int32_t pid, uint64_t begin, uint64_t end,
                                        const char *why) {
        _cleanup_free_ char *text = NULL;
        if (asprintf(&text, "[unresolved: %s]", why && *why ? why : "unknown") < 0)
                return -ENOMEM;
        SymbolFrame f = { .function = text, .flags = SYMBOL_FRAME_UNRESOLVED };
        return symbol_table_builder_add_range(b, pid, begin, end, &f, 1);
}

int symbol_table_builder_add_mapping(SymbolTableBuilder *b, const SymbolMapping *m) {
        if (!m || m->start >= m->end || !m->path || !m->path[0])
                return -EINVAL;
        if (b->n_mappings >= UINT32_MAX)
                return -E2BIG;
        int r = GROW_ARRAY(b->mappings, b->mappings_alloc, b->n_mappings + 1, 64);
        if (r < 0)
                return r;
        int64_t s[4] = {
                string_pool_intern(&b->strings, m->path),
                string_pool_intern(&b->strings, m->method),
                string_pool_intern(&b->strings, m->verdict),
                string_pool_intern(&b->strings, m->build_id),
        };
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                if (s[i] < 0)
                        return (int) s[i];
        b->mappings[b->n_mappings++] = (BuilderMapping) {
                .pid = m->pid,
                .flags = m->flags,
                .start = m->start,
                .end = m->end,
                .path = (uint32_t) s[0],
                .method = (uint32_t) s[1],
                .verdict = (uint32_t) s[2],
                .build_id = (uint32_t) s[3],
        };
        return 0;
}

int symbol_table_builder_add_pid(SymbolTableBuilder *b, int32_t pid) {
        if (pid < 0)
                return -EINVAL;
        int r = GROW_ARRAY(b->pids, b->pids_alloc, b->n_pids + 1, 64);
        if (r < 0)
                return r;
        b->pids[b->n_pids++] = pid;
        return 0;
}

static int cmp_pid(int32_t a, int32_t b) {
        return (uint32_t) a < (uint32_t) b ? -1 : (uint32_t) a > (uint32_t) b;
}

static int cmp_u64(uint64_t a, uint64_t b) {
        return a < b ? -1 : a > b;
}

static int builder_range_cmp(const void *a, const void *b) {
        const BuilderRange *x = a, *y = b;
        int c = cmp_pid(x->pid, y->pid);
        if (!c)
                c = cmp_u64(x->begin, y->begin);
        if (!c)
                c = x->seq < y->seq ? -1 : x->seq > y->seq;
        return c;
}

/* Sorts the ranges and clips overlaps (the earlier-added range wins). */
static void builder_normalize(SymbolTableBuilder *b) {
        builder_sort(b, b->ranges, b->n_ranges, sizeof(BuilderRange), builder_range_cmp);
        size_t out = 0;
        for (size_t i = 0; i < b->n_ranges; i++) {
                BuilderRange r = b->ranges[i];
                builder_maybe_yield(b, i);
                if (out > 0 && b->ranges[out - 1].pid == r.pid && r.begin < b->ranges[out - 1].end) {
                        r.begin = b->ranges[out - 1].end;
                        if (r.begin >= r.end)
                                continue;
                }
                r.seq = out;
                b->ranges[out++] = r;
        }
        b->n_ranges = out;
}

static void put_u32(uint8_t **p, uint32_t v) {
        unaligned_store_u32(*p, v);
        *p += 4;
}

static void put_u64(uint8_t **p, uint64_t v) {
        unaligned_store_u64(*p, v);
        *p += 8;
}

int symbol_table_builder_serialize_periscope(SymbolTableBuilder *b, uint8_t **ret_data, size_t *ret_len) {
        builder_normalize(b);
        if (!b->strings.data && string_pool_intern(&b->strings, "-") < 0) /* offset 0 must exist */
                return -ENOMEM;

        size_t len = PSYM_HEADER_SIZE + b->n_ranges * PSYM_RANGE_SIZE + b->n_frames * PSYM_FRAME_SIZE +
                     b->n_mappings * PSYM_MAPPING_SIZE + b->strings.len;
        uint8_t *data = calloc(1, len), *p = data;
        if (!data)
                return -ENOMEM;

        memcpy(p, PSYM_MAGIC, 8);
        p += 8;
        put_u32(&p, PSYM_VERSION);
        put_u32(&p, PSYM_HEADER_SIZE);
        put_u32(&p, (uint32_t) b->n_ranges);
        put_u32(&p, (uint32_t) b->n_frames);
        put_u32(&p, (uint32_t) b->n_mappings);
        put_u32(&p, (uint32_t) b->strings.len);
        put_u32(&p, 0); /* flags */
        put_u32(&p, 0); /* reserved */

        for (size_t i = 0; i < b->n_ranges; i++) {
                const BuilderRange *r = &b->ranges[i];
                builder_maybe_yield(b, i);
                put_u32(&p, (uint32_t) r->pid);
                put_u32(&p, r->first_frame);
                put_u64(&p, r->begin);
                put_u64(&p, r->end);
                put_u32(&p, r->n_frames);
                put_u32(&p, 0);
        }
        for (size_t i = 0; i < b->n_frames; i++) {
                const BuilderFrame *f = &b->frames[i];
                builder_maybe_yield(b, i);
                put_u32(&p, f->function);
                put_u32(&p, f->file);
                put_u32(&p, f->line);
                put_u32(&p, f->flags);
                put_u64(&p, f->offset);
        }
        for (size_t i = 0; i < b->n_mappings; i++) {
                const BuilderMapping *m = &b->mappings[i];
                put_u32(&p, (uint32_t) m->pid);
                put_u32(&p, m->flags);
                put_u64(&p, m->start);
                put_u64(&p, m->end);
                put_u32(&p, m->path);
                put_u32(&p, m->method);
                put_u32(&p, m->verdict);
                put_u32(&p, m->build_id);
        }
        memcpy(p, b->strings.data, b->strings.len);
        *ret_data = data;
        *ret_len = len;
        return 0;
}

typedef struct SysprofEntry {
        uint64_t begin, end; /* end exclusive here */
        int32_t pid;
        uint32_t name, tag; /* pool offsets */
} SysprofEntry;

static int sysprof_entry_cmp(const void *a, const void *b) {
        const SysprofEntry *x = a, *y = b;
        int c = cmp_pid(x->pid, y->pid);
        return c ? c : cmp_u64(x->begin, y->begin);
}

static int int32_cmp(const void *a, const void *b) {
        return cmp_pid(*(const int32_t *) a, *(const int32_t *) b);
}

static int builder_mapping_cmp(const void *a, const void *b) {
        const BuilderMapping *x = a, *y = b;
        int c = cmp_pid(x->pid, y->pid);
        return c ? c : cmp_u64(x->start, y->start);
}

/* The mapping of pid that holds addr in an array sorted by (pid, start),
 * whose elements have pid, start and end members; NULL when none. Mappings
 * may overlap (a file mapped again): scans back from the last one starting
 * at or before addr within pid. */
static const void *mapping_find(const void *array, size_t n, size_t size, size_t pid_offset, size_t start_offset,
                                size_t end_offset, int32_t pid, uint64_t addr) {
#define FIELD(i, off, type) (*(const type *) ((const uint8_t *) array + (i) * size + (off)))
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = cmp_pid(FIELD(mid, pid_offset, int32_t), pid);
                if (c < 0 || (c == 0 && FIELD(mid, start_offset, uint64_t) <= addr))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo; i > 0; i--) {
                if (FIELD(i - 1, pid_offset, int32_t) != pid)
                        break;
                if (addr < FIELD(i - 1, end_offset, uint64_t))
                        return (const uint8_t *) array + (i - 1) * size;
        }
        return NULL;
#undef FIELD
}

#define MAPPING_FIND(array, n, want_pid, want_addr)                                                   \
        ((const __typeof__(*(array)) *) mapping_find((array), (n), sizeof(*(array)),                     \
                                                     offsetof(__typeof__(*(array)), pid),                \
                                                     offsetof(__typeof__(*(array)), start),              \
                                                     offsetof(__typeof__(*(array)), end), (want_pid),    \
                                                     (want_addr)))

/* The basename of the file mapped at addr in pid, interned, or 0. The
 * mappings must be sorted by builder_mapping_cmp. */
static int64_t builder_module_tag(SymbolTableBuilder *b, int32_t pid, uint64_t addr) {
        const BuilderMapping *m = MAPPING_FIND(b->mappings, b->n_mappings, pid, addr);
        if (!m)
                return 0;
        const char *path = string_pool_get(&b->strings, m->path);
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *base = strdup(slash ? slash + 1 : path);
        if (!base)
                return -ENOMEM;
        return string_pool_intern(&b->strings, base);
}

int symbol_table_builder_serialize_sysprof(SymbolTableBuilder *b, uint8_t **ret_data, size_t *ret_len) {
        builder_normalize(b);
        builder_sort(b, b->mappings, b->n_mappings, sizeof(BuilderMapping), builder_mapping_cmp);

        /* Which processes get the SYMBOLS_PID_ANY (kernel) ranges. */
        size_t n_pids_max = b->n_pids + b->n_ranges + b->n_mappings;
        _cleanup_free_ int32_t *pids = calloc(n_pids_max ? n_pids_max : 1, sizeof(int32_t));
        if (!pids)
                return -ENOMEM;
        size_t n_pids = 0, n_any = 0;
        for (size_t i = 0; i < b->n_pids; i++)
                pids[n_pids++] = b->pids[i];
        for (size_t i = 0; i < b->n_ranges; i++) {
                if (b->ranges[i].pid == SYMBOLS_PID_ANY)
                        n_any++;
                else if (b->ranges[i].pid >= 0)
                        pids[n_pids++] = b->ranges[i].pid;
        }
        for (size_t i = 0; i < b->n_mappings; i++)
                if (b->mappings[i].pid >= 0)
                        pids[n_pids++] = b->mappings[i].pid;
        builder_sort(b, pids, n_pids, sizeof(int32_t), int32_cmp);
        size_t u = 0;
        for (size_t i = 0; i < n_pids; i++)
                if (u == 0 || pids[u - 1] != pids[i])
                        pids[u++] = pids[i];
        n_pids = u;

        size_t n_entries_max = b->n_ranges - n_any;
        if (n_any && n_pids > (SIZE_MAX / SYSPROF_ENTRY_SIZE - n_entries_max) / n_any)
                return -E2BIG;
        n_entries_max += n_any * n_pids;
        _cleanup_free_ SysprofEntry *e = calloc(n_entries_max ? n_entries_max : 1, sizeof(SysprofEntry));
        if (!e)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < b->n_ranges; i++) {
                const BuilderRange *r = &b->ranges[i];
                builder_maybe_yield(b, i);
                /* Sysprof names an address after the function that contains
                 * it: the outermost frame of the chain. */
                uint32_t name = b->frames[r->first_frame + r->n_frames - 1].function;
                if (r->pid == SYMBOLS_PID_ANY) {
                        for (size_t k = 0; k < n_pids; k++)
                                e[n++] = (SysprofEntry) { r->begin, r->end, pids[k], name, 0 };
                        continue;
                }
                if (r->pid < 0)
                        continue;
                int64_t tag = builder_module_tag(b, r->pid, r->begin);
                if (tag < 0)
                        return (int) tag;
                e[n++] = (SysprofEntry) { r->begin, r->end, r->pid, name, (uint32_t) tag };
        }
        builder_sort(b, e, n, sizeof(SysprofEntry), sysprof_entry_cmp);
        size_t out = 0;
        for (size_t i = 0; i < n; i++) {
                SysprofEntry x = e[i];
                builder_maybe_yield(b, i);
                if (out > 0 && e[out - 1].pid == x.pid && x.begin < e[out - 1].end) {
                        x.begin = e[out - 1].end;
                        if (x.begin >= x.end)
                                continue;
                }
                /* Like Sysprof, one entry covers consecutive addresses with
                 * the same name (ranges are often single addresses). */
                if (out > 0 && e[out - 1].pid == x.pid && e[out - 1].name == x.name && e[out - 1].tag == x.tag) {
                        e[out - 1].end = x.end;
                        continue;
                }
                e[out++] = x;
        }
        n = out;

        if (!b->strings.data && string_pool_intern(&b->strings, "-") < 0)
                return -ENOMEM;
        /* Entries, then one all-zero entry (the end marker Sysprof looks
         * for), then the strings; offsets count from the blob's start. */
        if (n > (UINT32_MAX - SYSPROF_ENTRY_SIZE - b->strings.len) / SYSPROF_ENTRY_SIZE)
                return -E2BIG;
        size_t base = (n + 1) * SYSPROF_ENTRY_SIZE;
        size_t len = base + b->strings.len;
        uint8_t *data = calloc(1, len), *p = data;
        if (!data)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                builder_maybe_yield(b, i);
                put_u64(&p, e[i].begin);
                put_u64(&p, e[i].end - 1); /* inclusive on disk */
                put_u32(&p, (uint32_t) e[i].pid);
                put_u32(&p, (uint32_t) (base + e[i].name));
                put_u32(&p, e[i].tag ? (uint32_t) (base + e[i].tag) : 0);
                put_u32(&p, 0);
        }
        memcpy(data + base, b->strings.data, b->strings.len);
        *ret_data = data;
        *ret_len = len;
        return 0;
}

int symbol_table_builder_write(SymbolTableBuilder *b, CaptureWriter *w, int64_t time) {
        _cleanup_free_ uint8_t *sysprof = NULL, *periscope = NULL;
        size_t sysprof_len, periscope_len;
        int r = symbol_table_builder_serialize_sysprof(b, &sysprof, &sysprof_len);
        if (r < 0)
                return r;
        r = symbol_table_builder_serialize_periscope(b, &periscope, &periscope_len);
        if (r < 0)
                return r;
        /* Sysprof 3.46's sysprof_capture_reader_read_file_fd() skips the
         * frame after every FILE_CHUNK of another path (it reads that chunk,
         * then skips once more): a "__symbols__" right after, say,
         * "/.periscope/pinned-files" is never found and Sysprof shows no
         * names. A TIMESTAMP in between is what it skips instead. */
        r = capture_writer_add_timestamp(w, time, -1, -1);
        if (r < 0)
                return r;
        r = capture_writer_add_file(w, time, -1, -1, SYMBOLS_SYSPROF_PATH, sysprof, sysprof_len);
        if (r < 0)
                return r;
        return capture_writer_add_file(w, time, -1, -1, SYMBOLS_PERISCOPE_PATH, periscope, periscope_len);
}

/* ---- reader ------------------------------------------------------------ */

struct SymbolTable {
        SymbolTableKind kind;
        uint8_t *blob; /* owned copy; strings point into it */
        uint8_t **merged_blobs; /* the blobs of tables merged into this one */
        size_t n_merged_blobs;
        SymbolRange *ranges;
        size_t n_ranges;
        SymbolFrame *frames;
        size_t n_frames;
        SymbolMapping *mappings;
        size_t n_mappings;
};

SymbolTable *symbol_table_free(SymbolTable *t) {
        if (!t)
                return NULL;
        free(t->blob);
        for (size_t i = 0; i < t->n_merged_blobs; i++)
                free(t->merged_blobs[i]);
        free(t->merged_blobs);
        free(t->ranges);
        free(t->frames);
        free(t->mappings);
        free(t);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(SymbolTable *, symbol_table_free);

__attribute__((format(printf, 3, 4))) static int table_fail(char **error, int err, const char *fmt, ...) {
        if (error) {
                va_list ap;
                va_start(ap, fmt);
                free(*error);
                if (vasprintf(error, fmt, ap) < 0)
                        *error = NULL;
                va_end(ap);
        }
        return err;
}

static int symbol_range_cmp(const void *a, const void *b) {
        const SymbolRange *x = a, *y = b;
        int c = cmp_pid(x->pid, y->pid);
        return c ? c : cmp_u64(x->begin, y->begin);
}

static int symbol_mapping_cmp(const void *a, const void *b) {
        const SymbolMapping *x = a, *y = b;
        int c = cmp_pid(x->pid, y->pid);
        return c ? c : cmp_u64(x->start, y->start);
}

/* Sorts ranges and clips overlaps, so a lookup has one answer. */
static void table_normalize(SymbolTable *t) {
        qsort_safe(t->ranges, t->n_ranges, sizeof(SymbolRange), symbol_range_cmp);
        size_t out = 0;
        for (size_t i = 0; i < t->n_ranges; i++) {
                SymbolRange r = t->ranges[i];
                if (out > 0 && t->ranges[out - 1].pid == r.pid && r.begin < t->ranges[out - 1].end) {
                        r.begin = t->ranges[out - 1].end;
                        if (r.begin >= r.end)
                                continue;
                }
                t->ranges[out++] = r;
        }
        t->n_ranges = out;
        qsort_safe(t->mappings, t->n_mappings, sizeof(SymbolMapping), symbol_mapping_cmp);
}

/* A string at off inside strings[0, size): must be NUL-terminated there. */
static const char *blob_string(const uint8_t *strings, size_t size, uint32_t off) {
        if (off >= size || !memchr(strings + off, 0, size - off))
                return NULL;
        return (const char *) strings + off;
}

int symbol_table_parse_periscope(const uint8_t *data, size_t len, SymbolTable **ret, char **error) {
        if (len < PSYM_HEADER_SIZE || memcmp(data, PSYM_MAGIC, 8) != 0)
                return table_fail(error, -EBADMSG, "%s: not a Periscope symbol table (bad magic or %zu bytes)",
                                  SYMBOLS_PERISCOPE_PATH, len);
        uint32_t version = unaligned_load_u32(data + 8, true);
        if (version != PSYM_VERSION)
                return table_fail(error, -EPROTONOSUPPORT,
                                  "%s: version %u is not supported (this periscope reads version %d)",
                                  SYMBOLS_PERISCOPE_PATH, version, PSYM_VERSION);
        uint64_t header_size = unaligned_load_u32(data + 12, true);
        uint64_t n_ranges = unaligned_load_u32(data + 16, true);
        uint64_t n_frames = unaligned_load_u32(data + 20, true);
        uint64_t n_mappings = unaligned_load_u32(data + 24, true);
        uint64_t strings_size = unaligned_load_u32(data + 28, true);
        /* All counts are 32-bit, so this sum cannot overflow 64 bits. */
        uint64_t need = header_size + n_ranges * PSYM_RANGE_SIZE + n_frames * PSYM_FRAME_SIZE +
                        n_mappings * PSYM_MAPPING_SIZE + strings_size;
        if (header_size < PSYM_HEADER_SIZE || need != len)
                return table_fail(error, -EBADMSG,
                                  "%s: header announces %" PRIu64 " bytes (%" PRIu64 " ranges, %" PRIu64
                                  " frames, %" PRIu64 " mappings, %" PRIu64 " bytes of strings) but the table has %zu",
                                  SYMBOLS_PERISCOPE_PATH, need, n_ranges, n_frames, n_mappings, strings_size, len);
        if (strings_size == 0 || data[len - strings_size] != 0)
                return table_fail(error, -EBADMSG, "%s: string area does not start with an empty string",
                                  SYMBOLS_PERISCOPE_PATH);

        _cleanup_(symbol_table_freep) SymbolTable *t = calloc(1, sizeof(*t));
        if (!t || !(t->blob = malloc(len)))
                return -ENOMEM;
        memcpy(t->blob, data, len);
        t->kind = SYMBOL_TABLE_PERISCOPE;
        t->ranges = calloc(n_ranges ? n_ranges : 1, sizeof(SymbolRange));
        t->frames = calloc(n_frames ? n_frames : 1, sizeof(SymbolFrame));
        t->mappings = calloc(n_mappings ? n_mappings : 1, sizeof(SymbolMapping));
        if (!t->ranges || !t->frames || !t->mappings)
                return -ENOMEM;

        const uint8_t *p = t->blob + header_size;
        const uint8_t *strings = t->blob + len - strings_size;

        const uint8_t *rp = p;
        const uint8_t *fp = rp + n_ranges * PSYM_RANGE_SIZE;
        const uint8_t *mp = fp + n_frames * PSYM_FRAME_SIZE;

        for (size_t i = 0; i < n_frames; i++, fp += PSYM_FRAME_SIZE) {
                uint32_t fn = unaligned_load_u32(fp, true), file = unaligned_load_u32(fp + 4, true);
                SymbolFrame *f = &t->frames[i];
                f->function = blob_string(strings, strings_size, fn);
                if (!fn || !f->function)
                        return table_fail(error, -EBADMSG, "%s: frame %zu has a bad function name offset %u",
                                          SYMBOLS_PERISCOPE_PATH, i, fn);
                if (file && !(f->file = blob_string(strings, strings_size, file)))
                        return table_fail(error, -EBADMSG, "%s: frame %zu has a bad file name offset %u",
                                          SYMBOLS_PERISCOPE_PATH, i, file);
                f->line = unaligned_load_u32(fp + 8, true);
                f->flags = unaligned_load_u32(fp + 12, true);
                f->offset = unaligned_load_u64(fp + 16, true);
        }
        for (size_t i = 0; i < n_ranges; i++, rp += PSYM_RANGE_SIZE) {
                SymbolRange *r = &t->ranges[i];
                uint64_t first = unaligned_load_u32(rp + 4, true);
                r->pid = (int32_t) unaligned_load_u32(rp, true);
                r->begin = unaligned_load_u64(rp + 8, true);
                r->end = unaligned_load_u64(rp + 16, true);
                r->n_frames = unaligned_load_u32(rp + 24, true);
                if (r->begin >= r->end)
                        return table_fail(error, -EBADMSG, "%s: range %zu is empty or reversed (%#" PRIx64
                                          "-%#" PRIx64 ")", SYMBOLS_PERISCOPE_PATH, i, r->begin, r->end);
                if (r->n_frames == 0 || first + r->n_frames > n_frames)
                        return table_fail(error, -EBADMSG,
                                          "%s: range %zu points at frames %" PRIu64 "+%u of %" PRIu64,
                                          SYMBOLS_PERISCOPE_PATH, i, first, r->n_frames, n_frames);
                r->frames = &t->frames[first];
        }
        for (size_t i = 0; i < n_mappings; i++, mp += PSYM_MAPPING_SIZE) {
                SymbolMapping *m = &t->mappings[i];
                uint32_t offs[4];
                const char **dst[4] = { &m->path, &m->method, &m->verdict, &m->build_id };
                m->pid = (int32_t) unaligned_load_u32(mp, true);
                m->flags = unaligned_load_u32(mp + 4, true);
                m->start = unaligned_load_u64(mp + 8, true);
                m->end = unaligned_load_u64(mp + 16, true);
                for (size_t k = 0; k < 4; k++) {
                        offs[k] = unaligned_load_u32(mp + 24 + 4 * k, true);
                        if (offs[k] && !(*dst[k] = blob_string(strings, strings_size, offs[k])))
                                return table_fail(error, -EBADMSG,
                                                  "%s: mapping %zu has a bad string offset %u",
                                                  SYMBOLS_PERISCOPE_PATH, i, offs[k]);
                }
                if (!m->path || m->start >= m->end)
                        return table_fail(error, -EBADMSG, "%s: mapping %zu has no path or an empty range",
                                          SYMBOLS_PERISCOPE_PATH, i);
        }
        t->n_ranges = n_ranges;
        t->n_frames = n_frames;
        t->n_mappings = n_mappings;
        table_normalize(t);
        *ret = TAKE_PTR(t);
        return 0;
}

/* The entries of Sysprof's table; path names the table in messages. Sysprof
 * 3.46's ends are inclusive, 45+'s exclusive. */
static int parse_sysprof_entries(const uint8_t *data, size_t len, bool little_endian, SymbolTableKind kind,
                                 SymbolTable **ret, char **error) {
        const char *path = kind == SYMBOL_TABLE_SYSPROF_GZ ? SYMBOLS_SYSPROF_GZ_PATH : SYMBOLS_SYSPROF_PATH;
        bool exclusive = kind == SYMBOL_TABLE_SYSPROF_GZ;
        /* Like Sysprof: entries run up to the first entry whose begin, end,
         * pid and offset are all zero, and that entry must not end the blob. */
        size_t n = 0;
        bool found = false;
        for (size_t at = 0; at + SYSPROF_ENTRY_SIZE < len; at += SYSPROF_ENTRY_SIZE, n++) {
                const uint8_t *e = data + at;
                if (unaligned_load_u64(e, little_endian) == 0 && unaligned_load_u64(e + 8, little_endian) == 0 &&
                    unaligned_load_u32(e + 16, little_endian) == 0 && unaligned_load_u32(e + 20, little_endian) == 0) {
                        found = true;
                        break;
                }
        }
        if (!found)
                return table_fail(error, -EBADMSG, "%s: no end-of-entries marker in %zu bytes", path, len);

        _cleanup_(symbol_table_freep) SymbolTable *t = calloc(1, sizeof(*t));
        if (!t || !(t->blob = malloc(len)))
                return -ENOMEM;
        memcpy(t->blob, data, len);
        t->blob[len - 1] = 0; /* Sysprof forces a final NUL too */
        t->kind = kind;
        t->ranges = calloc(n ? n : 1, sizeof(SymbolRange));
        t->frames = calloc(n ? n : 1, sizeof(SymbolFrame));
        t->mappings = calloc(1, sizeof(SymbolMapping));
        if (!t->ranges || !t->frames || !t->mappings)
                return -ENOMEM;

        size_t strings_start = (n + 1) * SYSPROF_ENTRY_SIZE, out = 0;
        for (size_t i = 0; i < n; i++) {
                const uint8_t *e = t->blob + i * SYSPROF_ENTRY_SIZE;
                uint64_t begin = unaligned_load_u64(e, little_endian);
                uint64_t end = unaligned_load_u64(e + 8, little_endian);
                int32_t pid = (int32_t) unaligned_load_u32(e + 16, little_endian);
                uint32_t off = unaligned_load_u32(e + 20, little_endian);
                uint32_t tag = unaligned_load_u32(e + 24, little_endian);
                if (off == 0)
                        continue; /* Sysprof: no name */
                if (off < strings_start || off >= len)
                        return table_fail(error, -EBADMSG,
                                          "%s: entry %zu names offset %u outside the strings (%zu-%zu)", path, i, off,
                                          strings_start, len);
                if (tag && (tag < strings_start || tag >= len))
                        return table_fail(error, -EBADMSG, "%s: entry %zu has tag offset %u outside the strings", path,
                                          i, tag);
                if (end < begin)
                        return table_fail(error, -EBADMSG,
                                          "%s: entry %zu ends (%#" PRIx64 ") before it begins (%#" PRIx64 ")", path, i,
                                          end, begin);
                if (exclusive && end == begin)
                        continue; /* an empty range: Sysprof never finds it either */
                const char *name = (const char *) t->blob + off;
                if (!*name)
                        continue;
                /* Periscope writes unresolved ranges' reasons as names. */
                t->frames[out] = (SymbolFrame) {
                        .function = name,
                        .flags = strncmp(name, "[unresolved", 11) == 0 ? SYMBOL_FRAME_UNRESOLVED : 0,
                };
                t->ranges[out] = (SymbolRange){
                        .pid = pid,
                        .begin = begin,
                        .end = exclusive || end == UINT64_MAX ? end : end + 1,
                        .n_frames = 1,
                        .frames = &t->frames[out],
                        .module = tag && t->blob[tag] ? (const char *) t->blob + tag : NULL,
                };
                out++;
        }
        t->n_ranges = out;
        t->n_frames = out;
        table_normalize(t);
        *ret = TAKE_PTR(t);
        return 0;
}

int symbol_table_parse_sysprof(const uint8_t *data, size_t len, bool little_endian, SymbolTable **ret, char **error) {
        return parse_sysprof_entries(data, len, little_endian, SYMBOL_TABLE_SYSPROF, ret, error);
}

int symbol_table_parse_sysprof_gz(const uint8_t *data, size_t len, bool little_endian, SymbolTable **ret,
                                  char **error) {
        _cleanup_free_ uint8_t *plain = NULL;
        _cleanup_free_ char *why = NULL;
        size_t plain_len;
        int r = gzip_inflate(data, len, SYMBOLS_MAX_INFLATED_BYTES, &plain, &plain_len, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return table_fail(error, r, "%s: %s", SYMBOLS_SYSPROF_GZ_PATH, why ? why : strerror(-r));
        return parse_sysprof_entries(plain, plain_len, little_endian, SYMBOL_TABLE_SYSPROF_GZ, ret, error);
}

/* Whether one of ranges[0, n) (sorted by pid, as table_normalize leaves
 * them) is of pid. */
static bool symbol_table_has_pid_in(const SymbolRange *ranges, size_t n, int32_t pid) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = cmp_pid(ranges[mid].pid, pid);
                if (c == 0)
                        return true;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

/* Moves from's entries into into (from is freed): ranges of pids that into
 * has no range of (all of them with all_pids), and from's mappings. The
 * merged tables of a merged capture come from different recordings: a pid
 * both name is kept from the first. */
static int table_absorb(SymbolTable *into, SymbolTable *from, bool all_pids) {
        _cleanup_(symbol_table_freep) SymbolTable *f = from;
        size_t nr = into->n_ranges + f->n_ranges, nf = into->n_frames + f->n_frames,
               nm = into->n_mappings + f->n_mappings;
        SymbolRange *ranges = reallocarray(into->ranges, nr ? nr : 1, sizeof(SymbolRange));
        if (!ranges)
                return -ENOMEM;
        into->ranges = ranges;
        SymbolFrame *frames = reallocarray(into->frames, nf ? nf : 1, sizeof(SymbolFrame));
        if (!frames)
                return -ENOMEM;
        /* the ranges point into the frames array, which may have moved */
        for (size_t i = 0; i < into->n_ranges; i++)
                into->ranges[i].frames = frames + (into->ranges[i].frames - into->frames);
        into->frames = frames;
        SymbolMapping *mappings = reallocarray(into->mappings, nm ? nm : 1, sizeof(SymbolMapping));
        if (!mappings)
                return -ENOMEM;
        into->mappings = mappings;
        uint8_t **blobs =
                reallocarray(into->merged_blobs, into->n_merged_blobs + f->n_merged_blobs + 1, sizeof(uint8_t *));
        if (!blobs)
                return -ENOMEM;
        into->merged_blobs = blobs;

        size_t n_before = into->n_ranges;
        memcpy(into->frames + into->n_frames, f->frames, f->n_frames * sizeof(SymbolFrame));
        for (size_t i = 0; i < f->n_ranges; i++) {
                SymbolRange r = f->ranges[i];
                if (!all_pids && symbol_table_has_pid_in(into->ranges, n_before, r.pid))
                        continue;
                r.frames = into->frames + into->n_frames + (r.frames - f->frames);
                into->ranges[into->n_ranges++] = r;
        }
        into->n_frames += f->n_frames;
        memcpy(into->mappings + into->n_mappings, f->mappings, f->n_mappings * sizeof(SymbolMapping));
        into->n_mappings += f->n_mappings;
        /* the strings stay where they are: into owns their blobs from now */
        into->merged_blobs[into->n_merged_blobs++] = TAKE_PTR(f->blob);
        for (size_t i = 0; i < f->n_merged_blobs; i++)
                into->merged_blobs[into->n_merged_blobs++] = TAKE_PTR(f->merged_blobs[i]);
        table_normalize(into);
        return 0;
}

/* Loads every table of one kind the capture embeds (a merged capture holds
 * several), merged into *table (which may be NULL at first). Returns the
 * number loaded, or the first table's error when none could be. */
/* One copy of an embedded table, read and parsed: 0 and *ret, or a read
 * error (*ret_read_failed; -ENOENT past the last copy; *ret_read_why may
 * say more), or the parser's error and its message in *ret_why. */
typedef int (*TableGetFunc)(void *userdata, const char *path, size_t index, SymbolTable **ret, char **ret_why,
                            const char **ret_read_why, bool *ret_read_failed);

static int load_tables(TableGetFunc get, void *userdata, const char *path, SymbolTable **table, char **error) {
        int loaded = 0;
        for (size_t i = 0;; i++) {
                _cleanup_free_ char *why = NULL;
                const char *read_why = NULL;
                bool read_failed = false;
                SymbolTable *t = NULL;
                int r = get(userdata, path, i, &t, &why, &read_why, &read_failed);
                if (r == -ENOENT && read_failed)
                        return loaded > 0 || i > 0 ? loaded : -ENOENT;
                if (r < 0 && read_failed) {
                        if (i == 0)
                                return table_fail(error, r, "%s: cannot read: %s", path,
                                                  read_why ? read_why : strerror(-r));
                        return loaded; /* the later ones are lost to damage */
                }
                if (r < 0) {
                        if (i == 0) {
                                if (error) {
                                        free(*error);
                                        *error = TAKE_PTR(why);
                                }
                                return r;
                        }
                        continue;
                }
                if (!*table)
                        *table = t;
                else if ((r = table_absorb(*table, t, true)) < 0)
                        return r;
                loaded++;
        }
}

static int load_from(TableGetFunc get, void *userdata, SymbolTable **ret, char **error) {
        _cleanup_(symbol_table_freep) SymbolTable *periscope = NULL, *sysprof = NULL, *sysprof_gz = NULL;
        _cleanup_free_ char *periscope_error = NULL, *sysprof_error = NULL, *gz_error = NULL;
        int pk = load_tables(get, userdata, SYMBOLS_PERISCOPE_PATH, &periscope, &periscope_error);
        int sk = load_tables(get, userdata, SYMBOLS_SYSPROF_PATH, &sysprof, &sysprof_error);
        int gk = load_tables(get, userdata, SYMBOLS_SYSPROF_GZ_PATH, &sysprof_gz, &gz_error);
        /* Sysprof writes one of its two; a merged capture may hold both. */
        if (sysprof && sysprof_gz) {
                int r = table_absorb(sysprof, TAKE_PTR(sysprof_gz), false);
                if (r < 0)
                        return table_fail(error, r, "merging the symbol tables: %s", strerror(-r));
        } else if (sysprof_gz)
                sysprof = TAKE_PTR(sysprof_gz);
        if (periscope) {
                /* a merged capture's parts that only Sysprof's table names */
                if (sysprof) {
                        int r = table_absorb(periscope, TAKE_PTR(sysprof), false);
                        if (r < 0)
                                return table_fail(error, r, "merging the symbol tables: %s", strerror(-r));
                }
                *ret = TAKE_PTR(periscope);
                return 0;
        }
        if (sysprof) {
                *ret = TAKE_PTR(sysprof);
                return 0;
        }
        if (pk == -ENOENT && sk == -ENOENT && gk == -ENOENT)
                return table_fail(error, -ENOENT, "the capture embeds no symbols (neither %s nor %s nor %s)",
                                  SYMBOLS_PERISCOPE_PATH, SYMBOLS_SYSPROF_PATH, SYMBOLS_SYSPROF_GZ_PATH);
        if (error) {
                free(*error);
                *error = pk != -ENOENT   ? TAKE_PTR(periscope_error)
                         : sk != -ENOENT ? TAKE_PTR(sysprof_error)
                                         : TAKE_PTR(gz_error);
        }
        return pk != -ENOENT ? pk : sk != -ENOENT ? sk : gk;
}

/* Whether path is one of the embedded tables' names. */
static bool is_table_path(const char *path) {
        return strcmp(path, SYMBOLS_PERISCOPE_PATH) == 0 || strcmp(path, SYMBOLS_SYSPROF_PATH) == 0 ||
               strcmp(path, SYMBOLS_SYSPROF_GZ_PATH) == 0;
}

/* Decodes the table embedded as path. */
static int parse_table(const char *path, const uint8_t *data, size_t len, bool little_endian, SymbolTable **ret,
                       char **ret_why) {
        if (strcmp(path, SYMBOLS_PERISCOPE_PATH) == 0)
                return symbol_table_parse_periscope(data, len, ret, ret_why);
        if (strcmp(path, SYMBOLS_SYSPROF_GZ_PATH) == 0)
                return symbol_table_parse_sysprof_gz(data, len, little_endian, ret, ret_why);
        return symbol_table_parse_sysprof(data, len, little_endian, ret, ret_why);
}

static int reader_get(void *userdata, const char *path, size_t index, SymbolTable **ret, char **ret_why,
                      const char **ret_read_why, bool *ret_read_failed) {
        CaptureReader *reader = userdata;
        _cleanup_free_ uint8_t *data = NULL;
        size_t len;
        int r = capture_reader_read_file_nth(reader, path, index, SYMBOLS_MAX_TABLE_BYTES, &data, &len);
        if (r < 0) {
                *ret_read_failed = true;
                *ret_read_why = capture_reader_error(reader);
                return r;
        }
        return parse_table(path, data, len, capture_reader_get_header(reader)->little_endian, ret, ret_why);
}

int symbol_table_load(CaptureReader *reader, SymbolTable **ret, char **error) {
        return load_from(reader_get, reader, ret, error);
}

/* One copy of a table's embedded file: its chunks until the last one,
 * then what the parser made of them. */
typedef struct ChunkCopy {
        char *path;
        uint8_t *data;
        size_t len;
        bool complete; /* its last chunk was read */
        bool too_big;  /* over SYMBOLS_MAX_TABLE_BYTES: its bytes are dropped */
        bool parsed;   /* data gone, the parser's answer below */
        int parse_result;
        SymbolTable *table;
        char *why;
} ChunkCopy;

struct SymbolChunks {
        bool little_endian;
        ChunkCopy *copies;
        size_t n_copies;
        int read_error; /* the capture's, once it ended in damage */
        char *read_why;
};

SymbolChunks *symbol_chunks_new(bool little_endian) {
        SymbolChunks *c = calloc(1, sizeof(SymbolChunks));
        if (c)
                c->little_endian = little_endian;
        return c;
}

SymbolChunks *symbol_chunks_free(SymbolChunks *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_copies; i++) {
                free(c->copies[i].path);
                free(c->copies[i].data);
                symbol_table_free(c->copies[i].table);
                free(c->copies[i].why);
        }
        free(c->copies);
        free(c->read_why);
        free(c);
        return NULL;
}

/* The copy of path being read: the last one not complete, or a new one. */
static ChunkCopy *chunks_current(SymbolChunks *c, const char *path) {
        for (size_t i = c->n_copies; i > 0; i--)
                if (strcmp(c->copies[i - 1].path, path) == 0) {
                        if (!c->copies[i - 1].complete)
                                return &c->copies[i - 1];
                        break;
                }
        ChunkCopy *copies = reallocarray(c->copies, c->n_copies + 1, sizeof(ChunkCopy));
        if (!copies)
                return NULL;
        c->copies = copies;
        char *p = strdup(path);
        if (!p)
                return NULL;
        c->copies[c->n_copies] = (ChunkCopy){ .path = p };
        return &c->copies[c->n_copies++];
}

/* Parses a copy's bytes (once), so that only one copy's bytes are held
 * at a time. */
static void copy_parse(SymbolChunks *c, ChunkCopy *copy) {
        if (copy->parsed || copy->too_big)
                return;
        static const uint8_t empty[1];
        copy->parse_result = parse_table(copy->path, copy->data ? copy->data : empty, copy->len, c->little_endian,
                                         &copy->table, &copy->why);
        copy->parsed = true;
        free(copy->data);
        copy->data = NULL;
}

int symbol_chunks_add(SymbolChunks *c, const CaptureFrame *f) {
        if (f->type != CAPTURE_FRAME_FILE_CHUNK || !is_table_path(f->file_chunk.path))
                return 0;
        ChunkCopy *copy = chunks_current(c, f->file_chunk.path);
        if (!copy)
                return -ENOMEM;
        if (!copy->too_big && copy->len + f->file_chunk.len > SYMBOLS_MAX_TABLE_BYTES) {
                copy->too_big = true;
                free(copy->data);
                copy->data = NULL;
        }
        if (!copy->too_big) {
                uint8_t *q = realloc(copy->data, copy->len + f->file_chunk.len + 1);
                if (!q)
                        return -ENOMEM;
                copy->data = q;
                memcpy(q + copy->len, f->file_chunk.data, f->file_chunk.len);
                copy->len += f->file_chunk.len;
                q[copy->len] = 0;
        }
        if (f->file_chunk.is_last) {
                copy->complete = true;
                copy_parse(c, copy);
        }
        return 0;
}

int symbol_chunks_set_read_error(SymbolChunks *c, int error, const char *why) {
        c->read_error = error;
        free(c->read_why);
        c->read_why = why ? strdup(why) : NULL;
        return why && !c->read_why ? -ENOMEM : 0;
}

/* reader_get() over the copies collected. */
static int chunks_get(void *userdata, const char *path, size_t index, SymbolTable **ret, char **ret_why,
                      const char **ret_read_why, bool *ret_read_failed) {
        SymbolChunks *c = userdata;
        ChunkCopy *copy = NULL;
        for (size_t i = 0, seen = 0; i < c->n_copies && !copy; i++)
                if (strcmp(c->copies[i].path, path) == 0 && seen++ == index)
                        copy = &c->copies[i];
        if (copy && copy->too_big) {
                *ret_read_failed = true;
                return -EFBIG;
        }
        if (!copy || !copy->complete) {
                if (c->read_error < 0) {
                        *ret_read_failed = true;
                        *ret_read_why = c->read_why;
                        return c->read_error;
                }
                if (!copy) {
                        *ret_read_failed = true;
                        return -ENOENT;
                }
        }
        copy_parse(c, copy);
        *ret = TAKE_PTR(copy->table);
        *ret_why = TAKE_PTR(copy->why);
        return copy->parse_result;
}

int symbol_chunks_load(SymbolChunks *c, SymbolTable **ret, char **error) {
        return load_from(chunks_get, c, ret, error);
}

SymbolTableKind symbol_table_get_kind(const SymbolTable *t) {
        return t->kind;
}

size_t symbol_table_get_n_ranges(const SymbolTable *t) {
        return t->n_ranges;
}

const SymbolRange *symbol_table_get_range(const SymbolTable *t, size_t i) {
        return i < t->n_ranges ? &t->ranges[i] : NULL;
}

size_t symbol_table_get_n_mappings(const SymbolTable *t) {
        return t->n_mappings;
}

const SymbolMapping *symbol_table_get_mapping(const SymbolTable *t, size_t i) {
        return i < t->n_mappings ? &t->mappings[i] : NULL;
}

/* The last range of pid whose begin <= addr, if it contains addr. */
static const SymbolRange *find_range(const SymbolTable *t, int32_t pid, uint64_t addr) {
        size_t lo = 0, hi = t->n_ranges;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const SymbolRange *r = &t->ranges[mid];
                int c = cmp_pid(r->pid, pid);
                if (c < 0 || (c == 0 && r->begin <= addr))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        const SymbolRange *r = &t->ranges[lo - 1];
        return r->pid == pid && addr >= r->begin && addr < r->end ? r : NULL;
}

const SymbolRange *symbol_table_lookup(const SymbolTable *t, int32_t pid, uint64_t addr) {
        const SymbolRange *r = find_range(t, pid, addr);
        if (!r && pid != SYMBOLS_PID_ANY)
                r = find_range(t, SYMBOLS_PID_ANY, addr);
        return r;
}

const SymbolMapping *symbol_table_lookup_mapping(const SymbolTable *t, int32_t pid, uint64_t addr) {
        return MAPPING_FIND(t->mappings, t->n_mappings, pid, addr);
}
