/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-capture-stats.c: the `key=value` blocks (capture/capture-stats.h):
 * every key of `periscope.stats` written through a capture and read back
 * by key, in the order written; the writer's bounds (bad keys, a value's
 * newline, a block past CAPTURE_STATS_MAX) sticking; and hostile blocks
 * (no '=', bad keys, repeated keys, too many lines, too long, numbers that
 * are not) read without being taken for values. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "test-check.h"

#define T0 1000000000ll

DEFINE_TRIVIAL_CLEANUP_FUNC(CaptureStats *, capture_stats_free);

static CaptureStats *parse(const char *text) {
        CaptureStats *s = NULL;
        MUST(capture_stats_parse(text, &s));
        return s;
}

TEST(key_table) {
        for (int i = 0; i < _CAPTURE_STAT_MAX; i++) {
                const char *k = capture_stat_to_string(i);
                CHECK_MSG(k && *k, "key %d has no name", i);
                CHECK_MSG(capture_stat_from_string(k) == i, "key %s does not map back to %d", k, i);
        }
        CHECK(capture_stat_to_string(_CAPTURE_STAT_MAX) == NULL);
        CHECK(capture_stat_to_string(-1) == NULL);
        CHECK(capture_stat_from_string("unwind_stop_end") == _CAPTURE_STAT_INVALID);
        CHECK(capture_stat_from_string(NULL) == _CAPTURE_STAT_INVALID);
        CHECK(strcmp(capture_stat_to_string(CAPTURE_STAT_LOST_SAMPLES), "lost_samples") == 0);
}

/* Every key, through a real capture: the text is the lines in order, and
 * each reads back with its value. */
TEST(round_trip) {
        _cleanup_(capture_stats_buffer_clear) CaptureStatsBuffer b = {};
        for (int i = 0; i < _CAPTURE_STAT_MAX; i++)
                MUST(capture_stats_add_u64(&b, i, (uint64_t) i * 1000 + 7));
        MUST(capture_stats_add_unwind_stop(&b, "no_info", 3));
        MUST(capture_stats_add_i64(&b, CAPTURE_STAT_DURATION_NS, -5)); /* a repeat: read as skipped */
        size_t len;
        const char *text = capture_stats_buffer_get(&b, &len);
        CHECK(len > 0 && text[len - 1] == '\n');
        CHECK(strncmp(text, "samples=7\nlost_samples=1007\nbad_records=2007\n", 44) == 0);

        _cleanup_close_ int fd = memfd_create("capture-stats", MFD_CLOEXEC);
        MUST(fd);
        CaptureWriter *w;
        MUST(capture_writer_new_fd(fd, T0, &w));
        MUST(capture_writer_add_thread_name(w, T0, 0, 42, 43, "worker", false));
        MUST(capture_writer_add_stats(w, T0 + 1, CAPTURE_STATS_ID, &b));
        MUST(capture_writer_flush(w));
        capture_writer_free(w);

        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        MUST(capture_reader_open_fd(fd, &r, &err));
        CaptureFrame f;
        int blocks = 0, others = 0;
        while (capture_reader_next(r, &f) > 0) {
                _cleanup_(capture_stats_freep) CaptureStats *s = NULL;
                int k = capture_frame_get_stats(&f, CAPTURE_STATS_ID, &s);
                CHECK(k >= 0);
                if (k == 0) {
                        others++;
                        CHECK(capture_frame_get_stats(&f, CAPTURE_CONTROL_ID, &s) == 0);
                        continue;
                }
                blocks++;
                CHECK(capture_stats_get_n_entries(s) == _CAPTURE_STAT_MAX + 1);
                CHECK(capture_stats_get_n_malformed(s) == 1);
                for (int i = 0; i < _CAPTURE_STAT_MAX; i++) {
                        uint64_t v = 0;
                        CHECK_MSG(capture_stats_get_u64(s, i, &v) == 0 && v == (uint64_t) i * 1000 + 7,
                                  "%s read back as %" PRIu64, capture_stat_to_string(i), v);
                        CHECK(strcmp(capture_stats_get_entry(s, i)->key, capture_stat_to_string(i)) == 0);
                }
                CHECK(strcmp(capture_stats_get_entry(s, _CAPTURE_STAT_MAX)->key, "unwind_stop_no_info") == 0);
                CHECK(strcmp(capture_stats_lookup(s, "unwind_stop_no_info"), "3") == 0);
                CHECK(capture_stats_get_entry(s, _CAPTURE_STAT_MAX + 1) == NULL);
        }
        CHECK(blocks == 1 && others == 1);
        capture_reader_free(r);
}

