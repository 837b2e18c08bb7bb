/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-reader.h: reads Sysprof capture files (version 1) of either
 * endianness without trusting any length in them. Frames come out decoded
 * and host-endian (see CaptureFrame); unknown frame types (e.g. 16 TRACE and
 * 17 DBUS_MESSAGE from newer Sysprof) are skipped and counted.
 *
 * Errors: negative errno (-EBADMSG for malformed data, -EPROTONOSUPPORT for a
 * wrong version, I/O errors from the kernel) plus a message naming the byte
 * offset, available from capture_reader_error(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture-types.h"

typedef struct CaptureReader CaptureReader;

typedef struct CaptureFileHeader {
        bool little_endian;
        uint8_t version;
        char capture_time[65];
        int64_t start_time;
        int64_t end_time;
} CaptureFileHeader;

/* Opens a capture from fd (a regular file is mapped, anything else is read
 * to its end). The reader does not take ownership of fd. On failure *error
 * (if non-NULL) receives a malloc'ed message. */
int capture_reader_open_fd(int fd, CaptureReader **ret, char **error);

/* Same for a path; the message names the path. */
int capture_reader_open_path(const char *path, CaptureReader **ret, char **error);

/* Same for a caller-owned buffer (used by the fuzzer); data must outlive the reader. */
int capture_reader_open_memory(const void *data, size_t size, CaptureReader **ret, char **error);

CaptureReader *capture_reader_free(CaptureReader *r);

const CaptureFileHeader *capture_reader_get_header(const CaptureReader *r);

/* Size of the capture data in bytes. */
uint64_t capture_reader_get_size(const CaptureReader *r);

/* Decodes the next known frame into *frame. Returns 1 for a frame, 0 at a
 * clean end of file, negative errno for a malformed frame (the reader then
 * stays at that frame; capture_reader_error() says what and where). */
int capture_reader_next(CaptureReader *r, CaptureFrame *frame);

/* Goes back to the first frame. */
void capture_reader_rewind(CaptureReader *r);

/* Frames of unknown types skipped so far. */
uint64_t capture_reader_get_skipped(const CaptureReader *r);

/* The last error message, or NULL. */
const char *capture_reader_error(const CaptureReader *r);

/* As capture_reader_read_file(), for the index-th (from 0) embedded file
 * named path: a merged capture (sysprof-cli --merge) holds one per capture
 * it was made of. -ENOENT when there are no more. */
int capture_reader_read_file_nth(CaptureReader *r, const char *path, size_t index, uint64_t max_bytes,
                                 uint8_t **ret_data, size_t *ret_len);

/* Reassembles the first complete embedded file named path from its
 * FILE_CHUNKs (at most max_bytes; -EFBIG past that, -ENOENT if absent).
 * The result is malloc'ed and NUL-terminated (not counted in *ret_len). The
 * reader's position is left unchanged. */
int capture_reader_read_file(CaptureReader *r, const char *path, uint64_t max_bytes, uint8_t **ret_data,
                             size_t *ret_len);

/* Decodes one frame held outside the reader's file (e.g. copied out of a
 * control-fd ring) with the reader's byte order, rules and scratch space, so
 * untrusted frames get exactly the checks file frames get. size is the bytes
 * available at data. Returns 1 for a decoded frame (valid until the next call
 * on r), 0 for a well-formed frame of an unknown type (frame->len and
 * frame->type are still set), negative errno for a malformed one (message in
 * capture_reader_error(), offsets relative to data). */
int capture_reader_decode_frame(CaptureReader *r, const void *data, size_t size, CaptureFrame *frame);
