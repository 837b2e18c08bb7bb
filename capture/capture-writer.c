/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-writer.c: sequential, buffered writer of Sysprof capture files. */
#include "capture-writer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"

#define WRITER_BUFFER_SIZE (256 * 1024)

struct CaptureWriter {
        int fd;
        bool seekable;
        int64_t start_time;
        int64_t end_time;
        bool end_time_fixed;
        uint64_t bytes_written;
        uint64_t frame_count[_CAPTURE_FRAME_TYPE_MAX];
        size_t len;
        uint8_t buf[WRITER_BUFFER_SIZE];
};

/* Writes n bytes; *done (if set) counts what reached the fd even on error, so
 * a retried flush does not write the same bytes twice. */
static int write_all(int fd, const uint8_t *p, size_t n, size_t *done) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                /* A non-blocking fd from a client: wait, but not forever. */
                                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                                int r = poll(&pfd, 1, 5000);
                                if (r < 0 && errno != EINTR)
                                        return -errno;
                                if (r == 0)
                                        return -ETIMEDOUT;
                                continue;
                        }
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t) k;
                if (done)
                        *done += (size_t) k;
        }
        return 0;
}

static void header_encode(uint8_t hdr[CAPTURE_FILE_HEADER_SIZE], int64_t start_time, int64_t end_time) {
        memset(hdr, 0, CAPTURE_FILE_HEADER_SIZE);
        unaligned_store_u32(hdr, CAPTURE_MAGIC);
        hdr[4] = CAPTURE_VERSION;
        hdr[5] = 0x01; /* little_endian bit */

        time_t now = time(NULL);
        struct tm tm;
        if (gmtime_r(&now, &tm))
                strftime((char *) hdr + 8, 64, "%Y-%m-%dT%H:%M:%SZ", &tm);
        unaligned_store_u64(hdr + 72, (uint64_t) start_time);
        unaligned_store_u64(hdr + 80, (uint64_t) end_time);
}

int capture_writer_new_fd(int fd, int64_t start_time, CaptureWriter **ret) {
        if (fd < 0 || !ret)
                return -EINVAL;

        _cleanup_close_ int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;

        CaptureWriter *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->start_time = w->end_time = start_time;

        /* The end time is rewritten with pwrite() at offset 80, which needs a
         * regular file that starts where we start and is not O_APPEND (Linux
         * appends pwrite() data on O_APPEND fds). */
        struct stat st;
        int fl = fcntl(copy, F_GETFL);
        w->seekable = fstat(copy, &st) == 0 && S_ISREG(st.st_mode) && fl >= 0 && !(fl & O_APPEND) &&
                      lseek(copy, 0, SEEK_CUR) == 0;

        uint8_t hdr[CAPTURE_FILE_HEADER_SIZE];
        header_encode(hdr, start_time, start_time);
        int r = write_all(copy, hdr, sizeof(hdr), NULL);
        if (r < 0) {
                free(w);
                return r;
        }
        w->bytes_written = sizeof(hdr);
        w->fd = TAKE_FD(copy);
        *ret = w;
        return 0;
}

CaptureWriter *capture_writer_free(CaptureWriter *w) {
        if (!w)
                return NULL;
        safe_close(w->fd);
        free(w);
        return NULL;
}

int capture_writer_flush(CaptureWriter *w) {
        size_t done = 0;
        int r = write_all(w->fd, w->buf, w->len, &done);
        w->bytes_written += done;
        if (r < 0) {
                /* Keep only what did not reach the fd for the next attempt. */
                memmove(w->buf, w->buf + done, w->len - done);
                w->len -= done;
                return r;
        }
        w->len = 0;

        if (w->seekable) {
                uint8_t t[8];
                unaligned_store_u64(t, (uint64_t) w->end_time);
                if (pwrite(w->fd, t, sizeof(t), 80) != (ssize_t) sizeof(t))
                        return errno > 0 ? -errno : -EIO;
        }
        return 0;
}

void capture_writer_set_end_time(CaptureWriter *w, int64_t end_time) {
        w->end_time = end_time;
        w->end_time_fixed = true;
}

uint64_t capture_writer_get_bytes(const CaptureWriter *w) {
        return w->bytes_written + w->len;
}

uint64_t capture_writer_get_frame_count(const CaptureWriter *w, int type) {
        if (type <= 0 || type >= _CAPTURE_FRAME_TYPE_MAX)
                return 0;
        return w->frame_count[type];
}

