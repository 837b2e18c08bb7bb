/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file-identities.c: the `periscope.file` METADATA frames. Text: lines
 * `dev=MAJ:MIN`, `inode=N`, optionally `size=N` and `mtime=SEC.NSEC`
 * (together), optionally `build_id=HEX`, then `path=` and the path up to the
 * end of the text. Read strictly, in that order. */
#include "file-identities.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

int capture_writer_add_file_identity(CaptureWriter *w, int64_t time, int cpu, int32_t pid,
                                     const CaptureFileIdentity *id) {
        if (!id->path || !id->path[0] || id->build_id_size > CAPTURE_FILE_IDENTITY_MAX_BUILD_ID ||
            id->mtime_nsec >= 1000000000u)
                return -EINVAL;
        char head[256 + 2 * CAPTURE_FILE_IDENTITY_MAX_BUILD_ID];
        int n = snprintf(head, sizeof(head), "dev=%u:%u\ninode=%llu\n", (unsigned) id->dev_major,
                         (unsigned) id->dev_minor, (unsigned long long) id->inode);
        if (id->has_stat)
                n += snprintf(head + n, sizeof(head) - (size_t) n, "size=%llu\nmtime=%lld.%09u\n",
                              (unsigned long long) id->size, (long long) id->mtime_sec, (unsigned) id->mtime_nsec);
        if (id->build_id_size > 0) {
                n += snprintf(head + n, sizeof(head) - (size_t) n, "build_id=");
                for (size_t i = 0; i < id->build_id_size; i++)
                        n += snprintf(head + n, sizeof(head) - (size_t) n, "%02x", id->build_id[i]);
                n += snprintf(head + n, sizeof(head) - (size_t) n, "\n");
        }
        n += snprintf(head + n, sizeof(head) - (size_t) n, "path=");
        size_t l = strlen(id->path);
        if (l > CAPTURE_FRAME_MAX)
                return -EINVAL;
        _cleanup_free_ char *text = malloc((size_t) n + l);
        if (!text)
                return -ENOMEM;
        memcpy(text, head, (size_t) n);
        memcpy(text + n, id->path, l);
        return capture_writer_add_metadata(w, time, cpu, pid, CAPTURE_FILE_IDENTITY_ID, text, (size_t) n + l);
}

/* "KEY=" at *t: the value's start, or NULL. */
static const char *field(const char *t, const char *key) {
        size_t k = strlen(key);
        return strncmp(t, key, k) == 0 && t[k] == '=' ? t + k + 1 : NULL;
}

/* A decimal u64 up to a newline; the text after it. */
static const char *parse_u64(const char *v, char stop, uint64_t *ret) {
        if (!v || *v < '0' || *v > '9')
                return NULL;
        char *end = NULL;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || *end != stop)
                return NULL;
        *ret = x;
        return end + 1;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int capture_frame_get_file_identity(const CaptureFrame *f, CaptureFileIdentity *ret) {
        if (f->type != CAPTURE_FRAME_METADATA || strcmp(f->metadata.id, CAPTURE_FILE_IDENTITY_ID) != 0)
                return 0;
        const char *t = f->metadata.metadata ? f->metadata.metadata : "";
        CaptureFileIdentity id = {};
        uint64_t maj, min, x;
        if (!(t = parse_u64(field(t, "dev"), ':', &maj)) || !(t = parse_u64(t, '\n', &min)) || maj > UINT32_MAX ||
            min > UINT32_MAX)
                return -EBADMSG;
        id.dev_major = (uint32_t) maj;
        id.dev_minor = (uint32_t) min;
        if (!(t = parse_u64(field(t, "inode"), '\n', &id.inode)))
                return -EBADMSG;
        if (field(t, "size")) {
                uint64_t sec, nsec;
                const char *m = NULL;
                if (!(t = parse_u64(field(t, "size"), '\n', &x)))
                        return -EBADMSG;
                m = field(t, "mtime");
                /* nine digits of nanoseconds, as written */
                if (!(t = parse_u64(m, '.', &sec)) || sec > INT64_MAX || strspn(t, "0123456789") != 9 ||
                    !(t = parse_u64(t, '\n', &nsec)))
                        return -EBADMSG;
                id.has_stat = true;
                id.size = x;
                id.mtime_sec = (int64_t) sec;
                id.mtime_nsec = (uint32_t) nsec;
        }
        const char *b = field(t, "build_id");
        if (b) {
                size_t n = strspn(b, "0123456789abcdef");
                if (n == 0 || n % 2 || n / 2 > CAPTURE_FILE_IDENTITY_MAX_BUILD_ID || b[n] != '\n')
                        return -EBADMSG;
                for (size_t i = 0; i < n / 2; i++)
                        id.build_id[i] = (uint8_t) (hex_digit(b[2 * i]) << 4 | hex_digit(b[2 * i + 1]));
                id.build_id_size = (uint8_t) (n / 2);
                t = b + n + 1;
        }
        const char *p = field(t, "path");
        if (!p || !p[0])
                return -EBADMSG;
        id.path = p;
        *ret = id;
        return 1;
}
