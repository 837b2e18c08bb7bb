/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thread-names.c: the `periscope.thread` METADATA frames. Text: lines
 * `tid=N`, optionally `exec=1`, then `name=` and the name up to the end of
 * the text (a name may hold any byte but NUL, newlines included). */
#include "thread-names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int capture_writer_add_thread_name(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid, const char *name,
                                   bool exec) {
        char buf[64 + CAPTURE_THREAD_NAME_MAX];
        if (!name || tid <= 0)
                return -EINVAL;
        size_t l = strnlen(name, CAPTURE_THREAD_NAME_MAX);
        int n = snprintf(buf, sizeof(buf), "tid=%d\n%sname=", (int) tid, exec ? "exec=1\n" : "");
        if (n < 0 || (size_t) n + l >= sizeof(buf))
                return -EINVAL;
        memcpy(buf + n, name, l);
        return capture_writer_add_metadata(w, time, cpu, pid, CAPTURE_THREAD_NAME_ID, buf, (size_t) n + l);
}

int capture_frame_get_thread_name(const CaptureFrame *f, int32_t *ret_tid, const char **ret_name, size_t *ret_len,
                                  bool *ret_exec) {
        if (f->type != CAPTURE_FRAME_METADATA || strcmp(f->metadata.id, CAPTURE_THREAD_NAME_ID) != 0)
                return 0;
        const char *t = f->metadata.metadata ? f->metadata.metadata : "";
        if (strncmp(t, "tid=", 4) != 0)
                return -EBADMSG;
        char *end = NULL;
        errno = 0;
        long tid = strtol(t + 4, &end, 10);
        if (errno || end == t + 4 || *end != '\n' || tid <= 0 || tid > INT32_MAX)
                return -EBADMSG;
        t = end + 1;
        bool exec = false;
        if (strncmp(t, "exec=1\n", 7) == 0) {
                exec = true;
                t += 7;
        }
        if (strncmp(t, "name=", 5) != 0)
                return -EBADMSG;
        t += 5;
        *ret_tid = (int32_t) tid;
        *ret_name = t;
        *ret_len = strnlen(t, CAPTURE_THREAD_NAME_MAX);
        if (ret_exec)
                *ret_exec = exec;
        return 1;
}
