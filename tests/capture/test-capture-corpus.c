/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-capture-corpus: every hand-broken capture of capture-corpus.c gives
 * exactly its expected error (with the offset), from memory and from a file,
 * with no crash and no over-read (each case sits in a heap block of exactly
 * its size, so ASan sees any read past it).
 *   test-capture-corpus            check every case
 *   test-capture-corpus --write D  also write the cases (and valid seeds) to D,
 *                                  the seed corpus of the fuzzer */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "capture-corpus.h"
#include "capture-test-util.h"

/* Reads every frame; returns the first error (0 if none) and counts frames. */
static int drain(CaptureReader *r, unsigned *ret_frames) {
        CaptureFrame f;
        int k;
        unsigned n = 0;
        while ((k = capture_reader_next(r, &f)) > 0)
                n++;
        *ret_frames = n;
        return k;
}

static void check_case(const CorpusCase *c, const char *tmpdir) {
        /* exact-size heap copy: any over-read is an ASan error */
        uint8_t *copy = malloc(c->len ? c->len : 1);
        CHECK(copy);
        if (c->len)
                memcpy(copy, c->data, c->len);

        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        int k = capture_reader_open_memory(copy, c->len, &r, &err);
        if (k < 0) {
                CHECK(k == -EBADMSG || k == -EPROTONOSUPPORT);
                _cleanup_free_ char *want = NULL;
                CHECK(asprintf(&want, "buffer: %s", c->expected) >= 0);
                if (!err || strcmp(err, want) != 0) {
                        fprintf(stderr, "%s: open error \"%s\", expected \"%s\"\n", c->name, err ?: "(none)", want);
                        exit(1);
                }
        } else {
                unsigned frames;
                k = drain(r, &frames);
                if (k >= 0 || strcmp(capture_reader_error(r) ?: "", c->expected) != 0) {
                        fprintf(stderr, "%s: next() = %d \"%s\", expected \"%s\"\n", c->name, k,
                                capture_reader_error(r) ?: "(none)", c->expected);
                        exit(1);
                }
                CHECK(k == -EBADMSG);
                /* the reader stays on the bad frame: asking again gives the same error */
                CaptureFrame f;
                CHECK(capture_reader_next(r, &f) == k);
                CHECK_STR(capture_reader_error(r), c->expected);
                /* read_file walks the same frames: it must fail the same way, not crash */
                uint8_t *data;
                size_t len;
                CHECK(capture_reader_read_file(r, "/etc/hostname", UINT64_MAX, &data, &len) == -EBADMSG);
                if (strcmp(c->name, "error-after-valid-frames") == 0)
                        CHECK(frames == 14);
                capture_reader_free(r);
        }
        free(copy);

        /* from a file, open errors name the path */
        _cleanup_free_ char *path = NULL;
        CHECK(asprintf(&path, "%s/%s.syscap", tmpdir, c->name) >= 0);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        CHECK(write(fd, c->data, c->len) == (ssize_t) c->len);
        free(err);
        err = NULL;
        r = NULL;
        k = capture_reader_open_path(path, &r, &err);
        if (k < 0) {
                _cleanup_free_ char *want = NULL;
                CHECK(asprintf(&want, "%s: %s", path, c->expected) >= 0);
                CHECK_STR(err, want);
        } else {
                unsigned frames;
                CHECK(drain(r, &frames) < 0);
                CHECK_STR(capture_reader_error(r), c->expected);
                capture_reader_free(r);
        }
        printf("ok %s: %s\n", c->name, c->expected);
}

static void write_seed(const char *dir, const char *name, bool big_endian) {
        size_t len;
        _cleanup_free_ uint8_t *buf = test_capture_bytes(test_write_all_types, big_endian, &len);
        _cleanup_free_ char *path = NULL;
        CHECK(asprintf(&path, "%s/%s", dir, name) >= 0);
        _cleanup_close_ int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(out >= 0);
        CHECK(write(out, buf, len) == (ssize_t) len);
}

int main(int argc, char **argv) {
        const char *outdir = NULL;
        if (argc == 3 && strcmp(argv[1], "--write") == 0)
                outdir = argv[2];
        else if (argc != 1) {
                fprintf(stderr, "usage: test-capture-corpus [--write DIR]\n");
                return 2;
        }

        char tmpl[] = "/tmp/capture-corpus-XXXXXX";
        const char *dir = outdir;
        if (!dir) {
                dir = mkdtemp(tmpl);
                CHECK(dir);
        } else
                CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST);

        size_t n = corpus_n_cases();
        CHECK(n >= 25);
        for (size_t i = 0; i < n; i++) {
                CorpusCase c;
                CHECK(corpus_get_case(i, &c));
                check_case(&c, dir);
                if (!outdir) {
                        _cleanup_free_ char *path = NULL;
                        CHECK(asprintf(&path, "%s/%s.syscap", dir, c.name) >= 0);
                        unlink(path);
                }
                corpus_case_clear(&c);
        }
        if (outdir) {
                write_seed(dir, "valid-all-types.syscap", false);
                write_seed(dir, "valid-all-types-big-endian.syscap", true);
        } else
                rmdir(dir);
        printf("%zu broken captures rejected with the expected message\n", n);
        return 0;
}
