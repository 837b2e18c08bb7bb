/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-tmp.h: the capture that the control and counters tests have the
 * service's code write: an anonymous temporary file, read back through fd. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "basic.h"
#include "capture.h"

/* An event loop and a writer on a new temporary file, its capture starting
 * now: what every test of the service's writers starts with. */
static inline int capture_tmp_new(sd_event **ret_event, FILE **ret_tmp, int *ret_fd, CaptureWriter **ret_writer) {
        int r = sd_event_new(ret_event);
        if (r < 0)
                return r;
        FILE *tmp = tmpfile();
        if (!tmp)
                return -errno;
        r = capture_writer_new_fd(fileno(tmp), now_monotonic_ns(), ret_writer);
        if (r < 0) {
                fclose(tmp);
                return r;
        }
        *ret_tmp = tmp;
        *ret_fd = fileno(tmp);
        return 0;
}
