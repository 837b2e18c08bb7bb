/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-reader.c: bounds-checked decoder for Sysprof capture files. */
#include "capture-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"

#define READER_MAX_STREAM_SIZE (4ull << 30) /* non-file inputs are buffered in memory */

struct CaptureReader {
        const uint8_t *data;
        size_t size;
        void *mapping;          /* munmap on free */
        uint8_t *owned;         /* free on free */
        bool le;
        CaptureFileHeader header;
        size_t pos;
        uint64_t skipped;
        char *error;

        /* Scratch space for decoded arrays, reused frame after frame. */
        uint64_t *addrs;
        size_t addrs_alloc;
        CaptureCounterDef *counters;
        size_t counters_alloc;
        CaptureCounterSetValue *values;
        size_t values_alloc;
        CaptureJitmapEntry *jit;
        size_t jit_alloc;
};

static const char *const frame_type_names[_CAPTURE_FRAME_TYPE_MAX] = {
        [CAPTURE_FRAME_TIMESTAMP] = "TIMESTAMP", [CAPTURE_FRAME_SAMPLE] = "SAMPLE",
        [CAPTURE_FRAME_MAP] = "MAP",             [CAPTURE_FRAME_PROCESS] = "PROCESS",
        [CAPTURE_FRAME_FORK] = "FORK",           [CAPTURE_FRAME_EXIT] = "EXIT",
        [CAPTURE_FRAME_JITMAP] = "JITMAP",       [CAPTURE_FRAME_CTRDEF] = "CTRDEF",
        [CAPTURE_FRAME_CTRSET] = "CTRSET",       [CAPTURE_FRAME_MARK] = "MARK",
        [CAPTURE_FRAME_METADATA] = "METADATA",   [CAPTURE_FRAME_LOG] = "LOG",
        [CAPTURE_FRAME_FILE_CHUNK] = "FILE_CHUNK", [CAPTURE_FRAME_ALLOCATION] = "ALLOCATION",
        [CAPTURE_FRAME_OVERLAY] = "OVERLAY",
};

const char *capture_frame_type_to_string(int type) {
        if (type <= 0 || type >= _CAPTURE_FRAME_TYPE_MAX)
                return NULL;
        return frame_type_names[type];
}

__attribute__((format(printf, 3, 4))) static int reader_fail(CaptureReader *reader, int err, const char *fmt, ...) {
        va_list ap;
        free(reader->error);
        reader->error = NULL;
        va_start(ap, fmt);
        if (vasprintf(&reader->error, fmt, ap) < 0)
                reader->error = NULL;
        va_end(ap);
        return err;
}

static int header_parse(CaptureReader *reader) {
        if (reader->size < CAPTURE_FILE_HEADER_SIZE)
                return reader_fail(reader, -EBADMSG, "file is %zu bytes, shorter than the %d-byte capture header",
                                   reader->size, CAPTURE_FILE_HEADER_SIZE);
        const uint8_t *h = reader->data;
        if (unaligned_load_u32(h, true) != CAPTURE_MAGIC)
                return reader_fail(reader, -EBADMSG, "offset 0: not a Sysprof capture (bad magic 0x%08x)",
                                   unaligned_load_u32(h, true));
        reader->header.version = h[4];
        if (reader->header.version != CAPTURE_VERSION)
                return reader_fail(reader, -EPROTONOSUPPORT,
                                   "offset 4: capture format version %u, only version %d is supported",
                                   reader->header.version, CAPTURE_VERSION);
        /* A little-endian writer sets bit 0 of byte 5; a big-endian one stores
         * the flag (0) in bit 7 and leaves the rest zero. */
        reader->le = reader->header.little_endian = h[5] & 0x01;
        unaligned_load_fixed_string(reader->header.capture_time, h + 8, 64);
        reader->header.start_time = (int64_t) unaligned_load_u64(h + 72, reader->le);
        reader->header.end_time = (int64_t) unaligned_load_u64(h + 80, reader->le);
        reader->pos = CAPTURE_FILE_HEADER_SIZE;
        return 0;
}

