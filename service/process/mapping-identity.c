/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mapping-identity.c: one periscope.file frame per pinned file, from the
 * pinned fd (size, mtime) and the kernel's record (device, inode, build-id). */
#include "mapping-identity.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int mapping_identity_write(CaptureWriter *w, int64_t time, int cpu, pid_t pid, const ProcessMapping *mapping) {
        PinnedFile *p = mapping->pinned;
        if (!p || p->how == PINNED_VIA_PROCESS_MEMORY || !mapping->filename || mapping->filename[0] != '/')
                return 0;
        bool build_id = mapping->build_id_size > 0 && mapping->build_id_size <= CAPTURE_FILE_IDENTITY_MAX_BUILD_ID;
        if (p->identity_written && (p->identity_has_build_id || !build_id))
                return 0;
        CaptureFileIdentity id = {
                .dev_major = major(p->dev),
                .dev_minor = minor(p->dev),
                .inode = p->inode,
                .path = mapping->filename,
        };
        struct stat st;
        if (fstat(p->fd, &st) >= 0 && st.st_mtim.tv_sec >= 0) {
                id.has_stat = true;
                id.size = (uint64_t) st.st_size;
                id.mtime_sec = st.st_mtim.tv_sec;
                id.mtime_nsec = (uint32_t) st.st_mtim.tv_nsec;
        }
        if (build_id) {
                id.build_id_size = mapping->build_id_size;
                memcpy(id.build_id, mapping->build_id, mapping->build_id_size);
        }
        int r = capture_writer_add_file_identity(w, time, cpu, (int32_t) pid, &id);
        if (r == -EINVAL)
                return 0; /* a path too long for a frame: the file stays unnamed after a crash */
        if (r < 0)
                return r;
        p->identity_written = true;
        p->identity_has_build_id = build_id;
        return 0;
}