/* Reserves an 8-aligned, zeroed frame of `size` bytes and fills its header. */
static int frame_begin(CaptureWriter *w, size_t size, uint8_t type, int64_t time, int cpu, int32_t pid,
                       uint8_t **ret) {
        if (size > CAPTURE_FRAME_MAX) /* before aligning: a huge size would wrap */
                return -EINVAL;
        size_t len = ALIGN_TO(size, (size_t) CAPTURE_ALIGN);
        if (len > CAPTURE_FRAME_MAX)
                return -EINVAL;
        if (w->len + len > sizeof(w->buf)) {
                int r = capture_writer_flush(w);
                if (r < 0)
                        return r;
        }
        uint8_t *f = w->buf + w->len;
        memset(f, 0, len);
        unaligned_store_u16(f, (uint16_t) len);
        unaligned_store_u16(f + 2, (uint16_t) (int16_t) cpu);
        unaligned_store_u32(f + 4, (uint32_t) pid);
        unaligned_store_u64(f + 8, (uint64_t) time);
        f[16] = type;
        w->len += len;
        w->frame_count[type]++;
        if (!w->end_time_fixed && time > w->end_time)
                w->end_time = time;
        *ret = f;
        return 0;
}

static void store_fixed_string(uint8_t *dst, const char *s, size_t n) {
        if (!s)
                return;
        size_t l = strnlen(s, n - 1);
        memcpy(dst, s, l);
}

int capture_writer_add_timestamp(CaptureWriter *w, int64_t time, int cpu, int32_t pid) {
        uint8_t *f;
        return frame_begin(w, CAPTURE_FRAME_HEADER_SIZE, CAPTURE_FRAME_TIMESTAMP, time, cpu, pid, &f);
}

int capture_writer_add_raw_frame(CaptureWriter *w, const void *frame, size_t size) {
        const uint8_t *src = frame;
        if (size < CAPTURE_FRAME_HEADER_SIZE || size > CAPTURE_FRAME_MAX || src[16] == 0 ||
            src[16] >= _CAPTURE_FRAME_TYPE_MAX)
                return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, size, src[16], (int64_t) unaligned_load_u64(src + 8, true),
                            (int16_t) unaligned_load_u16(src + 2, true), (int32_t) unaligned_load_u32(src + 4, true), &f);
        if (r < 0)
                return r;
        memcpy(f + CAPTURE_FRAME_HEADER_SIZE, src + CAPTURE_FRAME_HEADER_SIZE, size - CAPTURE_FRAME_HEADER_SIZE);
        return 0;
}

static void store_addrs(uint8_t *dst, const uint64_t *addrs, size_t n) {
        for (size_t i = 0; i < n; i++)
                unaligned_store_u64(dst + 8 * i, addrs[i]);
}

int capture_writer_add_sample(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid,
                              const uint64_t *addrs, size_t n_addrs) {
        if (n_addrs > CAPTURE_SAMPLE_MAX_ADDRS || (n_addrs > 0 && !addrs))
                return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_SAMPLE_SIZE + 8 * n_addrs, CAPTURE_FRAME_SAMPLE, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u16(f + 24, (uint16_t) n_addrs);
        unaligned_store_u32(f + 28, (uint32_t) tid);
        store_addrs(f + 32, addrs, n_addrs);
        return 0;
}

int capture_writer_add_map(CaptureWriter *w, int64_t time, int cpu, int32_t pid, uint64_t start, uint64_t end,
                           uint64_t offset, uint64_t inode, const char *filename) {
        size_t l = filename ? strlen(filename) : 0;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_MAP_SIZE + l + 1, CAPTURE_FRAME_MAP, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u64(f + 24, start);
        unaligned_store_u64(f + 32, end);
        unaligned_store_u64(f + 40, offset);
        unaligned_store_u64(f + 48, inode);
        if (l)
                memcpy(f + 56, filename, l);
        return 0;
}

static int add_string_frame(CaptureWriter *w, uint8_t type, int64_t time, int cpu, int32_t pid, const char *s) {
        size_t l = s ? strlen(s) : 0;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_FRAME_HEADER_SIZE + l + 1, type, time, cpu, pid, &f);
        if (r < 0)
                return r;
        if (l)
                memcpy(f + 24, s, l);
        return 0;
}

int capture_writer_add_process(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *cmdline) {
        return add_string_frame(w, CAPTURE_FRAME_PROCESS, time, cpu, pid, cmdline);
}

int capture_writer_add_fork(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t child_pid) {
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_FORK_SIZE, CAPTURE_FRAME_FORK, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u32(f + 24, (uint32_t) child_pid);
        return 0;
}

int capture_writer_add_exit(CaptureWriter *w, int64_t time, int cpu, int32_t pid) {
        uint8_t *f;
        return frame_begin(w, CAPTURE_FRAME_HEADER_SIZE, CAPTURE_FRAME_EXIT, time, cpu, pid, &f);
}

