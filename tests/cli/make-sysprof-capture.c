/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make-sysprof-capture.c: writes the report fixture (report-fixture.h) the
 * way Sysprof does: with libsysprof-capture-4's writer and a "__symbols__"
 * table encoded here, independently of Periscope's code, from the layout
 * of sysprof 3.46 src/libsysprof/sysprof-symbol-map.c (packed entries of
 * u64 begin, u64 end inclusive, u32 pid, u32 name offset, u32 tag offset,
 * u32 padding, sorted by pid then address; a zero entry; then strings, with
 * offsets counted from the start of the blob).
 *
 *   make-sysprof-capture OUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sysprof-capture.h>

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

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s OUT\n", argv[0]);
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
