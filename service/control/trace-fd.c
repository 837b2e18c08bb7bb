/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-fd.c: hands out trace memfds and merges what programs wrote into
 * them, trusting nothing (trace-fd.h). */
#include "trace-fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"

#define LOG_WARNING_SEVERITY 16 /* G_LOG_LEVEL_WARNING, as Sysprof shows it */
#define LOG_DOMAIN "periscope"

struct TraceFds {
        int fds[TRACE_MAX_FDS];
        size_t n_fds;
        bool merged;
        uint8_t last_id_space;    /* counter id spaces given to writers so far (frame-copy.h) */
        TraceFdStats stats;
};

/* A frame that passed, in the private copy of one trace fd. */
typedef struct TraceEntry {
        int64_t time;
        uint32_t offset;
        uint32_t seq;     /* position in the file: equal times keep their order */
        bool little_endian;
        uint8_t id_space; /* of the writer whose header came last before it */
} TraceEntry;

/* One trace fd being read. */
typedef struct TraceFile {
        TraceFds *owner;
        const TraceMerge *merge;
        size_t index;             /* among the recording's trace fds, from 1 */
        uint8_t *data;            /* private copy */
        size_t size;
        uint64_t file_size;       /* what the program wrote, possibly more than was read */
        CaptureReader *decoders[2]; /* [little_endian] */
        TraceEntry *entries;
        size_t n_entries, n_allocated;
        uint8_t id_space;         /* of the current writer */
        uint64_t refused, skipped;
        char reason[256];         /* the first refusal, for the LOG frame */
        int cancelled;            /* what m->yield returned when it said stop */
} TraceFile;

/* Frames between two calls of m->yield, and bytes read between two. */
#define TRACE_SLICE_FRAMES 256
#define TRACE_SLICE_BYTES (1u << 20)

/* Lets the caller's event loop run (TraceMerge.yield); negative: stop. */
static int trace_yield(TraceFile *tf) {
        if (tf->cancelled < 0)
                return tf->cancelled;
        if (tf->merge->yield) {
                int r = tf->merge->yield(tf->merge->yield_userdata);
                if (r < 0)
                        tf->cancelled = r;
        }
        return tf->cancelled;
}

static void trace_sort_yield(void *userdata) {
        (void) trace_yield(userdata);
}

int trace_fds_new(TraceFds **ret) {
        TraceFds *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

TraceFds *trace_fds_free(TraceFds *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_fds; i++)
                safe_close(t->fds[i]);
        free(t);
        return NULL;
}

int trace_fds_open(TraceFds *t, int *ret_fd) {
        if (t->merged)
                return -ESTALE;
        if (t->n_fds >= TRACE_MAX_FDS)
                return -EMFILE;
        _cleanup_close_ int fd = memfd_create("periscope-trace", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        t->fds[t->n_fds++] = TAKE_FD(fd);
        t->stats.fds++;
        *ret_fd = copy;
        return 0;
}

const TraceFdStats *trace_fds_get_stats(const TraceFds *t) {
        return &t->stats;
}

__attribute__((format(printf, 2, 3))) static void trace_refuse(TraceFile *tf, const char *fmt, ...) {
        tf->refused++;
        if (tf->reason[0])
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(tf->reason, sizeof(tf->reason), fmt, ap);
        va_end(ap);
}

/* Copies what the program wrote (at most TRACE_MAX_BYTES) with pread: the
 * file may shrink or change meanwhile, and is never mapped. */
static int trace_file_read(TraceFile *tf, int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        tf->file_size = st.st_size > 0 ? (uint64_t) st.st_size : 0;
        size_t want = tf->file_size > TRACE_MAX_BYTES ? TRACE_MAX_BYTES : (size_t) tf->file_size;
        tf->data = malloc(want > 0 ? want : 1);
        if (!tf->data)
                return -ENOMEM;
        while (tf->size < want) {
                int r = trace_yield(tf);
                if (r < 0)
                        return r;
                size_t chunk = want - tf->size < TRACE_SLICE_BYTES ? want - tf->size : TRACE_SLICE_BYTES;
                ssize_t k = pread(fd, tf->data + tf->size, chunk, (off_t) tf->size);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break; /* truncated meanwhile */
                tf->size += (size_t) k;
        }
        return 0;
}

static bool is_file_header(const uint8_t *p, size_t avail) {
        return avail >= 4 && unaligned_load_u32(p, true) == CAPTURE_MAGIC;
}

static bool all_zero(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i])
                        return false;
        return true;
}