TEST(values) {
        _cleanup_(capture_stats_buffer_clear) CaptureStatsBuffer b = {};
        MUST(capture_stats_add_bool(&b, CAPTURE_STAT_KERNEL, true));
        MUST(capture_stats_add_bool(&b, CAPTURE_STAT_CONTAINER_STOPPED, false));
        MUST(capture_stats_add_string(&b, CAPTURE_STAT_REASON, "stopped"));
        MUST(capture_stats_add_string(&b, CAPTURE_STAT_NAMES_MISSING, "the service stopped\nsamples=999"));
        MUST(capture_stats_add_i64(&b, CAPTURE_STAT_DURATION_NS, -12));
        MUST(capture_stats_add_u64(&b, CAPTURE_STAT_SAMPLES, UINT64_MAX));
        MUST(capture_stats_add_string_key(&b, "owner-uid", "1000"));
        MUST(capture_stats_add_string(&b, CAPTURE_STAT_CUT_SHORT, ""));
        size_t len;
        const char *text = capture_stats_buffer_get(&b, &len);
        const char *want = "kernel=true\ncontainer_stopped=false\nreason=stopped\nnames_missing=the service stopped\n"
                           "duration_ns=-12\nsamples=18446744073709551615\nowner-uid=1000\ncut_short=\n";
        CHECK(len == strlen(want) && memcmp(text, want, len) == 0);

        _cleanup_free_ char *copy = strndup(text, len);
        _cleanup_(capture_stats_freep) CaptureStats *s = parse(copy);
        CHECK(capture_stats_get_bool(s, CAPTURE_STAT_KERNEL) == 1);
        CHECK(capture_stats_get_bool(s, CAPTURE_STAT_CONTAINER_STOPPED) == 0);
        CHECK(capture_stats_get_bool(s, CAPTURE_STAT_REASON) == -EBADMSG);
        CHECK(capture_stats_get_bool(s, CAPTURE_STAT_OFF_CPU) == -ENOENT);
        uint64_t v;
        CHECK(capture_stats_get_u64(s, CAPTURE_STAT_SAMPLES, &v) == 0 && v == UINT64_MAX);
        CHECK(capture_stats_get_u64(s, CAPTURE_STAT_DURATION_NS, &v) == -EBADMSG);
        CHECK(capture_stats_get_u64(s, CAPTURE_STAT_LOST_SAMPLES, &v) == -ENOENT);
        CHECK(strcmp(capture_stats_get(s, CAPTURE_STAT_NAMES_MISSING), "the service stopped") == 0);
        CHECK(strcmp(capture_stats_get(s, CAPTURE_STAT_CUT_SHORT), "") == 0);
        CHECK(strcmp(capture_stats_lookup(s, "owner-uid"), "1000") == 0);
        CHECK(capture_stats_get_n_malformed(s) == 0);
        CHECK(capture_stats_get(NULL, CAPTURE_STAT_SAMPLES) == NULL);
}

/* A bad key or a block past the bound fails, and the failure sticks to the
 * hand-over: no half block is written. */
