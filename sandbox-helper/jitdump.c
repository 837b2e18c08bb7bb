/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jitdump.c: the jitdump records, each bounds-checked against its own
 * total_size before a field is used. Code bytes are never read: only the
 * fixed fields and the name, so a dump full of machine code costs a few
 * reads per record. */
#include "jitdump.h"

#include <errno.h>
#include <string.h>

#define JITDUMP_MAGIC 0x4A695444u  /* "JiTD" as a native u32 */
#define JITDUMP_HEADER_MIN 32u      /* up to pid and timestamp; version-1 writers add u64 flags */
#define JITDUMP_HEADER_MAX 4096u
#define JITDUMP_RECORD_HEADER 16u   /* u32 id, u32 total_size, u64 timestamp */
#define JITDUMP_LOAD_FIXED 40u      /* u32 pid, u32 tid, u64 vma, code_addr, code_size, code_index */
#define JITDUMP_MOVE_FIXED 48u      /* u32 pid, u32 tid, u64 vma, old_code_addr, new_code_addr, code_size, code_index */
#define JITDUMP_DEBUG_FIXED 16u     /* u64 code_addr, u64 nr_entry */
#define JITDUMP_LINE_FIXED 16u      /* u64 code_addr, u32 line, u32 discrim, then a NUL-terminated file name */
#define JITDUMP_MAX_DEBUG_RECORD (8u << 20)
#define JITDUMP_NAME_SCAN (HELPER_MAX_NAME + 1u)

enum {
        JIT_CODE_LOAD = 0,
        JIT_CODE_MOVE = 1,
        JIT_CODE_DEBUG_INFO = 2,
        JIT_CODE_CLOSE = 3,
};

/* code_index → index of its LOAD entry, open addressing. */
typedef struct LoadIndex {
        uint64_t *keys;
        uint32_t *values; /* entry index + 1; 0 = empty slot */
        size_t size, used;
} LoadIndex;

static size_t load_index_slot(const LoadIndex *li, uint64_t key) {
        size_t i = (size_t) (key * 0x9E3779B97F4A7C15ull) & (li->size - 1);
        while (li->values[i] && li->keys[i] != key)
                i = (i + 1) & (li->size - 1);
        return i;
}

static int load_index_put(LoadIndex *li, uint64_t key, uint32_t entry) {
        if ((li->used + 1) * 2 > li->size) {
                LoadIndex bigger = { .size = li->size ? li->size * 2 : 1024 };
                bigger.keys = calloc(bigger.size, sizeof *bigger.keys);
                bigger.values = calloc(bigger.size, sizeof *bigger.values);
                if (!bigger.keys || !bigger.values) {
                        free(bigger.keys);
                        free(bigger.values);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < li->size; i++)
                        if (li->values[i]) {
                                size_t s = load_index_slot(&bigger, li->keys[i]);
                                bigger.keys[s] = li->keys[i];
                                bigger.values[s] = li->values[i];
                                bigger.used++;
                        }
                free(li->keys);
                free(li->values);
                *li = bigger;
        }
        size_t s = load_index_slot(li, key);
        if (!li->values[s])
                li->used++;
        li->keys[s] = key;
        li->values[s] = entry + 1; /* a later LOAD with the same index wins */
        return 0;
}

static void load_index_done(LoadIndex *li) {
        free(li->keys);
        free(li->values);
}

/* The line entries of the last DEBUG_INFO record, for the LOAD that follows it. */
typedef struct PendingDebug {
        uint64_t code_addr;
        uint64_t offset;
        uint32_t size, count;
        bool valid;
} PendingDebug;

typedef struct Reader {
        int fd;
        bool le;
        JitEntries *out;
        LoadIndex loads;
        PendingDebug debug;
} Reader;

static bool refuse(Reader *rd) {
        rd->out->refused++;
        return true;
}

/* Reads the n bytes after the record header of the record at offset
 * (size bytes in all): 0 read, 1 cut short (the end of a file being
 * written), 2 refused (the record is too small for them), or -errno. */
static int read_fixed(Reader *rd, uint64_t offset, uint32_t size, void *buf, size_t n) {
        if (size < JITDUMP_RECORD_HEADER + n)
                return refuse(rd), 2;
        ssize_t k = read_full(rd->fd, buf, n, (off_t) (offset + JITDUMP_RECORD_HEADER));
        if (k < 0)
                return (int) k;
        return (size_t) k < n ? 1 : 0;
}

