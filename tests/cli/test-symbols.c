/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-symbols.c: the embedded symbol tables (capture/symbols.h): what the
 * builder writes reads back the same, "__symbols__" decodes with an
 * independent decoder written from Sysprof 3.46's layout to the same names
 * as our own table, the loader prefers our table and falls back to
 * Sysprof's, and hostile tables are refused without crashing. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "test-check.h"

/* ---- an independent "__symbols__" decoder, written from the layout of
 * sysprof 3.46 src/libsysprof/sysprof-symbol-map.c: packed entries
 * { u64 begin, u64 end (inclusive), u32 pid, u32 name_off, u32 tag_off,
 * u32 pad } until one whose begin, end, pid and name_off are zero; offsets
 * from the start of the blob; lookup is a bsearch on (pid, begin<=a<=end). */
typedef struct {
        uint64_t begin, end;
        uint32_t pid, off, tag, pad;
} __attribute__((packed)) SysprofDecoded;

static const char *sysprof_lookup(const uint8_t *blob, size_t len, uint32_t pid, uint64_t addr) {
        const SysprofDecoded *d = (const SysprofDecoded *) blob;
        size_t n = 0;
        while ((n + 1) * sizeof(SysprofDecoded) < len &&
               !(d[n].begin == 0 && d[n].end == 0 && d[n].pid == 0 && d[n].off == 0))
                n++;
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (pid < d[mid].pid || (pid == d[mid].pid && addr < d[mid].begin))
                        hi = mid;
                else if (pid > d[mid].pid || addr > d[mid].end)
                        lo = mid + 1;
                else
                        return d[mid].off && d[mid].off < len ? (const char *) blob + d[mid].off : NULL;
        }
        return NULL;
}

static const char *sysprof_tag(const uint8_t *blob, size_t len, uint32_t pid, uint64_t addr) {
        const SysprofDecoded *d = (const SysprofDecoded *) blob;
        for (size_t i = 0; (i + 1) * sizeof(SysprofDecoded) < len && d[i].off; i++)
                if (d[i].pid == pid && addr >= d[i].begin && addr <= d[i].end)
                        return d[i].tag ? (const char *) blob + d[i].tag : NULL;
        return NULL;
}

/* ---- fixtures ---------------------------------------------------------- */

#define PID_A 4242
#define PID_B 777

static SymbolTableBuilder *make_builder(void) {
        SymbolTableBuilder *b;
        MUST(symbol_table_builder_new(&b));

        /* pid A: main → compute, with square() and add_one() inlined into compute. */
        SymbolFrame compute_chain[] = {
                { "add_one", "/src/math.h", 12, SYMBOL_FRAME_INLINED, 0 },
                { "square", "/src/math.h", 20, SYMBOL_FRAME_INLINED, 0 },
                { "compute", "/src/app.c", 40, 0, 0x18 },
        };
        SymbolFrame main_frame[] = { { "main", "/src/app.c", 77, 0, 0x2a } };
        SymbolFrame cxx[] = { { "std::vector<int, std::allocator<int> >::push_back(int const&)", NULL, 0, 0, 4 } };
        MUST(symbol_table_builder_add_range(b, PID_A, 0x401000, 0x401040, compute_chain, 3));
        MUST(symbol_table_builder_add_range(b, PID_A, 0x401100, 0x401180, main_frame, 1));
        MUST(symbol_table_builder_add_range(b, PID_A, 0x7f0000001000, 0x7f0000001100, cxx, 1));
        MUST(symbol_table_builder_add_unresolved(b, PID_A, 0x7f0000200000, 0x7f0000201000, "helper failed"));

        SymbolFrame other[] = { { "worker_loop", "/src/w.c", 5, 0, 0 } };
        MUST(symbol_table_builder_add_range(b, PID_B, 0x401000, 0x401020, other, 1)); /* same address, other pid */

        SymbolFrame kfn[] = { { "do_syscall_64", NULL, 0, SYMBOL_FRAME_KERNEL, 0 } };
        MUST(symbol_table_builder_add_range(b, SYMBOLS_PID_ANY, 0xffffffff81000000ull, 0xffffffff81000100ull, kfn, 1));

        SymbolMapping m = {
                .pid = PID_A, .start = 0x400000, .end = 0x500000,
                .path = "/proc/4242/map_files/400000-500000", .method = "map_files",
                .verdict = "inode+build-id match", .build_id = "0123abcd", .flags = SYMBOL_MAPPING_VERIFIED,
        };
        MUST(symbol_table_builder_add_mapping(b, &m));
        SymbolMapping lib = {
                .pid = PID_A, .start = 0x7f0000000000, .end = 0x7f0000100000,
                .path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", .method = "pinned",
                .verdict = "binary changed since it was mapped", .build_id = NULL,
        };
        MUST(symbol_table_builder_add_mapping(b, &lib));
        return b;
}

