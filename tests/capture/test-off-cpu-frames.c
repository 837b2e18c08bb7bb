/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-off-cpu-frames.c: the `periscope.offcpu` METADATA frames
 * (capture/off-cpu-frames.h): written and read back (with and without a
 * stack, context markers kept), other METADATA not taken for them, and
 * every malformed text of a hostile capture refused with -EBADMSG. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-check.h"

#include "basic.h"
#include "capture-test-util.h"
#include "capture.h"

static CaptureOffCpu oc;

/* f as a METADATA frame with id and text, parsed. */
static int parse(const char *id, const char *text) {
        CaptureFrame f = test_metadata_frame(id, text);
        return capture_frame_get_off_cpu(&f, &oc);
}

static const uint64_t stack_addrs[] = { CAPTURE_CONTEXT_KERNEL, 0xffffffff81000010ull, CAPTURE_CONTEXT_USER, 0x401000 };

/* A capture of two off-CPU frames (blocked with a stack, runnable without)
 * and a thread name; what the reader gives back of it. */
typedef struct ReadBack {
        int n, others;
        CaptureFrame frame[2];
        CaptureOffCpu off_cpu[2];
} ReadBack;

static void write_and_read_back(ReadBack *rb) {
        _cleanup_close_ int fd = test_memfd("off-cpu");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        CHECK_OK(capture_writer_add_off_cpu(w, TEST_T0 + 10, 1, 42, 43, CAPTURE_OFF_CPU_BLOCKED, 1000000000,
                                            stack_addrs, 4));
        CHECK_OK(capture_writer_add_off_cpu(w, TEST_T0 + 20, 0, 42, 44, CAPTURE_OFF_CPU_RUNNABLE, 250000, NULL, 0));
        CHECK_OK(capture_writer_add_thread_name(w, TEST_T0, 0, 42, 43, "worker", false));
        CHECK_OK(capture_writer_flush(w));
        w = capture_writer_free(w);

        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        CHECK_OK(capture_reader_open_fd(fd, &r, &err));
        CaptureFrame f;
        *rb = (ReadBack){};
        while (capture_reader_next(r, &f) > 0) {
                int k = capture_frame_get_off_cpu(&f, &oc);
                CHECK(k >= 0);
                if (k <= 0) {
                        rb->others += k == 0;
                        continue;
                }
                if (rb->n < 2) {
                        rb->frame[rb->n] = f;
                        rb->off_cpu[rb->n] = oc;
                }
                rb->n++;
        }
        capture_reader_free(r);
}

TEST(blocked_frame_with_stack_read_back) {
        ReadBack rb;
        write_and_read_back(&rb);
        CHECK(rb.n >= 1);
        const CaptureFrame *f = &rb.frame[0];
        const CaptureOffCpu *o = &rb.off_cpu[0];
        CHECK(f->pid == 42 && f->cpu == 1 && f->time == TEST_T0 + 10);
        CHECK(o->tid == 43 && o->state == CAPTURE_OFF_CPU_BLOCKED && o->duration_ns == 1000000000);
        CHECK(o->n_addrs == 4 && memcmp(o->addrs, stack_addrs, sizeof(stack_addrs)) == 0);
}

TEST(runnable_frame_without_stack_read_back) {
        ReadBack rb;
        write_and_read_back(&rb);
        CHECK(rb.n >= 2);
        const CaptureOffCpu *o = &rb.off_cpu[1];
        CHECK(o->tid == 44 && o->state == CAPTURE_OFF_CPU_RUNNABLE && o->duration_ns == 250000);
        CHECK(o->n_addrs == 0);
}

TEST(other_metadata_not_taken_for_off_cpu) {
        ReadBack rb;
        write_and_read_back(&rb);
        CHECK(rb.n == 2 && rb.others == 1);
        CHECK(parse("periscope.thread", "tid=1\nname=x") == 0);
}

TEST(writer_refuses_tid_0_and_unknown_state) {
        _cleanup_close_ int fd = test_memfd("off-cpu");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        CHECK(capture_writer_add_off_cpu(w, TEST_T0, 0, 42, 0, CAPTURE_OFF_CPU_BLOCKED, 1, NULL, 0) == -EINVAL);
        CHECK(capture_writer_add_off_cpu(w, TEST_T0, 0, 42, 1, 7, 1, NULL, 0) == -EINVAL);
        capture_writer_free(w);
}

TEST(text_parsed) {
        CHECK(parse(CAPTURE_OFF_CPU_ID, "tid=5\nstate=blocked\nduration_ns=7") == 1 && oc.tid == 5);
        CHECK(parse(CAPTURE_OFF_CPU_ID, "tid=5\nstate=blocked\nduration_ns=7\nstack=ff,1") == 1 && oc.n_addrs == 2);
}

TEST(malformed_text_refused) {
        static const char *const bad[] = {
                "",
                "tid=0\nstate=blocked\nduration_ns=1",
                "tid=-1\nstate=blocked\nduration_ns=1",
                "tid=2147483648\nstate=blocked\nduration_ns=1",
                "tid=1\nstate=sleeping\nduration_ns=1",
                "tid=1\nstate=blocked\nduration_ns=",
                "tid=1\nstate=blocked\nduration_ns=99999999999999999999999",
                "tid=1\nstate=blocked\nduration_ns=1x",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=zz",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=-1",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=1,,2",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=1,",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=1 2",
                "tid=1\nstate=blocked\nduration_ns=1\nstack=10000000000000000",
                "tid=1\nstate=blocked\nduration_ns=1\nstacks=1",
                "state=blocked\ntid=1\nduration_ns=1",
        };
        CHECK(test_count_accepted(parse, CAPTURE_OFF_CPU_ID, bad, ELEMENTSOF(bad)) == 0);
}

TEST(more_addresses_than_a_frame_holds_refused) {
        _cleanup_free_ char *big = malloc(64 + (CAPTURE_OFF_CPU_MAX_ADDRS + 1) * 2);
        MUST(big ? 0 : -ENOMEM);
        size_t l = (size_t) sprintf(big, "tid=1\nstate=blocked\nduration_ns=1\nstack=");
        for (int i = 0; i <= CAPTURE_OFF_CPU_MAX_ADDRS; i++)
                l += (size_t) sprintf(big + l, i ? ",1" : "1");
        CHECK(parse(CAPTURE_OFF_CPU_ID, big) == -EBADMSG);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
