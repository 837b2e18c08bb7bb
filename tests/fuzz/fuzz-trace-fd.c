/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-trace-fd.c: libFuzzer target for the merge of trace fds
 * (service/control/trace-fd.c): a profiled program writes a whole capture
 * of its own into the memfd it got as SYSPROF_TRACE_FD, and at the end of
 * the recording its frames are read as untrusted input and appended to the
 * recording's capture. Each input is one program's trace fd; the recording
 * knows the pids that are not multiples of 3, so refusals of foreign pids
 * are exercised too. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "trace-fd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool pid_known(int32_t pid, void *userdata) {
        return pid > 0 && pid % 3 != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        TraceFds *t = NULL;
        int fd = -1;
        if (trace_fds_new(&t) < 0 || trace_fds_open(t, &fd) < 0)
                abort();
        if (size > 0 && write(fd, data, size) != (ssize_t) size)
                abort();
        close(fd); /* the program is done with it */
        int out = memfd_create("fuzz-capture", MFD_CLOEXEC);
        CaptureWriter *w = NULL;
        if (out < 0 || capture_writer_new_fd(out, 0, &w) < 0)
                abort();
        CounterIdAllocator ids = { 0 };
        TraceMerge m = { .writer = w, .ids = &ids, .start_time = 0, .end_time = INT64_MAX, .pid_known = pid_known };
        (void) trace_fds_merge(t, &m);
        const TraceFdStats *st = trace_fds_get_stats(t);
        if (st->bytes > size)
                abort(); /* it cannot have read more than was written */
        trace_fds_free(t);
        capture_writer_free(w);
        close(out);
        return 0;
}