/* The addresses the tests look up, with the outermost name they expect. */
static const struct {
        int32_t pid;
        uint64_t addr;
        const char *outer; /* NULL: no symbol */
        const char *tag;
} probes[] = {
        { PID_A, 0x401000, "compute", "400000-500000" },
        { PID_A, 0x40103f, "compute", "400000-500000" },
        { PID_A, 0x401040, NULL, NULL },
        { PID_A, 0x401100, "main", "400000-500000" },
        { PID_A, 0x7f0000001004, "std::vector<int, std::allocator<int> >::push_back(int const&)", "libstdc++.so.6" },
        { PID_A, 0x7f0000200010, "[unresolved: helper failed]", NULL },
        { PID_B, 0x401000, "worker_loop", NULL },
        { PID_B, 0x401020, NULL, NULL },
        { PID_A, 0xffffffff81000010ull, "do_syscall_64", NULL },
        { PID_B, 0xffffffff810000ffull, "do_syscall_64", NULL },
        { 9999, 0x401000, NULL, NULL },
};

TEST(periscope_roundtrip) {
        SymbolTableBuilder *b = make_builder();
        uint8_t *data;
        size_t len;
        MUST(symbol_table_builder_serialize_periscope(b, &data, &len));
        SymbolTable *t = NULL;
        char *err = NULL;
        int r = symbol_table_parse_periscope(data, len, &t, &err);
        CHECK_MSG(r == 0, "parse: %s", err);
        if (r < 0)
                exit(1);
        CHECK_MSG(symbol_table_get_kind(t) == SYMBOL_TABLE_PERISCOPE, "kind");

        const SymbolRange *rg = symbol_table_lookup(t, PID_A, 0x401010);
        CHECK_MSG(rg && rg->n_frames == 3, "compute chain has 3 frames");
        if (rg && rg->n_frames == 3) {
                CHECK_MSG(strcmp(rg->frames[0].function, "add_one") == 0, "innermost is add_one, got %s", rg->frames[0].function);
                CHECK_MSG(rg->frames[0].flags & SYMBOL_FRAME_INLINED, "add_one is inlined");
                CHECK_MSG(strcmp(rg->frames[0].file, "/src/math.h") == 0 && rg->frames[0].line == 12, "add_one at math.h:12");
                CHECK_MSG(strcmp(rg->frames[1].function, "square") == 0, "then square");
                CHECK_MSG(strcmp(rg->frames[2].function, "compute") == 0, "outermost compute");
                CHECK_MSG(!(rg->frames[2].flags & SYMBOL_FRAME_INLINED), "compute is not inlined");
                CHECK_MSG(rg->frames[2].offset == 0x18 && rg->frames[2].line == 40, "compute+0x18 line 40");
        }
        for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
                rg = symbol_table_lookup(t, probes[i].pid, probes[i].addr);
                const char *got = rg ? rg->frames[rg->n_frames - 1].function : NULL;
                CHECK_MSG((got == NULL) == (probes[i].outer == NULL) && (!got || strcmp(got, probes[i].outer) == 0),
                          "pid %d %#" PRIx64 ": want %s, got %s", probes[i].pid, probes[i].addr,
                          probes[i].outer ? probes[i].outer : "(none)", got ? got : "(none)");
        }
        rg = symbol_table_lookup(t, PID_A, 0x7f0000200010);
        CHECK_MSG(rg && (rg->frames[0].flags & SYMBOL_FRAME_UNRESOLVED), "unresolved flag kept");

        CHECK_MSG(symbol_table_get_n_mappings(t) == 2, "two mappings, got %zu", symbol_table_get_n_mappings(t));
        const SymbolMapping *m = symbol_table_lookup_mapping(t, PID_A, 0x7f0000001004);
        CHECK_MSG(m && strcmp(m->method, "pinned") == 0 && strcmp(m->verdict, "binary changed since it was mapped") == 0 &&
                          m->build_id == NULL && !(m->flags & SYMBOL_MAPPING_VERIFIED),
                  "libstdc++ provenance");
        m = symbol_table_lookup_mapping(t, PID_A, 0x401000);
        CHECK_MSG(m && strcmp(m->build_id, "0123abcd") == 0 && (m->flags & SYMBOL_MAPPING_VERIFIED) &&
                          strcmp(m->verdict, "inode+build-id match") == 0,
                  "main binary provenance");
        CHECK_MSG(symbol_table_lookup_mapping(t, PID_B, 0x401000) == NULL, "no mapping record for pid B");

        symbol_table_free(t);
        free(data);
        symbol_table_builder_free(b);
}