TEST(writer_bounds) {
        _cleanup_(capture_stats_buffer_clear) CaptureStatsBuffer b = {};
        MUST(capture_stats_add_u64(&b, CAPTURE_STAT_SAMPLES, 1));
        CHECK(capture_stats_add_unwind_stop(&b, "No Info", 1) == -EINVAL);
        CHECK(capture_stats_add_u64(&b, CAPTURE_STAT_LOST_SAMPLES, 1) == -EINVAL);
        size_t len;
        (void) capture_stats_buffer_get(&b, &len);
        CHECK(len == strlen("samples=1\n"));
        CHECK(capture_writer_add_stats(NULL, T0, CAPTURE_STATS_ID, &b) == -EINVAL);

        const char *bad_keys[] = { "",
                                   "a=b",
                                   "a\nb",
                                   "Samples",
                                   "key with space",
                                   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
        for (size_t i = 0; i < sizeof(bad_keys) / sizeof(*bad_keys); i++) {
                _cleanup_(capture_stats_buffer_clear) CaptureStatsBuffer k = {};
                CHECK_MSG(capture_stats_add_u64_key(&k, bad_keys[i], 1) == -EINVAL, "key \"%s\" taken", bad_keys[i]);
        }
        _cleanup_(capture_stats_buffer_clear) CaptureStatsBuffer e = {};
        CHECK(capture_stats_add_u64(&e, _CAPTURE_STAT_MAX, 1) == -EINVAL);
        CHECK(capture_stats_add_u64(&e, _CAPTURE_STAT_INVALID, 1) == -EINVAL);

        _cleanup_(capture_stats_buffer_clear) CaptureStatsBuffer big = {};
        _cleanup_free_ char *value = malloc(1000);
        MUST(value ? 0 : -ENOMEM);
        memset(value, 'x', 999);
        value[999] = '\0';
        int r = 0, n = 0;
        while (r == 0 && n < 1000) {
                char key[32];
                snprintf(key, sizeof key, "k%d", n++);
                r = capture_stats_add_string_key(&big, key, value);
        }
        CHECK(r == -E2BIG);
        const char *text = capture_stats_buffer_get(&big, &len);
        CHECK(len <= CAPTURE_STATS_MAX && len > CAPTURE_STATS_MAX - 1010 && text[len - 1] == '\n'); /* whole lines */
        CHECK(capture_stats_add_u64(&big, CAPTURE_STAT_SAMPLES, 1) == -E2BIG);
}

/* What a hostile capture may hold: no line is taken for what it is not. */
TEST(hostile_blocks) {
        _cleanup_(capture_stats_freep) CaptureStats *s =
                parse("no equals sign\n=5\nSamples=1\nsam ples=2\nsamples=3\nsamples=4\n\n\nlost_samples=x7\n"
                      "unwind=dwarf=fp\nreason");
        CHECK(capture_stats_get_n_entries(s) == 3);
        CHECK(capture_stats_get_n_malformed(s) == 6);
        uint64_t v = 0;
        CHECK(capture_stats_get_u64(s, CAPTURE_STAT_SAMPLES, &v) == 0 && v == 3);
        CHECK(capture_stats_get_u64(s, CAPTURE_STAT_LOST_SAMPLES, &v) == -EBADMSG);
        CHECK(strcmp(capture_stats_get(s, CAPTURE_STAT_UNWIND), "dwarf=fp") == 0);
        CHECK(capture_stats_get(s, CAPTURE_STAT_REASON) == NULL);
        CHECK(capture_stats_lookup(s, "") == NULL && capture_stats_lookup(s, NULL) == NULL);

        const char *numbers[] = { "samples=",
                                  "samples= 1",
                                  "samples=1 ",
                                  "samples=-1",
                                  "samples=+1",
                                  "samples=0x10",
                                  "samples=18446744073709551616" };
        for (size_t i = 0; i < sizeof(numbers) / sizeof(*numbers); i++) {
                _cleanup_(capture_stats_freep) CaptureStats *n = parse(numbers[i]);
                CHECK_MSG(capture_stats_get_u64(n, CAPTURE_STAT_SAMPLES, &v) == -EBADMSG, "\"%s\" read as %" PRIu64,
                          numbers[i], v);
        }

        _cleanup_(capture_stats_freep) CaptureStats *empty = parse("");
        CHECK(capture_stats_get_n_entries(empty) == 0 && capture_stats_get_n_malformed(empty) == 0);
        _cleanup_(capture_stats_freep) CaptureStats *null = parse(NULL);
        CHECK(capture_stats_get_n_entries(null) == 0);
}

TEST(hostile_sizes) {
        /* more lines than an entry table holds: the rest are skipped */
        size_t n = CAPTURE_STATS_MAX_ENTRIES + 10;
        _cleanup_free_ char *many = malloc(n * 16 + 1);
        MUST(many ? 0 : -ENOMEM);
        size_t len = 0;
        for (size_t i = 0; i < n; i++)
                len += (size_t) sprintf(many + len, "k%zu=%zu\n", i, i);
        _cleanup_(capture_stats_freep) CaptureStats *s = parse(many);
        CHECK(capture_stats_get_n_entries(s) == CAPTURE_STATS_MAX_ENTRIES);
        CHECK(capture_stats_get_n_malformed(s) == 10);
        CHECK(capture_stats_lookup(s, "k0") && !capture_stats_lookup(s, "k1030"));

        /* a text past the bound is refused whole */
        _cleanup_free_ char *huge = malloc(CAPTURE_STATS_MAX + 2);
        MUST(huge ? 0 : -ENOMEM);
        memset(huge, 'a', CAPTURE_STATS_MAX + 1);
        huge[CAPTURE_STATS_MAX + 1] = '\0';
        CaptureStats *t = NULL;
        CHECK(capture_stats_parse(huge, &t) == -E2BIG && t == NULL);
        huge[CAPTURE_STATS_MAX] = '\0'; /* at the bound: read, one malformed line */
        MUST(capture_stats_parse(huge, &t));
        CHECK(capture_stats_get_n_entries(t) == 0 && capture_stats_get_n_malformed(t) == 1);
        capture_stats_free(t);

        /* a frame that is not metadata, or another id, is not a block */
        CaptureFrame f = { .type = CAPTURE_FRAME_MARK };
        CHECK(capture_frame_get_stats(&f, CAPTURE_STATS_ID, &t) == 0);
        f = (CaptureFrame) { .type = CAPTURE_FRAME_METADATA };
        snprintf(f.metadata.id, sizeof(f.metadata.id), "%s", CAPTURE_STATS_ID);
        f.metadata.metadata = "samples=1";
        MUST(capture_frame_get_stats(&f, CAPTURE_STATS_ID, &t));
        CHECK(capture_stats_get(t, CAPTURE_STAT_SAMPLES) &&
              strcmp(capture_stats_get(t, CAPTURE_STAT_SAMPLES), "1") == 0);
        capture_stats_free(t);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