/* LOAD at offset, size bytes in all. */
static int read_load(Reader *rd, uint64_t offset, uint32_t size) {
        uint8_t buf[JITDUMP_LOAD_FIXED + JITDUMP_NAME_SCAN];
        rd->out->read++;
        if (size < JITDUMP_RECORD_HEADER + JITDUMP_LOAD_FIXED + 1)
                return refuse(rd), 0;
        size_t want = size - JITDUMP_RECORD_HEADER;
        if (want > sizeof buf)
                want = sizeof buf;
        ssize_t k = read_full(rd->fd, buf, want, (off_t) (offset + JITDUMP_RECORD_HEADER));
        if (k < 0)
                return (int) k;
        if ((size_t) k < want)
                return 1; /* cut short: the end of a file being written */
        uint64_t vma = unaligned_load_u64(buf + 8, rd->le);
        uint64_t code_addr = unaligned_load_u64(buf + 16, rd->le);
        uint64_t code_size = unaligned_load_u64(buf + 24, rd->le);
        uint64_t code_index = unaligned_load_u64(buf + 32, rd->le);
        const uint8_t *name = buf + JITDUMP_LOAD_FIXED;
        const uint8_t *nul = memchr(name, '\0', want - JITDUMP_LOAD_FIXED);
        size_t name_size = nul ? (size_t) (nul - name) : want - JITDUMP_LOAD_FIXED;
        if (name_size == 0 || (!nul && want == size - JITDUMP_RECORD_HEADER) || vma + code_size < vma)
                return refuse(rd), 0; /* no name, no terminator in the record, or a wrapping range */
        if (code_size == 0)
                return 0; /* an empty function: nothing can be sampled in it */
        JitEntry e = {
                .start = vma,
                .size = code_size,
                .name_offset = offset + JITDUMP_RECORD_HEADER + JITDUMP_LOAD_FIXED,
                .name_size = (uint32_t) (name_size > HELPER_MAX_NAME ? HELPER_MAX_NAME : name_size),
        };
        /* Line entries come before the load of their code. */
        if (rd->debug.valid && rd->debug.code_addr == code_addr) {
                e.debug_offset = rd->debug.offset;
                e.debug_size = rd->debug.size;
                e.debug_count = rd->debug.count;
                e.debug_base = code_addr; /* the address the entries give for the code's first byte */
        }
        rd->debug.valid = false;
        int r = jit_entries_add(rd->out, &e);
        if (r < 0)
                return r;
        return load_index_put(&rd->loads, code_index, (uint32_t) (rd->out->n - 1));
}

static int read_move(Reader *rd, uint64_t offset, uint32_t size) {
        uint8_t buf[JITDUMP_MOVE_FIXED];
        rd->out->read++;
        int r = read_fixed(rd, offset, size, buf, sizeof buf);
        if (r != 0)
                return r == 2 ? 0 : r;
        uint64_t vma = unaligned_load_u64(buf + 8, rd->le);
        uint64_t code_size = unaligned_load_u64(buf + 32, rd->le);
        uint64_t code_index = unaligned_load_u64(buf + 40, rd->le);
        if (!rd->loads.size)
                return refuse(rd), 0;
        uint32_t v = rd->loads.values[load_index_slot(&rd->loads, code_index)];
        if (!v || code_size == 0 || vma + code_size < vma)
                return refuse(rd), 0; /* a move of code never loaded */
        JitEntry e = rd->out->entries[v - 1];
        /* The code keeps its name and lines; its size cannot change. */
        if (code_size != e.size)
                return refuse(rd), 0;
        e.start = vma; /* debug_base stays: the line entries keep the load's addresses */
        return jit_entries_add(rd->out, &e);
}

static int read_debug(Reader *rd, uint64_t offset, uint32_t size) {
        uint8_t buf[JITDUMP_DEBUG_FIXED];
        rd->debug.valid = false;
        int r = read_fixed(rd, offset, size, buf, sizeof buf);
        if (r != 0)
                return r == 2 ? 0 : r;
        uint64_t count = unaligned_load_u64(buf + 8, rd->le);
        uint32_t body = size - JITDUMP_RECORD_HEADER - JITDUMP_DEBUG_FIXED;
        if (count == 0 || count > HELPER_JIT_MAX_DEBUG_ENTRIES || body > JITDUMP_MAX_DEBUG_RECORD ||
            count * (JITDUMP_LINE_FIXED + 1) > body)
                return refuse(rd), 0;
        rd->debug = (PendingDebug) {
                .code_addr = unaligned_load_u64(buf, rd->le),
                .offset = offset + JITDUMP_RECORD_HEADER + JITDUMP_DEBUG_FIXED,
                .size = body,
                .count = (uint32_t) count,
                .valid = true,
        };
        return 0;
}

