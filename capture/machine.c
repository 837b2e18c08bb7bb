/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* machine.c: the `periscope.machine` METADATA frame. */
#include "machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *capture_host_arch(void) {
#if defined(__x86_64__)
        return "x86_64";
#elif defined(__aarch64__)
        return "aarch64";
#elif defined(__i386__)
        return "i686";
#else
        return "unknown";
#endif
}

int capture_writer_add_machine(CaptureWriter *w, int64_t time) {
        char buf[64];
        int n = snprintf(buf, sizeof(buf), "arch=%s\n", capture_host_arch());

        return capture_writer_add_metadata(w, time, -1, -1, CAPTURE_MACHINE_ID, buf, (size_t) n);
}

int capture_frame_get_arch(const CaptureFrame *f, char *buf, size_t size) {
        const char *p, *end;

        if (size == 0)
                return -EINVAL;
        if (f->type != CAPTURE_FRAME_METADATA || strcmp(f->metadata.id, CAPTURE_MACHINE_ID) != 0)
                return 0; /* buf untouched: another frame */
        buf[0] = '\0';
        for (p = f->metadata.metadata; p && *p; p = end + (*end == '\n')) {
                end = strchrnul(p, '\n');
                if (end - p < 5 || memcmp(p, "arch=", 5) != 0)
                        continue;
                size_t len = (size_t) (end - p - 5);
                if (len == 0 || len >= size || len > 32)
                        return -EBADMSG;
                for (size_t i = 0; i < len; i++) {
                        char c = p[5 + i];
                        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                                return -EBADMSG;
                }
                memcpy(buf, p + 5, len);
                buf[len] = '\0';
                return 1;
        }
        return 1;
}