TEST(sysprof_layout) {
        SymbolTableBuilder *b = make_builder();
        uint8_t *data, *pdata;
        size_t len, plen;
        MUST(symbol_table_builder_serialize_sysprof(b, &data, &len));
        MUST(symbol_table_builder_serialize_periscope(b, &pdata, &plen));
        SymbolTable *ours;
        MUST(symbol_table_parse_periscope(pdata, plen, &ours, NULL));

        /* Independent decoder agrees with our table on every probe (Sysprof
         * shows the outermost, real function), and tags are module names. */
        for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
                const char *got = sysprof_lookup(data, len, (uint32_t) probes[i].pid, probes[i].addr);
                const SymbolRange *rg = symbol_table_lookup(ours, probes[i].pid, probes[i].addr);
                const char *want = rg ? rg->frames[rg->n_frames - 1].function : NULL;
                CHECK_MSG((got == NULL) == (want == NULL) && (!got || strcmp(got, want) == 0),
                          "__symbols__ pid %d %#" PRIx64 ": ours %s, 3.46 layout %s", probes[i].pid, probes[i].addr,
                          want ? want : "(none)", got ? got : "(none)");
                if (probes[i].tag && strcmp(probes[i].tag, "400000-500000") != 0) {
                        const char *tag = sysprof_tag(data, len, (uint32_t) probes[i].pid, probes[i].addr);
                        CHECK_MSG(tag && strcmp(tag, probes[i].tag) == 0, "tag %s, got %s", probes[i].tag, tag ? tag : "(none)");
                }
        }
        /* The layout is exactly entries, one zero entry, strings; last byte NUL. */
        CHECK_MSG(len % 32 != 0 || data[len - 1] == 0, "ends in NUL");
        CHECK_MSG(data[len - 1] == 0, "final NUL");

        /* Our own Sysprof-layout reader sees the same. */
        SymbolTable *t = NULL;
        char *err = NULL;
        int r = symbol_table_parse_sysprof(data, len, true, &t, &err);
        CHECK_MSG(r == 0, "parse_sysprof: %s", err);
        if (t) {
                CHECK_MSG(symbol_table_get_kind(t) == SYMBOL_TABLE_SYSPROF, "kind");
                for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
                        const SymbolRange *rg = symbol_table_lookup(t, probes[i].pid, probes[i].addr);
                        const char *got = rg ? rg->frames[0].function : NULL;
                        CHECK_MSG((got == NULL) == (probes[i].outer == NULL) && (!got || strcmp(got, probes[i].outer) == 0),
                                  "sysprof reader pid %d %#" PRIx64 ": want %s got %s", probes[i].pid, probes[i].addr,
                                  probes[i].outer ? probes[i].outer : "(none)", got ? got : "(none)");
                }
                const SymbolRange *rg = symbol_table_lookup(t, PID_A, 0x7f0000001004);
                CHECK_MSG(rg && rg->module && strcmp(rg->module, "libstdc++.so.6") == 0, "module from tag");
        }
        symbol_table_free(t);
        free(err);

        /* Big-endian variant of the same table decodes the same with
         * little_endian=false (Sysprof swaps per the capture's byte order). */
        uint8_t *be = malloc(len);
        memcpy(be, data, len);
        for (size_t at = 0; at + 32 < len; at += 32) {
                uint8_t *e = be + at;
                bool zero = true;
                for (int k = 0; k < 24; k++)
                        zero &= e[k] == 0;
                if (zero)
                        break;
                for (int f = 0; f < 2; f++)
                        for (int k = 0; k < 4; k++) {
                                uint8_t tmp = e[f * 8 + k];
                                e[f * 8 + k] = e[f * 8 + 7 - k];
                                e[f * 8 + 7 - k] = tmp;
                        }
                for (int f = 0; f < 4; f++) {
                        uint8_t *q = e + 16 + f * 4, t0 = q[0], t1 = q[1];
                        q[0] = q[3];
                        q[1] = q[2];
                        q[2] = t1;
                        q[3] = t0;
                }
        }
        t = NULL;
        MUST(symbol_table_parse_sysprof(be, len, false, &t, NULL));
        const SymbolRange *rg = symbol_table_lookup(t, PID_A, 0x401100);
        CHECK_MSG(rg && strcmp(rg->frames[0].function, "main") == 0, "big-endian decode");
        symbol_table_free(t);
        free(be);

        symbol_table_free(ours);
        free(pdata);
        free(data);
        symbol_table_builder_free(b);
}