int capture_writer_add_jitmap(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                              const CaptureJitmapEntry *entries, size_t n_entries) {
        size_t size = CAPTURE_JITMAP_SIZE;
        for (size_t i = 0; i < n_entries; i++) {
                size += 8 + strlen(entries[i].name ? entries[i].name : "") + 1;
                if (size > CAPTURE_FRAME_MAX)
                        return -EINVAL;
        }
        uint8_t *f;
        int r = frame_begin(w, size, CAPTURE_FRAME_JITMAP, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u32(f + 24, (uint32_t) n_entries);
        uint8_t *p = f + CAPTURE_JITMAP_SIZE;
        for (size_t i = 0; i < n_entries; i++) {
                const char *name = entries[i].name ? entries[i].name : "";
                size_t l = strlen(name) + 1;
                unaligned_store_u64(p, entries[i].address);
                memcpy(p + 8, name, l);
                p += 8 + l;
        }
        return 0;
}

int capture_writer_add_counter_defs(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                    const CaptureCounterDef *counters, size_t n_counters) {
        if (n_counters > CAPTURE_CTRDEF_MAX_COUNTERS || (n_counters > 0 && !counters))
                return -EINVAL;
        for (size_t i = 0; i < n_counters; i++)
                if (counters[i].id == 0 || counters[i].id > 0xffffff || counters[i].type > CAPTURE_COUNTER_DOUBLE)
                        return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_CTRDEF_SIZE + CAPTURE_COUNTER_SIZE * n_counters, CAPTURE_FRAME_CTRDEF, time,
                            cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u16(f + 24, (uint16_t) n_counters);
        for (size_t i = 0; i < n_counters; i++) {
                uint8_t *c = f + CAPTURE_CTRDEF_SIZE + CAPTURE_COUNTER_SIZE * i;
                store_fixed_string(c, counters[i].category, CAPTURE_COUNTER_CATEGORY_LEN);
                store_fixed_string(c + 32, counters[i].name, CAPTURE_COUNTER_NAME_LEN);
                store_fixed_string(c + 64, counters[i].description, CAPTURE_COUNTER_DESCRIPTION_LEN);
                unaligned_store_u32(c + 116, (counters[i].id & 0xffffff) | (uint32_t) counters[i].type << 24);
                unaligned_store_u64(c + 120, (uint64_t) counters[i].value.v64);
        }
        return 0;
}

int capture_writer_add_counter_values(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                      const CaptureCounterSetValue *values, size_t n_values) {
        size_t n_groups = (n_values + 7) / 8;
        if (n_groups > CAPTURE_CTRSET_MAX_GROUPS || (n_values > 0 && !values))
                return -EINVAL;
        for (size_t i = 0; i < n_values; i++)
                if (values[i].id == 0)
                        return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_CTRSET_SIZE + CAPTURE_CTRSET_GROUP_SIZE * n_groups, CAPTURE_FRAME_CTRSET,
                            time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u16(f + 24, (uint16_t) n_groups);
        for (size_t i = 0; i < n_values; i++) {
                uint8_t *g = f + CAPTURE_CTRSET_SIZE + CAPTURE_CTRSET_GROUP_SIZE * (i / 8);
                unaligned_store_u32(g + 4 * (i % 8), values[i].id);
                unaligned_store_u64(g + 32 + 8 * (i % 8), (uint64_t) values[i].value.v64);
        }
        return 0;
}

int capture_writer_add_mark(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int64_t duration,
                            const char *group, const char *name, const char *message) {
        size_t l = message ? strlen(message) : 0;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_MARK_SIZE + l + 1, CAPTURE_FRAME_MARK, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u64(f + 24, (uint64_t) duration);
        store_fixed_string(f + 32, group, CAPTURE_MARK_GROUP_LEN);
        store_fixed_string(f + 56, name, CAPTURE_MARK_NAME_LEN);
        if (l)
                memcpy(f + CAPTURE_MARK_SIZE, message, l);
        return 0;
}

int capture_writer_add_metadata(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *id,
                                const char *metadata, size_t len) {
        if ((len > 0 && !metadata) || len > CAPTURE_FRAME_MAX)
                return -EINVAL;
        if (metadata && memchr(metadata, 0, len))
                return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_METADATA_SIZE + len + 1, CAPTURE_FRAME_METADATA, time, cpu, pid, &f);
        if (r < 0)
                return r;
        store_fixed_string(f + 24, id, CAPTURE_METADATA_ID_LEN);
        if (len)
                memcpy(f + CAPTURE_METADATA_SIZE, metadata, len);
        return 0;
}

int capture_writer_add_log(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int severity, const char *domain,
                           const char *message) {
        size_t l = message ? strlen(message) : 0;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_LOG_SIZE + l + 1, CAPTURE_FRAME_LOG, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u16(f + 24, (uint16_t) severity);
        store_fixed_string(f + 32, domain, CAPTURE_LOG_DOMAIN_LEN);
        if (l)
                memcpy(f + CAPTURE_LOG_SIZE, message, l);
        return 0;
}

