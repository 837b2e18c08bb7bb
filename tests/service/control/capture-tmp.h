/* capture-tmp.h: the capture that the control and counters tests have the
 * service's code write: an anonymous temporary file, read back through fd. */
#pragma once

#include <errno.h>
#include <stdio.h>

#include "basic.h"
#include "capture.h"

/* A writer on a new temporary file, its capture starting now. */
static inline int capture_tmp_new(FILE **ret_tmp, int *ret_fd, CaptureWriter **ret_writer) {
        FILE *tmp = tmpfile();
        if (!tmp)
                return -errno;
        int r = capture_writer_new_fd(fileno(tmp), now_monotonic_ns(), ret_writer);
        if (r < 0) {
                fclose(tmp);
                return r;
        }
        *ret_tmp = tmp;
        *ret_fd = fileno(tmp);
        return 0;
}