TEST(overlaps_clipped) {
        SymbolTableBuilder *b;
        MUST(symbol_table_builder_new(&b));
        SymbolFrame f1[] = { { "first", NULL, 0, 0, 0 } }, f2[] = { { "second", NULL, 0, 0, 0 } };
        MUST(symbol_table_builder_add_range(b, 1, 0x100, 0x200, f1, 1));
        MUST(symbol_table_builder_add_range(b, 1, 0x180, 0x280, f2, 1));
        MUST(symbol_table_builder_add_range(b, 1, 0x120, 0x140, f2, 1)); /* fully covered: dropped */
        CHECK_MSG(symbol_table_builder_add_range(b, 1, 0x300, 0x300, f1, 1) == -EINVAL, "empty range refused");
        SymbolFrame nameless[] = { { "", NULL, 0, 0, 0 } };
        CHECK_MSG(symbol_table_builder_add_range(b, 1, 0x300, 0x301, nameless, 1) == -EINVAL, "nameless frame refused");
        uint8_t *data, *sdata;
        size_t len, slen;
        MUST(symbol_table_builder_serialize_periscope(b, &data, &len));
        MUST(symbol_table_builder_serialize_sysprof(b, &sdata, &slen));
        SymbolTable *t;
        MUST(symbol_table_parse_periscope(data, len, &t, NULL));
        CHECK_MSG(symbol_table_get_n_ranges(t) == 2, "two ranges after clipping, got %zu", symbol_table_get_n_ranges(t));
        const SymbolRange *r = symbol_table_lookup(t, 1, 0x130);
        CHECK_MSG(r && strcmp(r->frames[0].function, "first") == 0, "earlier range wins at 0x130");
        r = symbol_table_lookup(t, 1, 0x1ff);
        CHECK_MSG(r && strcmp(r->frames[0].function, "first") == 0, "earlier range wins at 0x1ff");
        r = symbol_table_lookup(t, 1, 0x200);
        CHECK_MSG(r && strcmp(r->frames[0].function, "second") == 0, "second from 0x200");
        const char *s = sysprof_lookup(sdata, slen, 1, 0x1ff);
        CHECK_MSG(s && strcmp(s, "first") == 0, "sysprof: first at 0x1ff");
        s = sysprof_lookup(sdata, slen, 1, 0x200);
        CHECK_MSG(s && strcmp(s, "second") == 0, "sysprof: second at 0x200");
        symbol_table_free(t);
        free(data);
        free(sdata);
        symbol_table_builder_free(b);

        /* An empty builder still writes tables both readers accept. */
        MUST(symbol_table_builder_new(&b));
        MUST(symbol_table_builder_serialize_periscope(b, &data, &len));
        MUST(symbol_table_builder_serialize_sysprof(b, &sdata, &slen));
        MUST(symbol_table_parse_periscope(data, len, &t, NULL));
        CHECK_MSG(symbol_table_get_n_ranges(t) == 0, "empty");
        symbol_table_free(t);
        MUST(symbol_table_parse_sysprof(sdata, slen, true, &t, NULL));
        CHECK_MSG(symbol_table_get_n_ranges(t) == 0, "empty sysprof");
        symbol_table_free(t);
        free(data);
        free(sdata);
        symbol_table_builder_free(b);
}

static size_t sysprof_count_entries(const uint8_t *blob, size_t len) {
        const SysprofDecoded *d = (const SysprofDecoded *) blob;
        size_t n = 0;
        while ((n + 1) * sizeof(SysprofDecoded) < len &&
               !(d[n].begin == 0 && d[n].end == 0 && d[n].pid == 0 && d[n].off == 0))
                n++;
        return n;
}

