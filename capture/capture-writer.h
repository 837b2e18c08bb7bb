/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-writer.h: writes Sysprof capture files (format version 1, always
 * little-endian) sequentially to an fd. Frames are buffered and written on
 * capture_writer_flush(); when the fd is seekable each flush also rewrites the
 * header's end time, so a capture is readable up to its last flush even if
 * the writer dies.
 *
 * Every function returns 0 (or a positive count) on success and a negative
 * errno on failure: -EINVAL for arguments that cannot be encoded (too many
 * addresses, a string longer than a frame), -EIO/-EPIPE/... from write(). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "capture-types.h"

typedef struct CaptureWriter CaptureWriter;

/* Starts a capture on (a dup of) fd: writes the file header with start_time
 * (CLOCK_MONOTONIC nanoseconds, like Sysprof) and the wall-clock time. */
int capture_writer_new_fd(int fd, int64_t start_time, CaptureWriter **ret);

/* Flushes nothing; frees the writer and closes its fd. NULL is a no-op. */
CaptureWriter *capture_writer_free(CaptureWriter *w);

/* Writes all buffered frames, then (if seekable) the header's end time. */
int capture_writer_flush(CaptureWriter *w);

/* Sets the end time recorded in the header (default: latest frame time). */
void capture_writer_set_end_time(CaptureWriter *w, int64_t end_time);

/* Total bytes handed to the fd so far plus bytes still buffered. */
uint64_t capture_writer_get_bytes(const CaptureWriter *w);

/* Number of frames added so far, by type (index = CaptureFrameType). */
uint64_t capture_writer_get_frame_count(const CaptureWriter *w, int type);

int capture_writer_add_timestamp(CaptureWriter *w, int64_t time, int cpu, int32_t pid);

/* Copies one frame read from a little-endian capture as it is (header and
 * body; `size` is its len, padded to 8 here): how `periscope symbolize`
 * rewrites a capture. -EINVAL when size or type cannot be a frame. */
int capture_writer_add_raw_frame(CaptureWriter *w, const void *frame, size_t size);

/* A stack: addrs innermost first, with CAPTURE_CONTEXT_* markers as perf
 * gives them. At most CAPTURE_SAMPLE_MAX_ADDRS. */
int capture_writer_add_sample(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid,
                              const uint64_t *addrs, size_t n_addrs);

int capture_writer_add_map(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                           uint64_t start, uint64_t end, uint64_t offset, uint64_t inode,
                           const char *filename);

int capture_writer_add_process(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *cmdline);
int capture_writer_add_fork(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t child_pid);
int capture_writer_add_exit(CaptureWriter *w, int64_t time, int cpu, int32_t pid);

/* JIT symbol names for CAPTURE_JITMAP_MARK addresses. */
int capture_writer_add_jitmap(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                              const CaptureJitmapEntry *entries, size_t n_entries);

int capture_writer_add_counter_defs(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                    const CaptureCounterDef *counters, size_t n_counters);

/* Values for counters defined earlier; ids must be non-zero. */
int capture_writer_add_counter_values(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                      const CaptureCounterSetValue *values, size_t n_values);

int capture_writer_add_mark(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int64_t duration,
                            const char *group, const char *name, const char *message);

int capture_writer_add_metadata(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                const char *id, const char *metadata, size_t len);

int capture_writer_add_log(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int severity,
                           const char *domain, const char *message);

/* One raw FILE_CHUNK; capture_writer_add_file() is what callers want. */
int capture_writer_add_file_chunk(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *path,
                                  bool is_last, const uint8_t *data, size_t len);

/* Embeds a whole file of any size as consecutive FILE_CHUNKs. */
int capture_writer_add_file(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *path,
                            const void *data, size_t len);

/* Embeds what fd yields until EOF (at most max_bytes; -EFBIG past that). */
int capture_writer_add_file_fd(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *path,
                               int fd, uint64_t max_bytes);

int capture_writer_add_allocation(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid,
                                  uint64_t alloc_addr, int64_t alloc_size, const uint64_t *addrs, size_t n_addrs);

/* An overlay mount layer (src mounted at dst), as for container layers. */
int capture_writer_add_overlay(CaptureWriter *w, int64_t time, int cpu, int32_t pid, uint8_t layer,
                               const char *src, const char *dst);
