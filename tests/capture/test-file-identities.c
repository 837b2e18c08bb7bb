/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-file-identities.c: the `periscope.file` METADATA frames
 * (capture/file-identities.h): written and read back (with and without
 * size/mtime and build-id, a path with spaces and newlines), other METADATA
 * not taken for them, and every malformed text of a hostile capture refused
 * with -EBADMSG. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test-check.h"

#include "basic.h"
#include "capture-test-util.h"
#include "capture.h"

#define T0 1000000000ll

static CaptureFileIdentity got;

static int parse(const char *id, const char *text) {
        CaptureFrame f = test_metadata_frame(id, text);
        return capture_frame_get_file_identity(&f, &got);
}

TEST(round_trip) {
        _cleanup_close_ int fd = memfd_create("file-identities", MFD_CLOEXEC);
        MUST(fd);
        CaptureWriter *w;
        MUST(capture_writer_new_fd(fd, T0, &w));
        CaptureFileIdentity full = {
                .dev_major = 254,
                .dev_minor = 1,
                .inode = 1234567,
                .has_stat = true,
                .size = 18920,
                .mtime_sec = 1796163402,
                .mtime_nsec = 5409541,
                .build_id_size = 20,
                .path = "/usr/lib/x86_64-linux-gnu/lib with space\nand newline.so",
        };
        for (int i = 0; i < 20; i++)
                full.build_id[i] = (uint8_t) (0xa0 + i);
        CaptureFileIdentity bare = { .dev_major = 0, .dev_minor = 39, .inode = 7, .path = "/bin/true" };
        MUST(capture_writer_add_file_identity(w, T0 + 1, 1, 42, &full));
        MUST(capture_writer_add_file_identity(w, T0 + 2, -1, 43, &bare));
        CHECK(capture_writer_add_file_identity(w, T0, -1, 1, &(CaptureFileIdentity){ .path = "" }) == -EINVAL);
        CHECK(capture_writer_add_file_identity(w, T0, -1, 1,
                                               &(CaptureFileIdentity){ .path = "/x", .build_id_size = 21 }) == -EINVAL);
        MUST(capture_writer_add_thread_name(w, T0, 0, 42, 43, "worker", false));
        MUST(capture_writer_flush(w));
        capture_writer_free(w);

        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        MUST(capture_reader_open_fd(fd, &r, &err));
        CaptureFrame f;
        int n = 0, others = 0;
        while (capture_reader_next(r, &f) > 0) {
                int k = capture_frame_get_file_identity(&f, &got);
                CHECK(k >= 0);
                if (k == 0) {
                        others++;
                        continue;
                }
                const CaptureFileIdentity *want = n++ == 0 ? &full : &bare;
                CHECK(f.pid == (n == 1 ? 42 : 43));
                CHECK(got.dev_major == want->dev_major && got.dev_minor == want->dev_minor);
                CHECK(got.inode == want->inode && got.has_stat == want->has_stat && got.size == want->size);
                CHECK(got.mtime_sec == want->mtime_sec && got.mtime_nsec == want->mtime_nsec);
                CHECK(got.build_id_size == want->build_id_size &&
                      memcmp(got.build_id, want->build_id, want->build_id_size) == 0);
                CHECK(strcmp(got.path, want->path) == 0);
        }
        CHECK(n == 2 && others == 1);
        capture_reader_free(r);
}

TEST(malformed) {
        CHECK(parse("periscope.thread", "tid=1\nname=x") == 0);
        CHECK(parse(CAPTURE_FILE_IDENTITY_ID, "dev=8:1\ninode=5\npath=/a") == 1 && got.inode == 5 && !got.has_stat);
        CHECK(parse(CAPTURE_FILE_IDENTITY_ID, "dev=8:1\ninode=5\nbuild_id=00ff\npath=/a") == 1 &&
              got.build_id_size == 2 && got.build_id[1] == 0xff);
        static const char *const bad[] = {
                "",
                "path=/a",
                "dev=8\ninode=5\npath=/a",
                "dev=8:1:2\ninode=5\npath=/a",
                "dev=-8:1\ninode=5\npath=/a",
                "dev=4294967296:1\ninode=5\npath=/a",
                "dev=8:1\ninode=\npath=/a",
                "dev=8:1\ninode=99999999999999999999999\npath=/a",
                "dev=8:1\ninode=5x\npath=/a",
                "dev=8:1\ninode=5\n",
                "dev=8:1\ninode=5\npath=",
                "dev=8:1\ninode=5\nsize=1\npath=/a",
                "dev=8:1\ninode=5\nsize=1\nmtime=1\npath=/a",
                "dev=8:1\ninode=5\nsize=1\nmtime=1.5\npath=/a",
                "dev=8:1\ninode=5\nsize=1\nmtime=1.0000000001\npath=/a",
                "dev=8:1\ninode=5\nsize=1\nmtime=-1.000000000\npath=/a",
                "dev=8:1\ninode=5\nbuild_id=\npath=/a",
                "dev=8:1\ninode=5\nbuild_id=abc\npath=/a",
                "dev=8:1\ninode=5\nbuild_id=ABCD\npath=/a",
                "dev=8:1\ninode=5\nbuild_id=000102030405060708090a0b0c0d0e0f1011121314\npath=/a",
                "dev=8:1\ninode=5\nbuild_id=00ff\nsize=1\nmtime=1.000000000\npath=/a",
                "inode=5\ndev=8:1\npath=/a",
        };
        CHECK(test_count_accepted(parse, CAPTURE_FILE_IDENTITY_ID, bad, ELEMENTSOF(bad)) == 0);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