/* The service adds one range per sampled address: "__symbols__" merges
 * runs of one function into one entry, and every address still resolves. */
TEST(sysprof_merges_runs) {
        SymbolTableBuilder *b;
        MUST(symbol_table_builder_new(&b));
        SymbolFrame hot[] = { { "hot", NULL, 0, 0, 0 } }, cold[] = { { "cold", NULL, 0, 0, 0 } };
        SymbolFrame inl[] = { { "leaf", NULL, 0, SYMBOL_FRAME_INLINED, 0 }, { "hot", NULL, 0, 0, 0 } };
        uint64_t hot_addrs[] = { 0x1000, 0x1010, 0x1024, 0x1040 };
        for (size_t i = 0; i < 4; i++)
                MUST(symbol_table_builder_add_range(b, 5, hot_addrs[i], hot_addrs[i] + 1, i == 2 ? inl : hot, i == 2 ? 2 : 1));
        MUST(symbol_table_builder_add_range(b, 5, 0x1050, 0x1051, cold, 1));
        MUST(symbol_table_builder_add_range(b, 5, 0x1060, 0x1061, hot, 1));
        MUST(symbol_table_builder_add_range(b, 6, 0x1070, 0x1071, hot, 1)); /* other pid: own entry */
        uint8_t *data;
        size_t len;
        MUST(symbol_table_builder_serialize_sysprof(b, &data, &len));
        CHECK_MSG(sysprof_count_entries(data, len) == 4, "hot run merged: %zu entries", sysprof_count_entries(data, len));
        for (size_t i = 0; i < 4; i++) {
                const char *s = sysprof_lookup(data, len, 5, hot_addrs[i]);
                CHECK_MSG(s && strcmp(s, "hot") == 0, "hot at %#" PRIx64, hot_addrs[i]);
        }
        const char *s = sysprof_lookup(data, len, 5, 0x1050);
        CHECK_MSG(s && strcmp(s, "cold") == 0, "cold stays");
        s = sysprof_lookup(data, len, 5, 0x1060);
        CHECK_MSG(s && strcmp(s, "hot") == 0, "hot after cold");
        s = sysprof_lookup(data, len, 6, 0x1070);
        CHECK_MSG(s && strcmp(s, "hot") == 0, "pid 6");
        CHECK_MSG(sysprof_lookup(data, len, 5, 0x1061) == NULL, "nothing after the last range");
        free(data);
        symbol_table_builder_free(b);
}

static char *tmp_capture(int *ret_fd) {
        char *path = strdup("/tmp/test-symbols-XXXXXX");
        int fd = mkstemp(path);
        if (fd < 0) {
                perror("mkstemp");
                exit(1);
        }
        *ret_fd = fd;
        return path;
}

/* Closes w, the writer of the temporary capture at path (fd), and opens
 * it for reading; the file is gone when it returns. */
static CaptureReader *capture_reopen(CaptureWriter *w, int fd, char *path) {
        MUST(capture_writer_flush(w));
        capture_writer_free(w);
        CaptureReader *r;
        MUST(capture_reader_open_path(path, &r, NULL));
        close(fd);
        unlink(path);
        free(path);
        return r;
}

/* A capture that embeds data as the file name (nothing when name is
 * NULL), open for reading. */
static CaptureReader *capture_with_file(const char *name, const uint8_t *data, size_t len) {
        int fd;
        char *path = tmp_capture(&fd);
        CaptureWriter *w;
        MUST(capture_writer_new_fd(fd, 1000, &w));
        if (name)
                MUST(capture_writer_add_file(w, 1500, -1, -1, name, data, len));
        return capture_reopen(w, fd, path);
}

