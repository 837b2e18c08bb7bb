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

#include "basic.h"
#include "capture-test-util.h"
#include "capture.h"

static CaptureOffCpu oc;

/* f as a METADATA frame with id and text, parsed. */
static int parse(const char *id, const char *text) {
        CaptureFrame f = { .type = CAPTURE_FRAME_METADATA };
        snprintf(f.metadata.id, sizeof(f.metadata.id), "%s", id);
        f.metadata.metadata = text;
        return capture_frame_get_off_cpu(&f, &oc);
}

int main(void) {
        _cleanup_close_ int fd = test_memfd("off-cpu");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        const uint64_t addrs[] = { CAPTURE_CONTEXT_KERNEL, 0xffffffff81000010ull, CAPTURE_CONTEXT_USER, 0x401000 };
        CHECK_OK(capture_writer_add_off_cpu(w, TEST_T0 + 10, 1, 42, 43, CAPTURE_OFF_CPU_BLOCKED, 1000000000, addrs, 4));
        CHECK_OK(capture_writer_add_off_cpu(w, TEST_T0 + 20, 0, 42, 44, CAPTURE_OFF_CPU_RUNNABLE, 250000, NULL, 0));
        CHECK(capture_writer_add_off_cpu(w, TEST_T0, 0, 42, 0, CAPTURE_OFF_CPU_BLOCKED, 1, NULL, 0) == -EINVAL);
        CHECK(capture_writer_add_off_cpu(w, TEST_T0, 0, 42, 1, 7, 1, NULL, 0) == -EINVAL);
        CHECK_OK(capture_writer_add_thread_name(w, TEST_T0, 0, 42, 43, "worker", false));
        CHECK_OK(capture_writer_flush(w));
        w = capture_writer_free(w);

        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        CHECK(capture_reader_open_fd(fd, &r, &err) == 0);
        CaptureFrame f;
        int n = 0, others = 0;
        while (capture_reader_next(r, &f) > 0) {
                int k = capture_frame_get_off_cpu(&f, &oc);
                CHECK(k >= 0);
                if (k == 0) {
                        others++;
                        continue;
                }
                if (n++ == 0) {
                        CHECK(f.pid == 42 && f.cpu == 1 && f.time == TEST_T0 + 10);
                        CHECK(oc.tid == 43 && oc.state == CAPTURE_OFF_CPU_BLOCKED && oc.duration_ns == 1000000000);
                        CHECK(oc.n_addrs == 4 && memcmp(oc.addrs, addrs, sizeof(addrs)) == 0);
                } else {
                        CHECK(oc.tid == 44 && oc.state == CAPTURE_OFF_CPU_RUNNABLE && oc.duration_ns == 250000);
                        CHECK(oc.n_addrs == 0);
                }
        }
        CHECK(n == 2 && others == 1);
        capture_reader_free(r);

        CHECK(parse("periscope.thread", "tid=1\nname=x") == 0);
        CHECK(parse(CAPTURE_OFF_CPU_ID, "tid=5\nstate=blocked\nduration_ns=7") == 1 && oc.tid == 5);
        CHECK(parse(CAPTURE_OFF_CPU_ID, "tid=5\nstate=blocked\nduration_ns=7\nstack=ff,1") == 1 && oc.n_addrs == 2);
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
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (parse(CAPTURE_OFF_CPU_ID, bad[i]) != -EBADMSG) {
                        fprintf(stderr, "accepted: %s\n", bad[i]);
                        CHECK(false);
                }
        /* more addresses than a frame may hold */
        _cleanup_free_ char *big = malloc(64 + (CAPTURE_OFF_CPU_MAX_ADDRS + 1) * 2);
        CHECK(big);
        size_t l = (size_t) sprintf(big, "tid=1\nstate=blocked\nduration_ns=1\nstack=");
        for (int i = 0; i <= CAPTURE_OFF_CPU_MAX_ADDRS; i++)
                l += (size_t) sprintf(big + l, i ? ",1" : "1");
        CHECK(parse(CAPTURE_OFF_CPU_ID, big) == -EBADMSG);
        printf("ok: off-CPU frames written, read back and refused when malformed\n");
        return 0;
}