static int trace_file_keep(TraceFile *tf, const CaptureFrame *f, size_t offset, bool le) {
        if (tf->n_entries >= TRACE_MAX_FRAMES) {
                trace_refuse(tf, "more than %u frames", TRACE_MAX_FRAMES);
                return 0;
        }
        if (tf->n_entries == tf->n_allocated) {
                size_t n = tf->n_allocated ? tf->n_allocated * 2 : 256;
                TraceEntry *e = reallocarray(tf->entries, n, sizeof(*e));
                if (!e)
                        return -ENOMEM;
                tf->entries = e;
                tf->n_allocated = n;
        }
        tf->entries[tf->n_entries] = (TraceEntry) {
                .time = f->time, .offset = (uint32_t) offset, .seq = (uint32_t) tf->n_entries, .little_endian = le,
                .id_space = tf->id_space,
        };
        tf->n_entries++;
        return 0;
}

/* Checks one decoded frame against the recording; keeps it or refuses it. */
static int trace_file_check(TraceFile *tf, const CaptureFrame *f, size_t offset, bool le) {
        const TraceMerge *m = tf->merge;
        if (!frame_copier_copies_type(f->type)) {
                tf->skipped++;
                return 0;
        }
        if (!m->pid_known(f->pid, m->userdata)) {
                trace_refuse(tf, "%s frame at offset %zu has pid %d, not a process of this recording",
                             capture_frame_type_to_string(f->type), offset, (int) f->pid);
                return 0;
        }
        if (f->time < m->start_time || f->time > m->end_time) {
                trace_refuse(tf, "%s frame at offset %zu has time %lld, outside the recording (%lld..%lld)",
                             capture_frame_type_to_string(f->type), offset, (long long) f->time,
                             (long long) m->start_time, (long long) m->end_time);
                return 0;
        }
        return trace_file_keep(tf, f, offset, le);
}

/* Walks the copy: file headers (a second writer on the same fd starts
 * another) and frames, up to the first byte that cannot be a frame. */
static int trace_file_scan(TraceFile *tf) {
        size_t off = 0;
        int le = -1; /* byte order of the current header; -1 before the first */
        for (size_t n = 1; off < tf->size; n++) {
                if (n % TRACE_SLICE_FRAMES == 0 && trace_yield(tf) < 0)
                        return tf->cancelled;
                const uint8_t *p = tf->data + off;
                size_t avail = tf->size - off;
                if (is_file_header(p, avail)) {
                        /* Never a frame: its length would be 0x975E, not a multiple of 8. */
                        CaptureReader *h = NULL;
                        _cleanup_free_ char *why = NULL;
                        int r = avail >= CAPTURE_FILE_HEADER_SIZE
                                        ? capture_reader_open_memory(p, CAPTURE_FILE_HEADER_SIZE, &h, &why)
                                        : -EBADMSG;
                        if (r < 0) {
                                trace_refuse(tf, "bad capture header at offset %zu%s%s", off, why ? ": " : "",
                                             why ? why : "");
                                break;
                        }
                        le = capture_reader_get_header(h)->little_endian;
                        capture_reader_free(h);
                        /* a new writer: counters of its own (the last
                         * space is shared once 255 are used) */
                        if (tf->owner->last_id_space < UINT8_MAX)
                                tf->owner->last_id_space++;
                        tf->id_space = tf->owner->last_id_space;
                        off += CAPTURE_FILE_HEADER_SIZE;
                        continue;
                }
                if (off == 0 && avail >= CAPTURE_FILE_HEADER_SIZE && all_zero(p, 4)) {
                        /* The first header, wiped by a second writer's
                         * truncation (see below); the first writer still
                         * updates its end time in it. */
                        off = CAPTURE_FILE_HEADER_SIZE;
                        continue;
                }
                size_t word = avail < CAPTURE_ALIGN ? avail : CAPTURE_ALIGN;
                if (all_zero(p, word)) {
                        /* A hole: a second writer on the fd truncated it
                         * (Sysprof's writer does at its start) while the
                         * file offset they share went on; or a writer that
                         * preallocates. No frame starts with a zero length. */
                        off += word;
                        continue;
                }
                if (le < 0) {
                        trace_refuse(tf, "it does not start with a capture header");
                        break;
                }
                if (avail < CAPTURE_FRAME_HEADER_SIZE) {
                        trace_refuse(tf, "%zu bytes at offset %zu are not a frame", avail, off);
                        break;
                }
                size_t len = unaligned_load_u16(p, le);
                if (len < CAPTURE_FRAME_HEADER_SIZE || len % CAPTURE_ALIGN != 0 || len > avail) {
                        trace_refuse(tf, "frame length %zu at offset %zu is not a multiple of 8 between %d and the "
                                     "%zu bytes left", len, off, CAPTURE_FRAME_HEADER_SIZE, avail);
                        break;
                }
                CaptureFrame f;
                int r = capture_reader_decode_frame(tf->decoders[le], p, len, &f);
                if (r < 0)
                        trace_refuse(tf, "malformed frame at offset %zu: %s", off,
                                     capture_reader_error(tf->decoders[le]) ?: strerror(-r));
                else if (r == 0)
                        tf->skipped++; /* a type Sysprof 3.46 cannot read */
                else if ((r = trace_file_check(tf, &f, off, le)) < 0)
                        return r;
                off += len;
        }
        if (tf->file_size > tf->size && tf->file_size > TRACE_MAX_BYTES)
                trace_refuse(tf, "%llu bytes written, only the first %u read",
                             (unsigned long long) tf->file_size, TRACE_MAX_BYTES);
        return 0;
}

