/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-pinned-files.c: the post-stop stage that says which files
 * were pinned and how. */
#include "recording-private.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "basic.h"

/* Writes which files were pinned and how, as the embedded file
 * /.periscope/pinned-files (one line per file:
 * "major:minor inode how checked|unchecked path"), so a report can
 * say where each file's symbols came from. */
static int pinned_files_stage(void *part, Recording *rec, const RecordingStageInput *in, RecordingStageResults *results,
                              RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                              RecordingStageJob *ret_job) {
        size_t n = pinned_files_get_n(in->pinned);
        size_t size = 0, allocated = 0;
        _cleanup_free_ char *buf = NULL;
        progress("pinned-files", 0, n, userdata);
        for (size_t i = 0; i < n; i++) {
                const PinnedFile *p = pinned_files_get(in->pinned, i);
                char line[PATH_MAX + 128];
                int len = snprintf(line, sizeof(line), "%u:%u %llu %s %s %s\n", major(p->dev), minor(p->dev),
                                   (unsigned long long) p->inode, pinned_file_how_to_string(p->how),
                                   p->identity_checked ? "checked" : "unchecked", p->path);
                if (len < 0 || (size_t) len >= sizeof(line))
                        continue;
                if (size + (size_t) len + 1 > allocated) {
                        size_t a = allocated ? allocated * 2 : 4096;
                        while (a < size + (size_t) len + 1)
                                a *= 2;
                        char *b = realloc(buf, a);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        allocated = a;
                }
                memcpy(buf + size, line, (size_t) len);
                size += (size_t) len;
        }
        progress("pinned-files", n, n, userdata);
        if (size == 0 || !in->writer)
                return 0;
        /* A METADATA frame holds at most one frame of text: large lists go in a file. */
        return capture_writer_add_file(in->writer, in->start_time, -1, -1, "/.periscope/pinned-files", buf, size);
}

const RecordingPartVTable recording_part_pinned_files = {
        .name = "pinned-files",
        .stage_name = "pinned-files",
        .stage = pinned_files_stage,
};