static int reader_new(CaptureReader **ret, char **error, const char *what, CaptureReader *reader) {
        int r = header_parse(reader);
        if (r < 0) {
                if (error) {
                        if (asprintf(error, "%s: %s", what, reader->error ? reader->error : strerror(-r)) < 0)
                                *error = NULL;
                }
                capture_reader_free(reader);
                return r;
        }
        *ret = reader;
        return 0;
}

static int set_io_error(char **error, const char *what, int err) {
        if (error && asprintf(error, "%s: %s", what, strerror(-err)) < 0)
                *error = NULL;
        return err;
}

static int open_fd_named(int fd, const char *what, CaptureReader **ret, char **error) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return set_io_error(error, what, -errno);

        CaptureReader *reader = calloc(1, sizeof(*reader));
        if (!reader)
                return set_io_error(error, what, -ENOMEM);

        if (S_ISREG(st.st_mode)) {
                reader->size = (size_t) st.st_size;
                if (reader->size > 0) {
                        reader->mapping = mmap(NULL, reader->size, PROT_READ, MAP_PRIVATE, fd, 0);
                        if (reader->mapping == MAP_FAILED) {
                                int e = -errno;
                                free(reader);
                                return set_io_error(error, what, e);
                        }
                        reader->data = reader->mapping;
                }
        } else {
                size_t alloc = 0;
                for (;;) {
                        if (reader->size == alloc) {
                                alloc = alloc ? alloc * 2 : 65536;
                                if (alloc > READER_MAX_STREAM_SIZE) {
                                        capture_reader_free(reader);
                                        return set_io_error(error, what, -EFBIG);
                                }
                                uint8_t *q = realloc(reader->owned, alloc);
                                if (!q) {
                                        capture_reader_free(reader);
                                        return set_io_error(error, what, -ENOMEM);
                                }
                                reader->owned = q;
                        }
                        ssize_t k = read(fd, reader->owned + reader->size, alloc - reader->size);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                int e = -errno;
                                capture_reader_free(reader);
                                return set_io_error(error, what, e);
                        }
                        if (k == 0)
                                break;
                        reader->size += (size_t) k;
                }
                reader->data = reader->owned;
        }
        return reader_new(ret, error, what, reader);
}

int capture_reader_open_fd(int fd, CaptureReader **ret, char **error) {
        char what[32];
        snprintf(what, sizeof(what), "fd %d", fd);
        return open_fd_named(fd, what, ret, error);
}

int capture_reader_open_path(const char *path, CaptureReader **ret, char **error) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return set_io_error(error, path, -errno);
        return open_fd_named(fd, path, ret, error);
}

int capture_reader_open_memory(const void *data, size_t size, CaptureReader **ret, char **error) {
        CaptureReader *reader = calloc(1, sizeof(*reader));
        if (!reader)
                return set_io_error(error, "buffer", -ENOMEM);
        reader->data = data;
        reader->size = size;
        return reader_new(ret, error, "buffer", reader);
}

CaptureReader *capture_reader_free(CaptureReader *reader) {
        if (!reader)
                return NULL;
        if (reader->mapping)
                munmap(reader->mapping, reader->size);
        free(reader->owned);
        free(reader->error);
        free(reader->addrs);
        free(reader->counters);
        free(reader->values);
        free(reader->jit);
        free(reader);
        return NULL;
}

const CaptureFileHeader *capture_reader_get_header(const CaptureReader *reader) {
        return &reader->header;
}

uint64_t capture_reader_get_size(const CaptureReader *reader) {
        return reader->size;
}

void capture_reader_rewind(CaptureReader *reader) {
        reader->pos = CAPTURE_FILE_HEADER_SIZE;
}

uint64_t capture_reader_get_skipped(const CaptureReader *reader) {
        return reader->skipped;
}

const char *capture_reader_error(const CaptureReader *reader) {
        return reader->error;
}

/* Returns a NUL-terminated string at [off, end) of the frame, or NULL. */
static const char *frame_string(const uint8_t *f, size_t off, size_t end) {
        if (off >= end)
                return NULL;
        if (!memchr(f + off, 0, end - off))
                return NULL;
        return (const char *) f + off;
}

