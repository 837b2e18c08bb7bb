/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file-identities.h: Periscope's file-identity extension of the capture
 * format: one METADATA frame `periscope.file` per mapped file, written when
 * the recording first sees (pins) it, so a capture whose recorder died before
 * its symbol tables still says which files its MAP frames named and how to
 * tell them from another file at the same path later: the device and inode
 * the kernel reported, the size and modification time of the file that was
 * pinned, and the build-id where the kernel gave one (docs/capture-format.md). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture-types.h"
#include "capture-writer.h"

#define CAPTURE_FILE_IDENTITY_ID "periscope.file"
#define CAPTURE_FILE_IDENTITY_MAX_BUILD_ID 20 /* bytes: what a kernel MMAP2 record carries */

typedef struct CaptureFileIdentity {
        uint32_t dev_major, dev_minor; /* the mapping's device as the kernel reported it */
        uint64_t inode;
        bool has_stat; /* size and mtime are known */
        uint64_t size;
        int64_t mtime_sec;
        uint32_t mtime_nsec;
        uint8_t build_id_size; /* 0: none recorded */
        uint8_t build_id[CAPTURE_FILE_IDENTITY_MAX_BUILD_ID];
        const char *path; /* as the MAP frames name it; reading: points into the frame */
} CaptureFileIdentity;

/* Writes one identity frame for the file first seen mapped in pid at time.
 * -EINVAL for a path that is empty or does not fit in one frame. */
int capture_writer_add_file_identity(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                     const CaptureFileIdentity *id);

/* Whether f is a file-identity frame: 1 with *ret filled (its path points
 * into f's text), 0 if it is another frame, -EBADMSG if it is malformed. */
int capture_frame_get_file_identity(const CaptureFrame *f, CaptureFileIdentity *ret);
