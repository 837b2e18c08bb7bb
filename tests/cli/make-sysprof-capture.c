/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make-sysprof-capture.c: writes the report fixture (report-fixture.h) the
 * way Sysprof does: with libsysprof-capture-4's writer and a "__symbols__"
 * table encoded here, independently of Periscope's code, from the layout
 * of sysprof 3.46 src/libsysprof/sysprof-symbol-map.c (packed entries of
 * u64 begin, u64 end inclusive, u32 pid, u32 name offset, u32 tag offset,
 * u32 padding, sorted by pid then address; a zero entry; then strings, with
 * offsets counted from the start of the blob).
 *
 * With a second argument, the table Sysprof 45 and later write instead
 * (48.1 src/libsysprof/sysprof-document.c, serialize_symbols_fiber, and
 * sysprof-recording.c, _sysprof_recording_add_file_data): the same entries
 * with exclusive ends and the binary's nick as tag (offset of "" when
 * none), sorted, then the all-zero entry inside the array, then the
 * strings starting with "", offsets from the start of the blob; gzip'ed
 * (GZlibCompressor's gzip format, level 6) as "__symbols__.gz" in chunks
 * of 32 KiB minus the chunk header. main's range gets a neighbour ending
 * where it begins, so an end read as inclusive names main wrongly.
 *
 *   make-sysprof-capture OUT                the 3.46 "__symbols__"
 *   make-sysprof-capture OUT gz             Sysprof 45+'s "__symbols__.gz"
 *   make-sysprof-capture OUT gz-truncated   the same, its gzip stream cut in half
 *   make-sysprof-capture OUT gz-bomb        a "__symbols__.gz" of 300 MiB of zeros */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sysprof-capture.h>
#include <zlib.h>

#include "report-fixture.h"

typedef struct {
        uint64_t begin, end;
        uint32_t pid, offset, tag_offset, padding;
} __attribute__((packed)) Entry;

static int entry_cmp(const void *a, const void *b) {
        const Entry *x = a, *y = b;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* gzip of in[0, len) at level 6, malloc'ed. */
static uint8_t *gzip(const uint8_t *in, size_t len, size_t *ret_len) {
        z_stream z = { 0 };
        if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return NULL;
        size_t cap = deflateBound(&z, len);
        uint8_t *out = malloc(cap);
        z.next_in = (Bytef *) in;
        z.avail_in = (uInt) len;
        z.next_out = out;
        z.avail_out = (uInt) cap;
        if (!out || deflate(&z, Z_FINISH) != Z_STREAM_END) {
                free(out);
                deflateEnd(&z);
                return NULL;
        }
        *ret_len = cap - z.avail_out;
        deflateEnd(&z);
        return out;
}

/* Sysprof 45+'s table, gzip'ed (see the top of the file). */
static uint8_t *make_gz_table(const char *mode, size_t *ret_len) {
        if (strcmp(mode, "gz-bomb") == 0) {
                size_t n = 300u << 20;
                uint8_t *zeros = calloc(1, n);
                uint8_t *out = zeros ? gzip(zeros, n, ret_len) : NULL;
                free(zeros);
                return out;
        }
        const int32_t pids[] = { FX_APP, FX_WORKER };
        FxSymbol syms[16];
        size_t n_sym = 0;
        for (size_t i = 0; i < sizeof(fx_symbols) / sizeof(fx_symbols[0]); i++)
                syms[n_sym++] = fx_symbols[i];
        syms[n_sym++] = (FxSymbol){ FX_APP, 0x401080, 0x401100, "before_main" };
        Entry entries[32];
        size_t n = 0;
        char strings[4096] = "";
        size_t slen = 1; /* "" first: offset 0 (before the shift) is the empty string */
        size_t app_tag = slen;
        memcpy(strings + slen, "app", 4);
        slen += 4;
        for (size_t i = 0; i < n_sym; i++) {
                size_t name_at = slen, l = strlen(syms[i].name) + 1;
                memcpy(strings + slen, syms[i].name, l);
                slen += l;
                for (size_t p = 0; p < 2; p++) {
                        if (syms[i].pid >= 0 && syms[i].pid != pids[p])
                                continue;
                        entries[n++] = (Entry){ syms[i].begin,
                                                syms[i].end,
                                                (uint32_t) pids[p],
                                                (uint32_t) name_at,
                                                syms[i].pid == FX_APP ? (uint32_t) app_tag : 0,
                                                0 };
                }
        }
        qsort(entries, n, sizeof(Entry), entry_cmp);
        entries[n++] = (Entry){ 0 };
        size_t packed_len = n * sizeof(Entry);
        for (size_t i = 0; i + 1 < n; i++) {
                entries[i].offset += (uint32_t) packed_len;
                entries[i].tag_offset += (uint32_t) packed_len;
        }
        size_t total = packed_len + slen;
        uint8_t *blob = malloc(total);
        memcpy(blob, entries, packed_len);
        memcpy(blob + packed_len, strings, slen);
        uint8_t *out = gzip(blob, total, ret_len);
        free(blob);
        if (out && strcmp(mode, "gz-truncated") == 0)
                *ret_len /= 2;
        return out;
}

int main(int argc, char **argv) {
        if (argc != 2 && argc != 3) {
                fprintf(stderr, "usage: %s OUT [gz|gz-truncated|gz-bomb]\n", argv[0]);
                return 2;
        }
        SysprofCaptureWriter *w = sysprof_capture_writer_new(argv[1], 0);
        if (!w) {
                perror(argv[1]);
                return 1;
        }
        int64_t t = SYSPROF_CAPTURE_CURRENT_TIME;
        bool ok = sysprof_capture_writer_add_process(w, t, 0, FX_APP, "/usr/bin/app --fast") &&
                  sysprof_capture_writer_add_process(w, t, 0, FX_WORKER, "worker");
        for (size_t i = 0; i < sizeof(fx_maps) / sizeof(fx_maps[0]); i++)
                ok = ok && sysprof_capture_writer_add_map(w, t, 0, fx_maps[i].pid, fx_maps[i].start, fx_maps[i].end,
                                                          fx_maps[i].offset, 1000 + i, fx_maps[i].file);
        for (size_t i = 0; i < sizeof(fx_stacks) / sizeof(fx_stacks[0]); i++)
                for (unsigned k = 0; k < fx_stacks[i].count; k++)
                        ok = ok && sysprof_capture_writer_add_sample(w, t, 0, fx_stacks[i].pid, fx_stacks[i].pid,
                                                                     fx_stacks[i].addrs, fx_stacks[i].n);

        if (argc == 3) {
                size_t len = 0;
                uint8_t *gz = make_gz_table(argv[2], &len);
                if (!gz) {
                        fprintf(stderr, "cannot make the %s table\n", argv[2]);
                        return 1;
                }
                const size_t max_chunk = 4096 * 8 - sizeof(SysprofCaptureFileChunk);
                for (size_t at = 0; ok && at < len; at += max_chunk) {
                        size_t k = len - at < max_chunk ? len - at : max_chunk;
                        ok = sysprof_capture_writer_add_file(w, t, -1, -1, "__symbols__.gz", at + k == len, gz + at, k);
                }
                free(gz);
                ok = ok && sysprof_capture_writer_flush(w);
                sysprof_capture_writer_unref(w);
                return ok ? 0 : 1;
        }

        /* Entries: kernel names repeated per pid, as Sysprof's resolver
         * produces them (it resolves per sample pid). */
        const int32_t pids[] = { FX_APP, FX_WORKER };
        size_t n_sym = sizeof(fx_symbols) / sizeof(fx_symbols[0]);
        Entry entries[32];
        size_t n = 0;
        char strings[4096];
        size_t slen = 0;
        memset(strings, 0, sizeof(Entry)); /* the zero entry doubles as the start of the string area */
        slen = sizeof(Entry);
        for (size_t i = 0; i < n_sym; i++) {
                size_t name_at = slen;
                size_t l = strlen(fx_symbols[i].name) + 1;
                memcpy(strings + slen, fx_symbols[i].name, l);
                slen += l;
                for (size_t p = 0; p < 2; p++) {
                        if (fx_symbols[i].pid >= 0 && fx_symbols[i].pid != pids[p])
                                continue;
                        entries[n++] = (Entry) { fx_symbols[i].begin, fx_symbols[i].end - 1, (uint32_t) pids[p],
                                                 (uint32_t) name_at, 0, 0 };
                }
        }
        qsort(entries, n, sizeof(Entry), entry_cmp);
        size_t base = n * sizeof(Entry);
        for (size_t i = 0; i < n; i++)
                entries[i].offset += (uint32_t) base;
        size_t total = base + slen;
        uint8_t *blob = malloc(total);
        memcpy(blob, entries, base);
        memcpy(blob + base, strings, slen);
        ok = ok && sysprof_capture_writer_add_file(w, t, -1, -1, "__symbols__", true, blob, total);
        free(blob);
        ok = ok && sysprof_capture_writer_flush(w);
        sysprof_capture_writer_unref(w);
        if (!ok) {
                fprintf(stderr, "libsysprof-capture-4 failed to write %s\n", argv[1]);
                return 1;
        }
        return 0;
}