static int decode_addrs(CaptureReader *reader, const uint8_t *src, size_t n, const uint64_t **ret) {
        /* Room for at least one element: decoded arrays are never NULL
         * (callers may memcpy() them, and memcpy(…, NULL, 0) is UB). */
        if (GROW_ARRAY(reader->addrs, reader->addrs_alloc, n ? n : 1, 64) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                reader->addrs[i] = unaligned_load_u64(src + 8 * i, reader->le);
        *ret = reader->addrs;
        return 0;
}

#define NEED(size)                                                                                                     \
        do {                                                                                                           \
                if (len < (size))                                                                                      \
                        return reader_fail(reader, -EBADMSG,                                                           \
                                           "offset %zu: %s frame of %zu bytes is shorter than its %zu-byte layout",    \
                                           reader->pos, name, len, (size_t) (size));                                   \
        } while (0)

#define BAD(fmt, ...) reader_fail(reader, -EBADMSG, "offset %zu: %s frame: " fmt, reader->pos, name, ##__VA_ARGS__)

static int decode_payload(CaptureReader *reader, const uint8_t *f, size_t len, CaptureFrame *fr) {
        const char *name = capture_frame_type_to_string(fr->type);
        bool le = reader->le;

        switch (fr->type) {
        case CAPTURE_FRAME_TIMESTAMP:
        case CAPTURE_FRAME_EXIT:
                return 0;

        case CAPTURE_FRAME_SAMPLE:
        case CAPTURE_FRAME_ALLOCATION: {
                bool sample = fr->type == CAPTURE_FRAME_SAMPLE;
                size_t base = sample ? CAPTURE_SAMPLE_SIZE : CAPTURE_ALLOCATION_SIZE;
                NEED(base);
                uint16_t n = unaligned_load_u16(f + (sample ? 24 : 44), le);
                if ((size_t) n * 8 > len - base)
                        return BAD("%u addresses need %zu bytes, the frame has %zu", n, (size_t) n * 8, len - base);
                const uint64_t *addrs;
                if (decode_addrs(reader, f + base, n, &addrs) < 0)
                        return -ENOMEM;
                if (sample) {
                        fr->sample.n_addrs = n;
                        fr->sample.tid = (int32_t) unaligned_load_u32(f + 28, le);
                        fr->sample.addrs = addrs;
                } else {
                        fr->allocation.alloc_addr = unaligned_load_u64(f + 24, le);
                        fr->allocation.alloc_size = (int64_t) unaligned_load_u64(f + 32, le);
                        fr->allocation.tid = (int32_t) unaligned_load_u32(f + 40, le);
                        fr->allocation.n_addrs = n;
                        fr->allocation.addrs = addrs;
                }
                return 0;
        }

        case CAPTURE_FRAME_MAP:
                NEED(CAPTURE_MAP_SIZE + 1);
                fr->map.start = unaligned_load_u64(f + 24, le);
                fr->map.end = unaligned_load_u64(f + 32, le);
                fr->map.offset = unaligned_load_u64(f + 40, le);
                fr->map.inode = unaligned_load_u64(f + 48, le);
                fr->map.filename = frame_string(f, CAPTURE_MAP_SIZE, len);
                if (!fr->map.filename)
                        return BAD("file name has no terminator");
                return 0;

        case CAPTURE_FRAME_PROCESS:
                NEED(CAPTURE_FRAME_HEADER_SIZE + 1);
                fr->process.cmdline = frame_string(f, CAPTURE_FRAME_HEADER_SIZE, len);
                if (!fr->process.cmdline)
                        return BAD("command line has no terminator");
                return 0;

        case CAPTURE_FRAME_FORK:
                NEED(CAPTURE_FORK_SIZE);
                fr->fork.child_pid = (int32_t) unaligned_load_u32(f + 24, le);
                return 0;

        case CAPTURE_FRAME_JITMAP: {
                NEED(CAPTURE_JITMAP_SIZE);
                uint32_t n = unaligned_load_u32(f + 24, le);
                /* Each entry takes at least 9 bytes: bound n before allocating. */
                if ((uint64_t) n * 9 > len - CAPTURE_JITMAP_SIZE)
                        return BAD("%u entries cannot fit in %zu bytes", n, len - CAPTURE_JITMAP_SIZE);
                if (GROW_ARRAY(reader->jit, reader->jit_alloc, n ? n : 1, 64) < 0)
                        return -ENOMEM;
                size_t p = CAPTURE_JITMAP_SIZE;
                for (uint32_t i = 0; i < n; i++) {
                        if (len - p < 9)
                                return BAD("entry %u runs past the frame", i);
                        reader->jit[i].address = unaligned_load_u64(f + p, le);
                        reader->jit[i].name = frame_string(f, p + 8, len);
                        if (!reader->jit[i].name)
                                return BAD("entry %u name has no terminator", i);
                        p += 8 + strlen(reader->jit[i].name) + 1;
                }
                fr->jitmap.n_entries = n;
                fr->jitmap.entries = reader->jit;
                return 0;
        }

        case CAPTURE_FRAME_CTRDEF: {
                NEED(CAPTURE_CTRDEF_SIZE);
                uint16_t n = unaligned_load_u16(f + 24, le);
                if ((size_t) n * CAPTURE_COUNTER_SIZE > len - CAPTURE_CTRDEF_SIZE)
                        return BAD("%u counters need %zu bytes, the frame has %zu", n,
                                   (size_t) n * CAPTURE_COUNTER_SIZE, len - CAPTURE_CTRDEF_SIZE);
                if (GROW_ARRAY(reader->counters, reader->counters_alloc, n ? n : 1, 64) < 0)
                        return -ENOMEM;
                for (uint16_t i = 0; i < n; i++) {
                        const uint8_t *c = f + CAPTURE_CTRDEF_SIZE + (size_t) CAPTURE_COUNTER_SIZE * i;
                        CaptureCounterDef *d = &reader->counters[i];
                        unaligned_load_fixed_string(d->category, c, CAPTURE_COUNTER_CATEGORY_LEN);
                        unaligned_load_fixed_string(d->name, c + 32, CAPTURE_COUNTER_NAME_LEN);
                        unaligned_load_fixed_string(d->description, c + 64, CAPTURE_COUNTER_DESCRIPTION_LEN);
                        /* id is 24 bits in the file's byte order; type is byte 119 either way. */
                        d->id = le ? (uint32_t) c[116] | (uint32_t) c[117] << 8 | (uint32_t) c[118] << 16
                                   : (uint32_t) c[118] | (uint32_t) c[117] << 8 | (uint32_t) c[116] << 16;
                        d->type = c[119];
                        d->value.v64 = (int64_t) unaligned_load_u64(c + 120, le);
                }
                fr->ctrdef.n_counters = n;
                fr->ctrdef.counters = reader->counters;
                return 0;
        }

        case CAPTURE_FRAME_CTRSET: {
                NEED(CAPTURE_CTRSET_SIZE);
                uint16_t n = unaligned_load_u16(f + 24, le);
                if ((size_t) n * CAPTURE_CTRSET_GROUP_SIZE > len - CAPTURE_CTRSET_SIZE)
                        return BAD("%u value groups need %zu bytes, the frame has %zu", n,
                                   (size_t) n * CAPTURE_CTRSET_GROUP_SIZE, len - CAPTURE_CTRSET_SIZE);
                if (GROW_ARRAY(reader->values, reader->values_alloc, n ? (size_t) n * 8 : 1, 64) < 0)
                        return -ENOMEM;
                uint32_t k = 0;
                for (uint16_t g = 0; g < n; g++) {
                        const uint8_t *grp = f + CAPTURE_CTRSET_SIZE + (size_t) CAPTURE_CTRSET_GROUP_SIZE * g;
                        for (int i = 0; i < 8; i++) {
                                uint32_t id = unaligned_load_u32(grp + 4 * i, le);
                                if (id == 0)
                                        continue;
                                reader->values[k].id = id;
                                reader->values[k].value.v64 = (int64_t) unaligned_load_u64(grp + 32 + 8 * i, le);
                                k++;
                        }
                }
                fr->ctrset.n_groups = n;
                fr->ctrset.n_values = k;
                fr->ctrset.values = reader->values;
                return 0;
        }

        case CAPTURE_FRAME_MARK:
                NEED(CAPTURE_MARK_SIZE);
                fr->mark.duration = (int64_t) unaligned_load_u64(f + 24, le);
                unaligned_load_fixed_string(fr->mark.group, f + 32, CAPTURE_MARK_GROUP_LEN);
                unaligned_load_fixed_string(fr->mark.name, f + 56, CAPTURE_MARK_NAME_LEN);
                /* Sysprof writes marks whose message is empty without room for
                 * a terminator only when the frame is exactly 96 bytes. */
                fr->mark.message = len == CAPTURE_MARK_SIZE ? "" : frame_string(f, CAPTURE_MARK_SIZE, len);
                if (!fr->mark.message)
                        return BAD("message has no terminator");
                return 0;

        case CAPTURE_FRAME_METADATA:
                NEED(CAPTURE_METADATA_SIZE);
                unaligned_load_fixed_string(fr->metadata.id, f + 24, CAPTURE_METADATA_ID_LEN);
                fr->metadata.metadata = len == CAPTURE_METADATA_SIZE ? "" : frame_string(f, CAPTURE_METADATA_SIZE, len);
                if (!fr->metadata.metadata)
                        return BAD("metadata has no terminator");
                return 0;

        case CAPTURE_FRAME_LOG:
                NEED(CAPTURE_LOG_SIZE);
                fr->log.severity = unaligned_load_u16(f + 24, le);
                unaligned_load_fixed_string(fr->log.domain, f + 32, CAPTURE_LOG_DOMAIN_LEN);
                fr->log.message = len == CAPTURE_LOG_SIZE ? "" : frame_string(f, CAPTURE_LOG_SIZE, len);
                if (!fr->log.message)
                        return BAD("message has no terminator");
                return 0;

        case CAPTURE_FRAME_FILE_CHUNK: {
                NEED(CAPTURE_FILE_CHUNK_SIZE);
                uint32_t v = unaligned_load_u32(f + 24, le);
                fr->file_chunk.is_last = le ? (v & 1) : (v >> 31);
                fr->file_chunk.len = le ? (uint16_t) (v >> 16) : (uint16_t) (v & 0xffff);
                unaligned_load_fixed_string(fr->file_chunk.path, f + 28, CAPTURE_FILE_PATH_LEN);
                if (fr->file_chunk.len > len - CAPTURE_FILE_CHUNK_SIZE)
                        return BAD("chunk of %u bytes, the frame holds %zu", fr->file_chunk.len,
                                   len - CAPTURE_FILE_CHUNK_SIZE);
                fr->file_chunk.data = f + CAPTURE_FILE_CHUNK_SIZE;
                return 0;
        }

        case CAPTURE_FRAME_OVERLAY: {
                NEED(CAPTURE_OVERLAY_SIZE);
                fr->overlay.layer = f[24];
                size_t sl = unaligned_load_u16(f + 28, le), dl = unaligned_load_u16(f + 30, le);
                if (sl + 1 + dl + 1 > len - CAPTURE_OVERLAY_SIZE)
                        return BAD("paths of %zu and %zu bytes do not fit", sl, dl);
                const uint8_t *s = f + CAPTURE_OVERLAY_SIZE;
                if (s[sl] != 0 || s[sl + 1 + dl] != 0 || memchr(s, 0, sl) || memchr(s + sl + 1, 0, dl))
                        return BAD("paths are not terminated where their lengths say");
                fr->overlay.src = (const char *) s;
                fr->overlay.dst = (const char *) s + sl + 1;
                return 0;
        }
        }
        return -EINVAL; /* not reached: the caller filters unknown types */
}

int capture_reader_next(CaptureReader *reader, CaptureFrame *fr) {
        for (;;) {
                if (reader->pos == reader->size)
                        return 0;
                size_t left = reader->size - reader->pos;
                if (left < CAPTURE_FRAME_HEADER_SIZE)
                        return reader_fail(reader, -EBADMSG, "offset %zu: truncated frame header (%zu of %d bytes)",
                                           reader->pos, left, CAPTURE_FRAME_HEADER_SIZE);
                const uint8_t *f = reader->data + reader->pos;
                size_t len = unaligned_load_u16(f, reader->le);
                if (len < CAPTURE_FRAME_HEADER_SIZE)
                        return reader_fail(reader, -EBADMSG,
                                           "offset %zu: frame length %zu is shorter than a frame header", reader->pos,
                                           len);
                if (len > left)
                        return reader_fail(
                                reader, -EBADMSG,
                                "offset %zu: frame length %zu runs past the end of the file (%zu bytes left)",
                                reader->pos, len, left);

                uint8_t type = f[16];
                if (!capture_frame_type_to_string(type)) {
                        reader->skipped++;
                        reader->pos += len;
                        continue;
                }

                memset(fr, 0, sizeof(*fr));
                fr->offset = reader->pos;
                fr->len = (uint16_t) len;
                fr->type = type;
                fr->cpu = (int16_t) unaligned_load_u16(f + 2, reader->le);
                fr->pid = (int32_t) unaligned_load_u32(f + 4, reader->le);
                fr->time = (int64_t) unaligned_load_u64(f + 8, reader->le);
                int r = decode_payload(reader, f, len, fr);
                if (r < 0)
                        return r;
                reader->pos += len;
                return 1;
        }
}

int capture_reader_read_file_nth(CaptureReader *reader, const char *path, size_t index, uint64_t max_bytes,
                                 uint8_t **ret_data, size_t *ret_len) {
        size_t saved = reader->pos;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len = 0, seen = 0;
        bool found = false;
        CaptureFrame fr;
        int r;

        reader->pos = CAPTURE_FILE_HEADER_SIZE;
        while ((r = capture_reader_next(reader, &fr)) > 0) {
                if (fr.type != CAPTURE_FRAME_FILE_CHUNK || strcmp(fr.file_chunk.path, path) != 0)
                        continue;
                if (seen < index) { /* an earlier instance: skipped up to its last chunk */
                        if (fr.file_chunk.is_last)
                                seen++;
                        continue;
                }
                found = true;
                if (len + fr.file_chunk.len > max_bytes) {
                        r = -EFBIG;
                        break;
                }
                uint8_t *q = realloc(buf, len + fr.file_chunk.len + 1);
                if (!q) {
                        r = -ENOMEM;
                        break;
                }
                buf = q;
                memcpy(buf + len, fr.file_chunk.data, fr.file_chunk.len);
                len += fr.file_chunk.len;
                if (fr.file_chunk.is_last)
                        break;
        }
        reader->pos = saved;
        if (r < 0)
                return r;
        if (!found)
                return -ENOENT;
        if (!buf && !(buf = malloc(1)))
                return -ENOMEM;
        buf[len] = 0;
        *ret_data = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int capture_reader_read_file(CaptureReader *reader, const char *path, uint64_t max_bytes, uint8_t **ret_data,
                             size_t *ret_len) {
        return capture_reader_read_file_nth(reader, path, 0, max_bytes, ret_data, ret_len);
}

int capture_reader_decode_frame(CaptureReader *reader, const void *data, size_t size, CaptureFrame *fr) {
        const uint8_t *f = data;
        memset(fr, 0, sizeof(*fr));
        if (size < CAPTURE_FRAME_HEADER_SIZE)
                return reader_fail(reader, -EBADMSG, "offset 0: truncated frame header (%zu of %d bytes)", size,
                                   CAPTURE_FRAME_HEADER_SIZE);
        size_t len = unaligned_load_u16(f, reader->le);
        if (len < CAPTURE_FRAME_HEADER_SIZE)
                return reader_fail(reader, -EBADMSG, "offset 0: frame length %zu is shorter than a frame header", len);
        if (len > size)
                return reader_fail(reader, -EBADMSG, "offset 0: frame length %zu runs past the %zu bytes available",
                                   len, size);
        fr->len = (uint16_t) len;
        fr->type = f[16];
        fr->cpu = (int16_t) unaligned_load_u16(f + 2, reader->le);
        fr->pid = (int32_t) unaligned_load_u32(f + 4, reader->le);
        fr->time = (int64_t) unaligned_load_u64(f + 8, reader->le);
        if (!capture_frame_type_to_string(fr->type))
                return 0;

        /* decode_payload() names reader->pos in its messages: make it 0 here. */
        size_t saved = reader->pos;
        reader->pos = 0;
        int r = decode_payload(reader, f, len, fr);
        reader->pos = saved;
        return r < 0 ? r : 1;
}