TEST(capture_load) {
        /* Both tables: the Periscope one is preferred. */
        int fd;
        char *path = tmp_capture(&fd);
        CaptureWriter *w;
        MUST(capture_writer_new_fd(fd, 1000, &w));
        uint64_t stack[] = { 0x401010, 0x401100 };
        MUST(capture_writer_add_sample(w, 1001, 0, PID_A, PID_A, stack, 2));
        SymbolTableBuilder *b = make_builder();
        MUST(symbol_table_builder_write(b, w, 2000));
        CaptureReader *r = capture_reopen(w, fd, path);
        SymbolTable *t = NULL;
        char *err = NULL;
        int k = symbol_table_load(r, &t, &err);
        CHECK_MSG(k == 0, "load: %s", err);
        if (t) {
                CHECK_MSG(symbol_table_get_kind(t) == SYMBOL_TABLE_PERISCOPE, "periscope table preferred");
                const SymbolRange *rg = symbol_table_lookup(t, PID_A, 0x401010);
                CHECK_MSG(rg && rg->n_frames == 3, "inline chain loaded from the capture");
        }
        CaptureFrame fr;
        CHECK_MSG(capture_reader_next(r, &fr) == 1 && fr.type == CAPTURE_FRAME_SAMPLE, "reader position unchanged");
        symbol_table_free(t);
        capture_reader_free(r);

        /* Only "__symbols__" (as Sysprof writes): fallback. */
        uint8_t *data;
        size_t len;
        MUST(symbol_table_builder_serialize_sysprof(b, &data, &len));
        r = capture_with_file("__symbols__", data, len);
        free(data);
        t = NULL;
        k = symbol_table_load(r, &t, &err);
        CHECK_MSG(k == 0, "load sysprof: %s", err);
        if (t) {
                CHECK_MSG(symbol_table_get_kind(t) == SYMBOL_TABLE_SYSPROF, "fell back to __symbols__");
                const SymbolRange *rg = symbol_table_lookup(t, PID_A, 0x401010);
                CHECK_MSG(rg && strcmp(rg->frames[0].function, "compute") == 0, "compute via __symbols__");
        }
        symbol_table_free(t);
        capture_reader_free(r);

        /* A hostile Periscope table alone: a clean error. */
        MUST(symbol_table_builder_serialize_periscope(b, &data, &len));
        data[16] = 0xff; /* n_ranges */
        r = capture_with_file(SYMBOLS_PERISCOPE_PATH, data, len);
        free(data);
        t = NULL;
        free(err);
        err = NULL;
        k = symbol_table_load(r, &t, &err);
        CHECK_MSG(k == -EBADMSG && t == NULL && err && strstr(err, SYMBOLS_PERISCOPE_PATH), "hostile table refused: %d %s", k,
                  err ? err : "(no message)");
        capture_reader_free(r);
        free(err);
        err = NULL;

        /* Neither table: -ENOENT with a message. */
        r = capture_with_file(NULL, NULL, 0);
        k = symbol_table_load(r, &t, &err);
        CHECK_MSG(k == -ENOENT && err && strstr(err, "no symbols"), "no tables: %d %s", k, err ? err : "");
        free(err);
        capture_reader_free(r);

        symbol_table_builder_free(b);
}

/* A merged capture (sysprof-cli --merge): two recordings' tables one after
 * the other, and a third part that only has Sysprof's table. Every part's
 * names are found; a pid the first table has keeps the first's names. */