static int entry_compare(const void *a, const void *b) {
        const TraceEntry *x = a, *y = b;
        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Appends the kept frames in time order. */
static int trace_file_copy(TraceFile *tf, FrameCopier *copier, TraceFdStats *stats) {
        if (tf->n_entries == 0)
                return 0;
        /* entry_compare() orders every pair (seq is unique): a stable order */
        sort_in_slices(tf->entries, tf->n_entries, sizeof(TraceEntry), entry_compare,
                       tf->merge->yield ? trace_sort_yield : NULL, tf);
        if (tf->cancelled < 0)
                return tf->cancelled; /* during the sort */
        for (size_t i = 0; i < tf->n_entries; i++) {
                if ((i + 1) % TRACE_SLICE_FRAMES == 0 && trace_yield(tf) < 0)
                        return tf->cancelled;
                const TraceEntry *e = &tf->entries[i];
                CaptureFrame f;
                /* the copy is private: it decodes as it did in the scan */
                int r = capture_reader_decode_frame(tf->decoders[e->little_endian], tf->data + e->offset,
                                                    tf->size - e->offset, &f);
                if (r <= 0)
                        return -EIO;
                frame_copier_set_id_space(copier, e->id_space);
                r = frame_copier_copy(copier, &f);
                if (r < 0)
                        return r;
                stats->frames_copied++;
        }
        return 0;
}

static void trace_file_done(TraceFile *tf) {
        free(tf->data);
        free(tf->entries);
        capture_reader_free(tf->decoders[0]);
        capture_reader_free(tf->decoders[1]);
}

/* Reads, checks and copies one trace fd; *ret_cancelled: what m->yield
 * returned if it said stop. */
static int trace_merge_one(TraceFds *t, const TraceMerge *m, FrameCopier *copier, size_t index, int fd,
                           int *ret_cancelled) {
        uint8_t headers[2][CAPTURE_FILE_HEADER_SIZE];
        TraceFile tf = { .owner = t, .merge = m, .index = index };
        int r = frame_decoder_new(false, headers[0], &tf.decoders[0]);
        if (r >= 0)
                r = frame_decoder_new(true, headers[1], &tf.decoders[1]);
        if (r >= 0)
                r = trace_file_read(&tf, fd);
        if (r >= 0)
                r = trace_file_scan(&tf);
        if (r >= 0)
                r = trace_file_copy(&tf, copier, &t->stats);
        t->stats.bytes += tf.size;
        t->stats.frames_refused += tf.refused;
        t->stats.frames_skipped += tf.skipped;
        if (r >= 0 && tf.refused > 0) {
                char msg[512];
                snprintf(msg, sizeof(msg), "trace fd %zu: %llu frame%s refused (first: %s)", index,
                         (unsigned long long) tf.refused, tf.refused == 1 ? "" : "s", tf.reason);
                r = capture_writer_add_log(m->writer, m->end_time, -1, -1, LOG_WARNING_SEVERITY, LOG_DOMAIN, msg);
        }
        *ret_cancelled = tf.cancelled;
        trace_file_done(&tf);
        return r;
}

int trace_fds_merge(TraceFds *t, const TraceMerge *m) {
        if (t->merged)
                return 0;
        t->merged = true;
        _cleanup_(frame_copier_freep) FrameCopier *copier = NULL;
        int r = frame_copier_new(m->writer, m->ids, TRACE_MAX_COUNTERS, &copier);
        if (r < 0)
                return r;
        if (m->address_func)
                frame_copier_set_address_func(copier, m->address_func, m->userdata);
        int cancelled = 0;
        for (size_t i = 0; i < t->n_fds; i++) {
                if (cancelled == 0) {
                        r = trace_merge_one(t, m, copier, i + 1, t->fds[i], &cancelled);
                        if (r < 0 && cancelled == 0 && t->stats.write_error == 0)
                                t->stats.write_error = r;
                }
                t->fds[i] = safe_close(t->fds[i]);
        }
        t->n_fds = 0;
        return cancelled < 0 ? cancelled : t->stats.write_error;
}
