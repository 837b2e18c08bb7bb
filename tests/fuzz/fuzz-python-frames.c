/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-python-frames.c: libFuzzer target for service/interp's CPython
 * reader: the input is a process image (tests/interp/python-image.h) read
 * as the target's memory. 16 bytes first: byte 0 picks the version (3.11
 * + byte 0 % 4: the tables of 3.11 and 3.12, the _Py_DebugOffsets of 3.13
 * and 3.14 at the image's _PyRuntime), bytes 8-15 the offset in the image
 * of one more frame to walk. _PyRuntime is 16 bytes into the image, where
 * python-image.h's first object goes. Every thread's chain is walked
 * twice (the second through the code cache). */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "python-image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(PyReader *r, uint64_t frame) {
        PyFrame frames[PY_FRAMES_MAX];
        char *why = NULL;
        size_t n;
        volatile size_t sink = 0;

        int k = py_reader_walk(r, frame, frames, PY_FRAMES_MAX, &n, &why);
        if (k < 0 && !why)
                abort(); /* every failure of a walk has a reason */
        for (size_t i = 0; i < n; i++)
                sink += strlen(frames[i].name) + strlen(frames[i].filename) + (size_t) frames[i].line;
        (void) sink;
        free(why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 16)
                return 0;
        unsigned minor = 11 + data[0] % 4;
        uint64_t frame_offset;
        memcpy(&frame_offset, data + 8, 8);
        Image im = { .base = IMAGE_BASE, .data = (uint8_t *) data + 16, .size = size - 16 };
        uint64_t runtime = IMAGE_BASE + 16;
        PyLayout l;
        char *why = NULL;
        int k;

        if (minor >= 13)
                k = py_layout_from_debug_offsets(image_read, &im, runtime, &l, &why);
        else
                k = py_layout_from_table(3, minor, EM_X86_64, &l, &why);
        if (k < 0) {
                free(why);
                return 0;
        }
        PyReader *r = NULL;
        if (py_reader_new(&l, image_read, &im, &r) < 0)
                abort(); /* a layout the loader gave is one the reader takes */

        PyThread threads[64];
        k = py_reader_threads(r, runtime, threads, 64, &why);
        for (int i = 0; i < k; i++) {
                walk(r, threads[i].frame);
                walk(r, threads[i].frame);
        }
        walk(r, IMAGE_BASE + frame_offset);
        free(why);
        py_reader_free(r);
        return 0;
}
