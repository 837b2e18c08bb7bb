/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-capture-reader.c: libFuzzer target for the capture reader: opens any
 * bytes as a capture, decodes every frame, touches every decoded field and
 * reassembles an embedded file, so ASan/UBSan see any over-read or bad
 * arithmetic; the symbol tables gathered in that one pass must be what
 * symbol_table_load() reads with passes of its own. Built by tests/capture/test-fuzz.sh with clang
 * -fsanitize=fuzzer,address,undefined; fuzz-corpus-main.c drives the same
 * function from a plain main() for the gcc sanitizer build. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Folds a value into the checksum, so the compiler cannot skip any read. */
#define MIX(acc, v) ((acc) = (acc) * 31u + (uint64_t) (v))

/* noinline: gcc -fsanitize otherwise misjudges the union members' sizes (-Wstringop-overread) */
__attribute__((noinline)) static uint64_t touch_string(const char *s) {
        return strlen(s);
}

static uint64_t touch_frame(const CaptureFrame *f) {
        uint64_t acc = 0;
        MIX(acc, f->offset);
        MIX(acc, f->len);
        MIX(acc, f->cpu);
        MIX(acc, f->pid);
        MIX(acc, f->time);
        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE:
                for (unsigned i = 0; i < f->sample.n_addrs; i++)
                        MIX(acc, f->sample.addrs[i]);
                break;
        case CAPTURE_FRAME_MAP:
                MIX(acc, f->map.start ^ f->map.end ^ f->map.offset ^ f->map.inode);
                MIX(acc, touch_string(f->map.filename));
                break;
        case CAPTURE_FRAME_PROCESS:
                MIX(acc, touch_string(f->process.cmdline));
                break;
        case CAPTURE_FRAME_FORK:
                MIX(acc, f->fork.child_pid);
                break;
        case CAPTURE_FRAME_JITMAP:
                for (uint32_t i = 0; i < f->jitmap.n_entries; i++) {
                        MIX(acc, f->jitmap.entries[i].address);
                        MIX(acc, touch_string(f->jitmap.entries[i].name));
                }
                break;
        case CAPTURE_FRAME_CTRDEF:
                for (unsigned i = 0; i < f->ctrdef.n_counters; i++) {
                        const CaptureCounterDef *c = &f->ctrdef.counters[i];
                        MIX(acc, touch_string(c->category) + touch_string(c->name) + touch_string(c->description));
                        MIX(acc, c->id);
                        MIX(acc, c->type);
                        MIX(acc, c->value.v64);
                }
                break;
        case CAPTURE_FRAME_CTRSET:
                for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                        MIX(acc, f->ctrset.values[i].id);
                        MIX(acc, f->ctrset.values[i].value.v64);
                }
                break;
        case CAPTURE_FRAME_MARK:
                MIX(acc, f->mark.duration);
                MIX(acc, touch_string(f->mark.group) + touch_string(f->mark.name) + touch_string(f->mark.message));
                break;
        case CAPTURE_FRAME_METADATA: {
                MIX(acc, touch_string(f->metadata.id) + touch_string(f->metadata.metadata));
                CaptureFileIdentity id;
                if (capture_frame_get_file_identity(f, &id) > 0) {
                        MIX(acc, id.dev_major ^ id.dev_minor ^ id.inode ^ id.size ^ (uint64_t) id.mtime_sec);
                        for (unsigned i = 0; i < id.build_id_size; i++)
                                MIX(acc, id.build_id[i]);
                        MIX(acc, touch_string(id.path));
                }
                break;
        }
        case CAPTURE_FRAME_LOG:
                MIX(acc, f->log.severity);
                MIX(acc, touch_string(f->log.domain) + touch_string(f->log.message));
                break;
        case CAPTURE_FRAME_FILE_CHUNK:
                MIX(acc, f->file_chunk.is_last);
                MIX(acc, touch_string(f->file_chunk.path));
                for (unsigned i = 0; i < f->file_chunk.len; i++)
                        MIX(acc, f->file_chunk.data[i]);
                break;
        case CAPTURE_FRAME_ALLOCATION:
                MIX(acc, f->allocation.alloc_addr ^ (uint64_t) f->allocation.alloc_size);
                MIX(acc, f->allocation.tid);
                for (unsigned i = 0; i < f->allocation.n_addrs; i++)
                        MIX(acc, f->allocation.addrs[i]);
                break;
        case CAPTURE_FRAME_OVERLAY:
                MIX(acc, f->overlay.layer);
                MIX(acc, touch_string(f->overlay.src) + touch_string(f->overlay.dst));
                break;
        default:
                break;
        }
        return acc;
}

/* One pass's symbol tables against symbol_table_load()'s: the same answer,
 * message and ranges. */
static void compare_symbols(CaptureReader *r, SymbolChunks *chunks) {
        SymbolTable *a = NULL, *b = NULL;
        char *ea = NULL, *eb = NULL;
        int ka = symbol_table_load(r, &a, &ea);
        int kb = symbol_chunks_load(chunks, &b, &eb);
        if (ka != kb || !a != !b || !ea != !eb || (ea && strcmp(ea, eb) != 0))
                abort();
        if (a && symbol_table_get_n_ranges(a) != symbol_table_get_n_ranges(b))
                abort();
        for (size_t i = 0; a && i < symbol_table_get_n_ranges(a); i++) {
                const SymbolRange *x = symbol_table_get_range(a, i), *y = symbol_table_get_range(b, i);
                if (x->pid != y->pid || x->begin != y->begin || x->end != y->end || x->n_frames != y->n_frames)
                        abort();
        }
        symbol_table_free(a);
        symbol_table_free(b);
        free(ea);
        free(eb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        CaptureReader *r = NULL;
        char *error = NULL;
        if (capture_reader_open_memory(data, size, &r, &error) < 0) {
                if (!error)
                        abort(); /* every failure must come with a message */
                free(error);
                return 0;
        }
        SymbolChunks *chunks = symbol_chunks_new(capture_reader_get_header(r)->little_endian);
        if (!chunks)
                abort();
        volatile uint64_t sink = 0;
        char path[CAPTURE_FILE_PATH_LEN + 1] = "";
        CaptureFrame f;
        int k;
        while ((k = capture_reader_next(r, &f)) > 0) {
                sink += touch_frame(&f);
                if (symbol_chunks_add(chunks, &f) < 0)
                        abort();
                if (f.type == CAPTURE_FRAME_FILE_CHUNK && !path[0])
                        memcpy(path, f.file_chunk.path, sizeof(path));
        }
        if (k < 0 && k != -ENOMEM && !capture_reader_error(r))
                abort();
        sink += capture_reader_get_skipped(r);
        if (k < 0 && symbol_chunks_set_read_error(chunks, k, capture_reader_error(r)) < 0)
                abort();
        compare_symbols(r, chunks);
        symbol_chunks_free(chunks);

        if (path[0]) {
                uint8_t *file;
                size_t len;
                if (capture_reader_read_file(r, path, 1u << 24, &file, &len) == 0) {
                        for (size_t i = 0; i <= len; i++) /* includes the added NUL */
                                sink += file[i];
                        free(file);
                }
        }
        /* a second pass after rewind decodes the same frames */
        capture_reader_rewind(r);
        while (capture_reader_next(r, &f) > 0)
                sink += touch_frame(&f);
        (void) sink;
        capture_reader_free(r);
        return 0;
}
