/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-corpus-main: runs the fuzz target (fuzz-capture-reader.c) from a
 * plain main(), for the gcc ASan+UBSan build:
 *   fuzz-corpus-main            every hand-broken capture of the corpus, the
 *                               reference capture (both endiannesses), and
 *                               every truncation and many one-byte changes of it
 *   fuzz-corpus-main FILE|DIR…  the given inputs (e.g. a crash libFuzzer found) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-check.h"

#include "basic.h"
#include "capture-corpus.h"
#include "capture-test-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs one input from an exact-size heap copy, so over-reads are caught. */
static void run(const uint8_t *data, size_t size) {
        uint8_t *copy = malloc(size ? size : 1);
        MUST(copy ? 0 : -ENOMEM);
        if (size)
                memcpy(copy, data, size);
        LLVMFuzzerTestOneInput(copy, size);
        free(copy);
}

static void run_path(const char *path) {
        struct stat st;
        CHECK(stat(path, &st) == 0);
        if (S_ISDIR(st.st_mode)) {
                DIR *d = opendir(path);
                CHECK(d);
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        _cleanup_free_ char *p = NULL;
                        CHECK(asprintf(&p, "%s/%s", path, de->d_name) >= 0);
                        run_path(p);
                }
                closedir(d);
                return;
        }
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        size_t len;
        _cleanup_free_ uint8_t *buf = test_read_all(fd, &len);
        run(buf, len);
        printf("ran %s (%zu bytes)\n", path, len);
}

static uint8_t *reference(bool big_endian, size_t *ret_len) {
        return test_capture_bytes(test_write_all_types, big_endian, ret_len);
}

TEST(corpus_cases) {
        size_t n = corpus_n_cases();
        for (size_t i = 0; i < n; i++) {
                CorpusCase c;
                CHECK(corpus_get_case(i, &c));
                run(c.data, c.len);
                corpus_case_clear(&c);
        }
        printf("  ran %zu corpus cases\n", n);
}

/* Every truncation of buf. */
static unsigned truncations(uint8_t *buf, size_t len) {
        for (size_t cut = 0; cut <= len; cut++)
                run(buf, cut);
        return (unsigned) len + 1;
}

/* Each byte of buf set to 0x00, 0x01, 0x7f, 0x80, 0xff in turn. */
static unsigned one_byte_changes(uint8_t *buf, size_t len) {
        static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
        for (size_t pos = 0; pos < len; pos++) {
                uint8_t saved = buf[pos];
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        buf[pos] = values[v];
                        run(buf, len);
                }
                buf[pos] = saved;
        }
        return (unsigned) (len * ELEMENTSOF(values));
}

/* Runs the variants of the reference capture, in both byte orders; says how many. */
static void run_variants(const char *what, unsigned (*variants)(uint8_t *buf, size_t len)) {
        unsigned runs = 0;
        for (int be = 0; be < 2; be++) {
                size_t len;
                _cleanup_free_ uint8_t *buf = reference(be, &len);
                runs += variants(buf, len);
        }
        printf("  ran %u %s of the reference capture\n", runs, what);
}

TEST(truncations_of_reference) {
        run_variants("truncations", truncations);
}

TEST(one_byte_changes_of_reference) {
        run_variants("one-byte changes", one_byte_changes);
}

int main(int argc, char **argv) {
        if (argc > 1) {
                for (int i = 1; i < argc; i++)
                        run_path(argv[i]);
                return 0;
        }
        return test_main(argc, argv);
}
