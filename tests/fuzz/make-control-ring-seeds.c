/* make-control-ring-seeds.c: writes the seed corpus of fuzz-control-ring
 * (tests/fuzz/corpus/control-ring/): the frames a collector puts in its
 * ring (MARK, LOG, CTRDEF, CTRSET, SAMPLE, ALLOCATION, then the end-of-ring
 * frame), made by the capture writer and cut out of its file, in this
 * machine's byte order, each preceded by the mode byte fuzz-control-ring.c
 * reads. Run by hand when the frame layout changes:
 *   make-control-ring-seeds DIR */
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

/* Frames as the writer lays them out, without the file header. */
static int write_seed(const char *dir, const char *name, AddFrames add) {
        int fd = memfd_create("seed", MFD_CLOEXEC);
        CaptureWriter *w = NULL;
        if (fd < 0 || capture_writer_new_fd(fd, 0, &w) < 0 || add(w) < 0 || capture_writer_flush(w) < 0)
                return -EIO;
        off_t end = lseek(fd, 0, SEEK_CUR);
        size_t n = (size_t) end - CAPTURE_FILE_HEADER_SIZE;
        uint8_t *buf = calloc(1, 1 + n + 24);
        if (!buf || pread(fd, buf + 1, n, CAPTURE_FILE_HEADER_SIZE) != (ssize_t) n)
                return -EIO;
        /* the end-of-ring frame: a bare header of type 0xFF */
        uint16_t len = 24;
        memcpy(buf + 1 + n, &len, 2);
        buf[1 + n + 16] = 0xff;
        capture_writer_free(w);
        close(fd);
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        if (!f || fwrite(buf, 1, 1 + n + 24, f) != 1 + n + 24 || fclose(f) != 0)
                return -EIO;
        free(buf);
        printf("%s: %zu bytes\n", path, 1 + n + 24);
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: make-control-ring-seeds DIR\n");
                return 2;
        }
        if (write_seed(argv[1], "marks-logs", add_marks) < 0 || write_seed(argv[1], "counters", add_counters) < 0 ||
            write_seed(argv[1], "stacks", add_stacks) < 0) {
                fprintf(stderr, "writing the seeds failed\n");
                return 1;
        }
        return 0;
}
