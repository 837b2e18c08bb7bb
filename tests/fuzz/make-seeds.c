/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make-seeds.c: writes the binary seed corpora of tests/fuzz: for
 * fuzz-control-ring (corpus/control-ring/) the frames a collector puts in
 * its ring (MARK, LOG, CTRDEF, CTRSET, SAMPLE, ALLOCATION, then the
 * end-of-ring frame), made by the capture writer and cut out of its file,
 * in this machine's byte order, each preceded by the mode byte
 * fuzz-control-ring.c reads; for fuzz-trace-fd (corpus/trace-fd/) the same
 * frames as the whole capture file a program writes into its trace fd.
 * Run by hand when the frame layout changes:
 *   make-seeds CORPUS_DIR */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"

typedef int (*AddFrames)(CaptureWriter *w);

static int add_marks(CaptureWriter *w) {
        int r = capture_writer_add_mark(w, 1000, 0, 42, 500, "app", "frame", "drawn in 0.5 ms");
        if (r >= 0)
                r = capture_writer_add_log(w, 1100, 0, 42, 16, "Gtk", "a warning from the program");
        return r;
}

static int add_counters(CaptureWriter *w) {
        CaptureCounterDef defs[2] = {
                { .category = "app", .name = "queue", .description = "items waiting", .id = 1, .type = CAPTURE_COUNTER_INT64 },
                { .category = "app", .name = "fps", .description = "frames per second", .id = 2, .type = CAPTURE_COUNTER_DOUBLE },
        };
        defs[0].value.v64 = 0;
        defs[1].value.vdbl = 60.0;
        CaptureCounterSetValue values[2] = { { .id = 1 }, { .id = 2 } };
        values[0].value.v64 = 7;
        values[1].value.vdbl = 59.5;
        int r = capture_writer_add_counter_defs(w, 1000, 0, 42, defs, 2);
        if (r >= 0)
                r = capture_writer_add_counter_values(w, 1200, 0, 42, values, 2);
        return r;
}

static int add_stacks(CaptureWriter *w) {
        uint64_t addrs[] = { 0x401136, 0x401200, 0x7f0000001234 };
        int r = capture_writer_add_sample(w, 1000, 1, 42, 43, addrs, 3);
        if (r >= 0)
                r = capture_writer_add_allocation(w, 1300, 1, 42, 43, 0x5555000010, 64, addrs, 3);
        if (r >= 0)
                r = capture_writer_add_allocation(w, 1400, 1, 42, 43, 0x5555000010, 0, addrs, 2);
        return r;
}

/* The capture the writer makes of add's frames, file header included. */
static uint8_t *capture_bytes(AddFrames add, size_t *ret_len) {
        int fd = memfd_create("seed", MFD_CLOEXEC);
        CaptureWriter *w = NULL;
        if (fd < 0 || capture_writer_new_fd(fd, 0, &w) < 0 || add(w) < 0 || capture_writer_flush(w) < 0)
                return NULL;
        off_t end = lseek(fd, 0, SEEK_CUR);
        uint8_t *buf = calloc(1, (size_t) end + 1);
        if (!buf || pread(fd, buf, (size_t) end, 0) != (ssize_t) end)
                return NULL;
        capture_writer_free(w);
        close(fd);
        *ret_len = (size_t) end;
        return buf;
}

static int write_file(const char *dir, const char *name, const uint8_t *data, size_t len) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
                return -EIO;
        printf("%s: %zu bytes\n", path, len);
        return 0;
}

/* A control-ring seed (mode byte, frames, end-of-ring frame) and a
 * trace-fd seed (the whole file). */
static int write_seeds(const char *dir, const char *name, AddFrames add) {
        size_t len;
        uint8_t *file = capture_bytes(add, &len);
        if (!file || len < CAPTURE_FILE_HEADER_SIZE)
                return -EIO;
        size_t n = len - CAPTURE_FILE_HEADER_SIZE;
        uint8_t *ring = calloc(1, 1 + n + 24);
        if (!ring)
                return -ENOMEM;
        memcpy(ring + 1, file + CAPTURE_FILE_HEADER_SIZE, n);
        uint16_t end_len = 24; /* the end-of-ring frame: a bare header of type 0xFF */
        memcpy(ring + 1 + n, &end_len, 2);
        ring[1 + n + 16] = 0xff;
        char sub[4096];
        snprintf(sub, sizeof(sub), "%s/control-ring", dir);
        int r = write_file(sub, name, ring, 1 + n + 24);
        snprintf(sub, sizeof(sub), "%s/trace-fd", dir);
        if (r >= 0)
                r = write_file(sub, name, file, len);
        free(ring);
        free(file);
        return r;
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: make-seeds CORPUS_DIR\n");
                return 2;
        }
        if (write_seeds(argv[1], "marks-logs", add_marks) < 0 || write_seeds(argv[1], "counters", add_counters) < 0 ||
            write_seeds(argv[1], "stacks", add_stacks) < 0) {
                fprintf(stderr, "writing the seeds failed\n");
                return 1;
        }
        return 0;
}