int jitdump_read(int fd, JitEntries *out) {
        uint8_t h[JITDUMP_HEADER_MIN];
        ssize_t k = read_full(fd, h, sizeof h, 0);
        if (k < 0)
                return (int) k;
        if ((size_t) k < sizeof h)
                return -EINVAL;
        Reader rd = { .fd = fd, .out = out };
        if (unaligned_load_u32(h, true) == JITDUMP_MAGIC)
                rd.le = true;
        else if (unaligned_load_u32(h, false) == JITDUMP_MAGIC)
                rd.le = false;
        else
                return -EINVAL;
        out->big_endian = !rd.le;
        uint32_t version = unaligned_load_u32(h + 4, rd.le), header_size = unaligned_load_u32(h + 8, rd.le);
        if (version != 1 || header_size < JITDUMP_HEADER_MIN || header_size > JITDUMP_HEADER_MAX)
                return -EINVAL;
        int r = 0;
        for (uint64_t offset = header_size; r == 0;) {
                uint8_t rh[JITDUMP_RECORD_HEADER];
                k = read_full(fd, rh, sizeof rh, (off_t) offset);
                if (k < 0) {
                        r = (int) k;
                        break;
                }
                if ((size_t) k < sizeof rh)
                        break; /* the end */
                uint32_t id = unaligned_load_u32(rh, rd.le), size = unaligned_load_u32(rh + 4, rd.le);
                if (size < JITDUMP_RECORD_HEADER) {
                        refuse(&rd); /* no way to find the next record */
                        break;
                }
                if (offset + size > HELPER_JIT_MAX_FILE_BYTES)
                        break;
                if (id == JIT_CODE_LOAD)
                        r = read_load(&rd, offset, size);
                else if (id == JIT_CODE_MOVE)
                        r = read_move(&rd, offset, size);
                else if (id == JIT_CODE_DEBUG_INFO)
                        r = read_debug(&rd, offset, size);
                else if (id == JIT_CODE_CLOSE)
                        break;
                /* UNWINDING_INFO and record types of later versions: skipped by size */
                offset += size;
        }
        load_index_done(&rd.loads);
        if (r == -E2BIG || r == 1)
                r = 0; /* enough entries, or the end of a file being written */
        return r;
}

int jitdump_source_line(int fd, const JitEntries *entries, const JitEntry *e, uint64_t address, char **ret_file,
                        uint32_t *ret_line) {
        if (!e->debug_size || address < e->start || address - e->start >= e->size)
                return 0;
        bool le = !entries->big_endian;
        uint64_t target = address - e->start + e->debug_base;
        _cleanup_free_ uint8_t *buf = malloc(e->debug_size);
        if (!buf)
                return -ENOMEM;
        ssize_t k = read_full(fd, buf, e->debug_size, (off_t) e->debug_offset);
        if (k < 0)
                return (int) k;
        if ((size_t) k < e->debug_size)
                return 0; /* the file shrank since it was read */
        const uint8_t *best = NULL;
        uint64_t best_addr = 0;
        size_t pos = 0;
        for (uint32_t i = 0; i < e->debug_count; i++) {
                if (e->debug_size - pos < JITDUMP_LINE_FIXED + 1)
                        return 0;
                const uint8_t *entry = buf + pos;
                const uint8_t *nul = memchr(entry + JITDUMP_LINE_FIXED, '\0', e->debug_size - pos - JITDUMP_LINE_FIXED);
                if (!nul)
                        return 0; /* malformed: no lines from this record */
                uint64_t a = unaligned_load_u64(entry, le);
                if (a <= target && (!best || a >= best_addr)) {
                        best = entry;
                        best_addr = a;
                }
                pos = (size_t) (nul - buf) + 1;
        }
        if (!best)
                return 0;
        uint32_t line = unaligned_load_u32(best + 8, le);
        const char *file = (const char *) best + JITDUMP_LINE_FIXED;
        if (line == 0 || !*file)
                return 0;
        size_t n = strnlen(file, HELPER_MAX_PATH);
        char *copy = strndup(file, n);
        if (!copy)
                return -ENOMEM;
        helper_utf8_sanitize(copy);
        *ret_file = copy;
        *ret_line = line;
        return 1;
}
