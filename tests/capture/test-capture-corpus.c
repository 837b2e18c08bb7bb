/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-capture-corpus: every hand-broken capture of capture-corpus.c gives
 * exactly its expected error (with the offset), from memory and from a file,
 * with no crash and no over-read (each case sits in a heap block of exactly
 * its size, so ASan sees any read past it).
 *   test-capture-corpus [TEST…]            check every case
 *   test-capture-corpus --write D [TEST…]  also write the cases (and valid
 *                                          seeds) to D, the seed corpus of the fuzzer */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-check.h"

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

/* The case from memory: an exact-size heap copy (any over-read is an ASan
 * error) gives the expected open error, or frames and then the expected
 * error, again when asked again, and the same from read_file. */
static void check_from_memory(const CorpusCase *c) {
        uint8_t *copy = malloc(c->len ? c->len : 1);
        MUST(copy ? 0 : -ENOMEM);
        if (c->len)
                memcpy(copy, c->data, c->len);

        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        int k = capture_reader_open_memory(copy, c->len, &r, &err);
        if (k < 0) {
                CHECK(k == -EBADMSG || k == -EPROTONOSUPPORT);
                _cleanup_free_ char *want = NULL;
                MUST(asprintf(&want, "buffer: %s", c->expected));
                CHECK_MSG(err && strcmp(err, want) == 0, "%s: open error \"%s\", expected \"%s\"", c->name,
                          err ?: "(none)", want);
        } else {
                unsigned frames;
                k = drain(r, &frames);
                CHECK_MSG(k < 0 && strcmp(capture_reader_error(r) ?: "", c->expected) == 0,
                          "%s: next() = %d \"%s\", expected \"%s\"", c->name, k, capture_reader_error(r) ?: "(none)",
                          c->expected);
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
}

/* The case from a file in dir: open errors name the path. */
static void check_from_file(const CorpusCase *c, const char *dir) {
        _cleanup_free_ char *path = NULL;
        MUST(asprintf(&path, "%s/%s.syscap", dir, c->name));
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        MUST(fd < 0 ? -errno : 0);
        CHECK(write(fd, c->data, c->len) == (ssize_t) c->len);
        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        int k = capture_reader_open_path(path, &r, &err);
        if (k < 0) {
                _cleanup_free_ char *want = NULL;
                MUST(asprintf(&want, "%s: %s", path, c->expected));
                CHECK_STR(err, want);
        } else {
                unsigned frames;
                CHECK(drain(r, &frames) < 0);
                CHECK_STR(capture_reader_error(r), c->expected);
                capture_reader_free(r);
        }
}

/* Where the cases go as files: --write's DIR (kept), or a directory of the
 * run's own (emptied and removed at the end). */
static const char *outdir;
static char tmp_dir[] = "/tmp/capture-corpus-XXXXXX";
static bool tmp_made;

static const char *case_dir(void) {
        if (outdir)
                return outdir;
        if (!tmp_made) {
                MUST(mkdtemp(tmp_dir) ? 0 : -errno);
                tmp_made = true;
        }
        return tmp_dir;
}

static void for_each_case(void (*check)(const CorpusCase *c, const char *dir)) {
        size_t n = corpus_n_cases();
        for (size_t i = 0; i < n; i++) {
                CorpusCase c;
                CHECK(corpus_get_case(i, &c));
                check(&c, case_dir());
                corpus_case_clear(&c);
        }
        printf("  %zu broken captures\n", n);
}

static void memory_case(const CorpusCase *c, const char *dir) {
        check_from_memory(c);
}

TEST(corpus_has_every_defect) {
        CHECK(corpus_n_cases() >= 25);
}

TEST(each_refused_from_memory_with_its_message) {
        for_each_case(memory_case);
}

TEST(each_refused_from_a_file_naming_the_path) {
        for_each_case(check_from_file);
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
        int shift = 0;
        if (argc >= 3 && strcmp(argv[1], "--write") == 0) {
                outdir = argv[2];
                shift = 2;
                if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
                        fprintf(stderr, "FAIL: mkdir %s: %m\n", outdir);
                        return 1;
                }
        } else if (argc > 1 && argv[1][0] == '-') {
                fprintf(stderr, "usage: test-capture-corpus [--write DIR] [TEST…]\n");
                return 2;
        }
        argv[shift] = argv[0];
        int r = test_main(argc - shift, argv + shift);
        if (outdir) {
                write_seed(outdir, "valid-all-types.syscap", false);
                write_seed(outdir, "valid-all-types-big-endian.syscap", true);
        } else if (tmp_made) {
                size_t n = corpus_n_cases();
                for (size_t i = 0; i < n; i++) {
                        CorpusCase c;
                        _cleanup_free_ char *path = NULL;
                        if (!corpus_get_case(i, &c))
                                break;
                        if (asprintf(&path, "%s/%s.syscap", tmp_dir, c.name) >= 0)
                                unlink(path);
                        corpus_case_clear(&c);
                }
                if (rmdir(tmp_dir) < 0) {
                        fprintf(stderr, "FAIL: rmdir %s: %m\n", tmp_dir);
                        return 1;
                }
        }
        return r;
}