TEST(merged_tables) {
        int fd;
        char *path = tmp_capture(&fd);
        CaptureWriter *w;
        MUST(capture_writer_new_fd(fd, 1000, &w));
        SymbolTableBuilder *first = make_builder(), *second, *third;
        MUST(symbol_table_builder_write(first, w, 2000));
        MUST(symbol_table_builder_new(&second));
        SymbolFrame b_frame[] = { { "second_capture_fn", "/src/b.c", 3, 0, 0 } };
        SymbolFrame clash[] = { { "not_the_first", NULL, 0, 0, 0 } };
        MUST(symbol_table_builder_add_range(second, 5150, 0x401000, 0x401080, b_frame, 1));
        MUST(symbol_table_builder_add_range(second, PID_A, 0x401000, 0x401040, clash, 1));
        MUST(symbol_table_builder_write(second, w, 3000));
        MUST(symbol_table_builder_new(&third));
        SymbolFrame c_frame[] = { { "sysprof_only_fn", NULL, 0, 0, 0 } };
        MUST(symbol_table_builder_add_range(third, 6160, 0x500000, 0x500100, c_frame, 1));
        uint8_t *data;
        size_t len;
        MUST(symbol_table_builder_serialize_sysprof(third, &data, &len));
        MUST(capture_writer_add_file(w, 4000, -1, -1, SYMBOLS_SYSPROF_PATH, data, len));
        free(data);
        CaptureReader *r = capture_reopen(w, fd, path);
        SymbolTable *t = NULL;
        char *err = NULL;
        int k = symbol_table_load(r, &t, &err);
        CHECK_MSG(k == 0 && t, "merged capture loads: %s", err ? err : "");
        if (t) {
                const SymbolRange *a = symbol_table_lookup(t, PID_A, 0x401010);
                CHECK_MSG(a && a->n_frames == 3 && strcmp(a->frames[2].function, "compute") == 0,
                          "the first capture's names: %s", a ? a->frames[a->n_frames - 1].function : "(none)");
                const SymbolRange *b = symbol_table_lookup(t, 5150, 0x401010);
                CHECK_MSG(b && strcmp(b->frames[0].function, "second_capture_fn") == 0, "the second capture's names");
                const SymbolRange *c = symbol_table_lookup(t, 6160, 0x500010);
                CHECK_MSG(c && strcmp(c->frames[0].function, "sysprof_only_fn") == 0,
                          "a part with only Sysprof's table keeps its names");
                const SymbolRange *worker = symbol_table_lookup(t, PID_B, 0x401010);
                CHECK_MSG(worker && strcmp(worker->frames[0].function, "worker_loop") == 0, "pid B intact");
                CHECK_MSG(symbol_table_get_n_mappings(t) >= 2, "mappings kept");
        }
        symbol_table_free(t);
        free(err);
        capture_reader_free(r);
        symbol_table_builder_free(first);
        symbol_table_builder_free(second);
        symbol_table_builder_free(third);
}

static void put32(uint8_t *p, uint32_t v) {
        memcpy(p, &v, 4); /* this test runs on little-endian machines */
}