int capture_writer_add_file_chunk(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *path,
                                  bool is_last, const uint8_t *data, size_t len) {
        if (len > CAPTURE_FILE_CHUNK_MAX_DATA || (len > 0 && !data) || !path)
                return -EINVAL;
        if (strlen(path) >= CAPTURE_FILE_PATH_LEN)
                return -ENAMETOOLONG;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_FILE_CHUNK_SIZE + len, CAPTURE_FRAME_FILE_CHUNK, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u32(f + 24, (is_last ? 1u : 0u) | (uint32_t) len << 16);
        store_fixed_string(f + 28, path, CAPTURE_FILE_PATH_LEN);
        if (len)
                memcpy(f + CAPTURE_FILE_CHUNK_SIZE, data, len);
        return 0;
}

int capture_writer_add_file(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *path,
                            const void *data, size_t len) {
        const uint8_t *p = data;
        if (!path || (len > 0 && !data))
                return -EINVAL;
        if (strlen(path) >= CAPTURE_FILE_PATH_LEN)
                return -ENAMETOOLONG;
        do {
                size_t n = len > CAPTURE_FILE_CHUNK_MAX_DATA ? CAPTURE_FILE_CHUNK_MAX_DATA : len;
                int r = capture_writer_add_file_chunk(w, time, cpu, pid, path, n == len, p, n);
                if (r < 0)
                        return r;
                p += n;
                len -= n;
        } while (len > 0);
        return 0;
}

int capture_writer_add_file_fd(CaptureWriter *w, int64_t time, int cpu, int32_t pid, const char *path, int fd,
                               uint64_t max_bytes) {
        if (!path)
                return -EINVAL;
        if (strlen(path) >= CAPTURE_FILE_PATH_LEN)
                return -ENAMETOOLONG;
        _cleanup_free_ uint8_t *chunk = malloc(CAPTURE_FILE_CHUNK_MAX_DATA);
        if (!chunk)
                return -ENOMEM;
        uint64_t total = 0;
        size_t have = 0;
        bool eof = false;

        /* Keep one chunk in hand so the last one written carries is_last. */
        for (;;) {
                while (!eof && have < CAPTURE_FILE_CHUNK_MAX_DATA) {
                        ssize_t k = read(fd, chunk + have, CAPTURE_FILE_CHUNK_MAX_DATA - have);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                return -errno;
                        }
                        if (k == 0)
                                eof = true;
                        have += (size_t) k;
                        total += (uint64_t) k;
                        if (total > max_bytes)
                                return -EFBIG;
                }
                int r = capture_writer_add_file_chunk(w, time, cpu, pid, path, eof, chunk, have);
                if (r < 0)
                        return r;
                have = 0;
                if (eof)
                        return 0;
        }
}

int capture_writer_add_allocation(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid,
                                  uint64_t alloc_addr, int64_t alloc_size, const uint64_t *addrs, size_t n_addrs) {
        if (n_addrs > CAPTURE_ALLOCATION_MAX_ADDRS || (n_addrs > 0 && !addrs))
                return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_ALLOCATION_SIZE + 8 * n_addrs, CAPTURE_FRAME_ALLOCATION, time, cpu, pid, &f);
        if (r < 0)
                return r;
        unaligned_store_u64(f + 24, alloc_addr);
        unaligned_store_u64(f + 32, (uint64_t) alloc_size);
        unaligned_store_u32(f + 40, (uint32_t) tid);
        unaligned_store_u16(f + 44, (uint16_t) n_addrs);
        store_addrs(f + 48, addrs, n_addrs);
        return 0;
}

int capture_writer_add_overlay(CaptureWriter *w, int64_t time, int cpu, int32_t pid, uint8_t layer, const char *src,
                               const char *dst) {
        size_t sl = src ? strlen(src) : 0, dl = dst ? strlen(dst) : 0;
        if (sl > 0xffff || dl > 0xffff)
                return -EINVAL;
        uint8_t *f;
        int r = frame_begin(w, CAPTURE_OVERLAY_SIZE + sl + 1 + dl + 1, CAPTURE_FRAME_OVERLAY, time, cpu, pid, &f);
        if (r < 0)
                return r;
        f[24] = layer;
        unaligned_store_u16(f + 28, (uint16_t) sl);
        unaligned_store_u16(f + 30, (uint16_t) dl);
        if (sl)
                memcpy(f + CAPTURE_OVERLAY_SIZE, src, sl);
        if (dl)
                memcpy(f + CAPTURE_OVERLAY_SIZE + sl + 1, dst, dl);
        return 0;
}