TEST(hostile) {
        SymbolTableBuilder *b = make_builder();
        uint8_t *pdata, *sdata;
        size_t plen, slen;
        MUST(symbol_table_builder_serialize_periscope(b, &pdata, &plen));
        MUST(symbol_table_builder_serialize_sysprof(b, &sdata, &slen));
        SymbolTable *t;
        char *err = NULL;

        /* Every truncation of the Periscope table is refused (its size is
         * exact), each with a message. */
        for (size_t cut = 0; cut < plen; cut++) {
                t = NULL;
                int r = symbol_table_parse_periscope(pdata, cut, &t, &err);
                CHECK_MSG(r == -EBADMSG && !t, "truncated at %zu: %d", cut, r);
        }
        CHECK_MSG(err && *err, "message for truncation");

        struct {
                size_t at;
                uint32_t value;
                const char *what;
        } pokes[] = {
                { 8, 2, "version" },
                { 12, 8, "header size below minimum" },
                { 12, 0xfffffff0u, "huge header size" },
                { 16, 0xffffffffu, "huge range count" },
                { 20, 0x10000000u, "huge frame count" },
                { 24, 7, "mapping count" },
                { 28, 0, "no strings" },
                { 40 + 4, 0xffffff, "range first_frame" },
                { 40 + 24, 0, "range with no frames" },
                { 40 + 24, 0xffffffffu, "range with huge frame count" },
                { 40 + 8, 0xffffffffu, "range begin > end" },
        };
        for (size_t i = 0; i < sizeof(pokes) / sizeof(pokes[0]); i++) {
                uint8_t *copy = malloc(plen);
                memcpy(copy, pdata, plen);
                put32(copy + pokes[i].at, pokes[i].value);
                if (pokes[i].at == 40 + 8)
                        put32(copy + pokes[i].at + 4, 0xffffffffu);
                t = NULL;
                int r = symbol_table_parse_periscope(copy, plen, &t, &err);
                CHECK_MSG(r < 0 && !t, "%s accepted", pokes[i].what);
                free(copy);
        }

        /* Bad string offsets in frames and mappings. */
        uint32_t n_ranges, n_frames, n_mappings;
        memcpy(&n_ranges, pdata + 16, 4);
        memcpy(&n_frames, pdata + 20, 4);
        memcpy(&n_mappings, pdata + 24, 4);
        size_t frames_at = 40 + 32 * (size_t) n_ranges, mappings_at = frames_at + 24 * (size_t) n_frames;
        uint32_t bad_offsets[] = { 0xffffffffu, (uint32_t) plen, 0 };
        for (size_t i = 0; i < 3; i++) {
                uint8_t *copy = malloc(plen);
                memcpy(copy, pdata, plen);
                put32(copy + frames_at, bad_offsets[i]);
                t = NULL;
                CHECK_MSG(symbol_table_parse_periscope(copy, plen, &t, &err) == -EBADMSG, "bad function offset %u",
                          bad_offsets[i]);
                memcpy(copy, pdata, plen);
                put32(copy + mappings_at + 24, bad_offsets[i]);
                CHECK_MSG(symbol_table_parse_periscope(copy, plen, &t, &err) == -EBADMSG, "bad path offset %u",
                          bad_offsets[i]);
                free(copy);
        }
        /* A string that runs off the end of the table. */
        {
                uint8_t *copy = malloc(plen);
                memcpy(copy, pdata, plen);
                copy[plen - 1] = 'x';
                t = NULL;
                int r = symbol_table_parse_periscope(copy, plen, &t, &err);
                CHECK_MSG(r == -EBADMSG || (r == 0 && t), "unterminated last string: %d", r);
                symbol_table_free(t);
                free(copy);
        }

        /* Sysprof layout: bad name/tag offsets, reversed ranges, no marker. */
        struct {
                size_t at;
                uint32_t value;
                const char *what;
        } spokes[] = {
                { 20, 0xfffffff0u, "name offset past the end" },
                { 20, 8, "name offset inside the entries" },
                { 24, 0xfffffff0u, "tag offset past the end" },
                { 8, 0, "end before begin" },
        };
        for (size_t i = 0; i < sizeof(spokes) / sizeof(spokes[0]); i++) {
                uint8_t *copy = malloc(slen);
                memcpy(copy, sdata, slen);
                put32(copy + spokes[i].at, spokes[i].value);
                if (spokes[i].at == 8)
                        put32(copy + 12, 0);
                t = NULL;
                CHECK_MSG(symbol_table_parse_sysprof(copy, slen, true, &t, &err) == -EBADMSG && !t, "%s accepted",
                          spokes[i].what);
                free(copy);
        }
        for (size_t cut = 0; cut < slen; cut += 7) {
                t = NULL;
                int r = symbol_table_parse_sysprof(sdata, cut, true, &t, &err);
                CHECK_MSG(r == -EBADMSG || (r == 0 && t), "sysprof truncated at %zu: %d", cut, r);
                symbol_table_free(t);
        }
        uint8_t garbage[100];
        memset(garbage, 0x41, sizeof(garbage));
        t = NULL;
        CHECK_MSG(symbol_table_parse_sysprof(garbage, sizeof(garbage), true, &t, &err) == -EBADMSG, "no end marker");
        CHECK_MSG(err && strstr(err, "end-of-entries"), "message says what: %s", err ? err : "");

        /* Random corruption never crashes and never yields a table whose
         * lookups point outside it (ASan checks the latter). */
        srand(12345);
        for (int round = 0; round < 3000; round++) {
                bool sysprof = round & 1;
                size_t len = sysprof ? slen : plen;
                uint8_t *copy = malloc(len);
                memcpy(copy, sysprof ? sdata : pdata, len);
                int flips = 1 + rand() % 4;
                for (int k = 0; k < flips; k++)
                        copy[rand() % len] ^= (uint8_t) (1 + rand() % 255);
                t = NULL;
                int r = sysprof ? symbol_table_parse_sysprof(copy, len, true, &t, &err)
                                : symbol_table_parse_periscope(copy, len, &t, &err);
                if (r == 0) {
                        for (size_t i = 0; i < symbol_table_get_n_ranges(t); i++) {
                                const SymbolRange *rg = symbol_table_get_range(t, i);
                                for (uint32_t f = 0; f < rg->n_frames; f++)
                                        CHECK_MSG(strlen(rg->frames[f].function) < len, "string in bounds");
                                CHECK_MSG(symbol_table_lookup(t, rg->pid, rg->begin) != NULL, "range findable");
                        }
                        for (size_t i = 0; i < symbol_table_get_n_mappings(t); i++)
                                CHECK_MSG(strlen(symbol_table_get_mapping(t, i)->path) < len, "path in bounds");
                } else
                        CHECK_MSG(r == -EBADMSG || r == -EPROTONOSUPPORT, "round %d: unexpected %d", round, r);
                symbol_table_free(t);
                free(copy);
        }

        free(err);
        free(pdata);
        free(sdata);
        symbol_table_builder_free(b);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
