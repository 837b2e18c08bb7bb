/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-protocol.c: bounds-checked encoding, sealed-memfd transport and
 * SCM_RIGHTS framing shared by periscope-helper and its client. */
#include "helper-protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"

void helper_writer_init(HelperWriter *w, size_t limit) {
        *w = (HelperWriter) { .limit = limit };
}

void helper_writer_done(HelperWriter *w) {
        free(w->data);
        *w = (HelperWriter) {};
}

static uint8_t *writer_extend(HelperWriter *w, size_t n) {
        if (w->failed)
                return NULL;
        if (n > w->limit || w->size > w->limit - n) {
                w->failed = true;
                return NULL;
        }
        if (w->size + n > w->allocated) {
                size_t a = w->allocated ? w->allocated : 256;
                while (a < w->size + n)
                        a *= 2;
                uint8_t *d = realloc(w->data, a);
                if (!d) {
                        w->failed = true;
                        return NULL;
                }
                w->data = d;
                w->allocated = a;
        }
        uint8_t *p = w->data + w->size;
        w->size += n;
        return p;
}

void helper_put_u8(HelperWriter *w, uint8_t v) {
        uint8_t *p = writer_extend(w, 1);
        if (p)
                *p = v;
}

void helper_put_u16(HelperWriter *w, uint16_t v) {
        uint8_t *p = writer_extend(w, 2);
        if (p)
                unaligned_store_u16(p, v);
}

void helper_put_u32(HelperWriter *w, uint32_t v) {
        uint8_t *p = writer_extend(w, 4);
        if (p)
                unaligned_store_u32(p, v);
}

void helper_put_u64(HelperWriter *w, uint64_t v) {
        uint8_t *p = writer_extend(w, 8);
        if (p)
                unaligned_store_u64(p, v);
}

void helper_put_bytes(HelperWriter *w, const void *src, size_t n) {
        if (n == 0)
                return;
        uint8_t *p = writer_extend(w, n);
        if (p)
                memcpy(p, src, n);
}

void helper_put_string(HelperWriter *w, const char *s, size_t max) {
        size_t n = s ? strlen(s) : 0;
        if (n > max) {
                n = max;
                /* do not cut a multi-byte character in half */
                while (n > 0 && ((uint8_t) s[n] & 0xc0) == 0x80)
                        n--;
        }
        helper_put_u32(w, (uint32_t) n);
        helper_put_bytes(w, s, n);
}

void helper_reader_init(HelperReader *r, const void *data, size_t size) {
        *r = (HelperReader) { .data = data, .size = size };
}

static const uint8_t *reader_take(HelperReader *r, size_t n) {
        if (r->failed || n > r->size - r->offset) {
                r->failed = true;
                return NULL;
        }
        const uint8_t *p = r->data + r->offset;
        r->offset += n;
        return p;
}

uint8_t helper_get_u8(HelperReader *r) {
        const uint8_t *p = reader_take(r, 1);
        return p ? *p : 0;
}

uint16_t helper_get_u16(HelperReader *r) {
        const uint8_t *p = reader_take(r, 2);
        return p ? unaligned_load_u16(p, true) : 0;
}

uint32_t helper_get_u32(HelperReader *r) {
        const uint8_t *p = reader_take(r, 4);
        return p ? unaligned_load_u32(p, true) : 0;
}

uint64_t helper_get_u64(HelperReader *r) {
        const uint8_t *p = reader_take(r, 8);
        return p ? unaligned_load_u64(p, true) : 0;
}

void helper_get_bytes(HelperReader *r, void *dst, size_t n) {
        const uint8_t *p = reader_take(r, n);
        if (p && n > 0)
                memcpy(dst, p, n);
}

char *helper_get_string(HelperReader *r, size_t max, bool utf8) {
        uint32_t n = helper_get_u32(r);
        if (r->failed)
                return NULL;
        if (n > max) {
                r->failed = true;
                return NULL;
        }
        const uint8_t *p = reader_take(r, n);
        if (!p)
                return NULL;
        if (memchr(p, 0, n) || (utf8 && !helper_utf8_valid((const char *) p, n))) {
                r->failed = true;
                return NULL;
        }
        char *s = malloc((size_t) n + 1);
        if (!s) {
                r->failed = true;
                return NULL;
        }
        memcpy(s, p, n);
        s[n] = '\0';
        return s;
}

bool helper_reader_finished(const HelperReader *r) {
        return !r->failed && r->offset == r->size;
}

bool helper_utf8_valid(const char *str, size_t n) {
        const uint8_t *s = (const uint8_t *) str;
        size_t i = 0;
        while (i < n) {
                uint8_t c = s[i];
                if (c < 0x80) {
                        i++;
                        continue;
                }
                size_t len;
                uint32_t cp, min;
                if ((c & 0xe0) == 0xc0) {
                        len = 2; cp = c & 0x1f; min = 0x80;
                } else if ((c & 0xf0) == 0xe0) {
                        len = 3; cp = c & 0x0f; min = 0x800;
                } else if ((c & 0xf8) == 0xf0) {
                        len = 4; cp = c & 0x07; min = 0x10000;
                } else
                        return false;
                if (len > n - i)
                        return false;
                for (size_t k = 1; k < len; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (s[i + k] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += len;
        }
        return true;
}

void helper_utf8_sanitize(char *s) {
        size_t n = strlen(s);
        for (size_t i = 0; i < n;) {
                size_t k = 1;
                while (k <= 4 && i + k <= n && !helper_utf8_valid(s + i, k))
                        k++;
                if (k > 4 || i + k > n) {
                        s[i++] = '?';
                        continue;
                }
                i += k;
        }
}

void helper_header_encode(uint8_t out[HELPER_HEADER_SIZE], const HelperMessageHeader *h) {
        unaligned_store_u32(out, h->magic);
        unaligned_store_u16(out + 4, h->type);
        unaligned_store_u16(out + 6, h->flags);
        unaligned_store_u32(out + 8, h->request_id);
        unaligned_store_u32(out + 12, h->payload_size);
}

int helper_header_decode(const uint8_t *in, size_t n, HelperMessageHeader *h) {
        if (n < HELPER_HEADER_SIZE)
                return -EBADMSG;
        h->magic = unaligned_load_u32(in, true);
        h->type = unaligned_load_u16(in + 4, true);
        h->flags = unaligned_load_u16(in + 6, true);
        h->request_id = unaligned_load_u32(in + 8, true);
        h->payload_size = unaligned_load_u32(in + 12, true);
        if (h->magic != HELPER_PROTOCOL_MAGIC)
                return -EBADMSG;
        if (h->flags & ~(uint16_t) HELPER_FLAG_PAYLOAD_MEMFD)
                return -EBADMSG;
        if (h->payload_size > HELPER_MAX_PAYLOAD)
                return -EBADMSG;
        return 0;
}

static int payload_to_memfd(const void *payload, size_t size) {
        _cleanup_close_ int fd = memfd_create("periscope-helper-payload", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        const uint8_t *p = payload;
        size_t left = size;
        while (left > 0) {
                ssize_t k = write(fd, p, left);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                left -= (size_t) k;
        }
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
                return -errno;
        return TAKE_FD(fd);
}

static int send_datagram(int sock, const void *data, size_t size, const int *fds, size_t n_fds) {
        struct iovec iov = { .iov_base = (void *) data, .iov_len = size };
        union {
                struct cmsghdr align;
                uint8_t buf[CMSG_SPACE(sizeof(int) * HELPER_MAX_REQUEST_FDS)];
        } control = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (n_fds > HELPER_MAX_REQUEST_FDS)
                return -E2BIG;
        if (n_fds > 0) {
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        for (;;) {
                ssize_t k = sendmsg(sock, &mh, MSG_NOSIGNAL);
                if (k >= 0)
                        return (size_t) k == size ? 0 : -EMSGSIZE;
                if (errno != EINTR)
                        return -errno;
        }
}

int helper_send_message(int sock, uint16_t type, uint32_t request_id,
                        const void *payload, size_t payload_size,
                        const int *fds, size_t n_fds) {
        if (payload_size > HELPER_MAX_PAYLOAD)
                return -EMSGSIZE;
        HelperMessageHeader h = {
                .magic = HELPER_PROTOCOL_MAGIC,
                .type = type,
                .request_id = request_id,
                .payload_size = (uint32_t) payload_size,
        };
        if (payload_size > HELPER_MAX_INLINE_PAYLOAD) {
                if (n_fds > 0)
                        return -EINVAL; /* memfd payloads carry no other fds */
                _cleanup_close_ int memfd = payload_to_memfd(payload, payload_size);
                if (memfd < 0)
                        return memfd;
                h.flags = HELPER_FLAG_PAYLOAD_MEMFD;
                uint8_t buf[HELPER_HEADER_SIZE];
                helper_header_encode(buf, &h);
                return send_datagram(sock, buf, sizeof buf, &memfd, 1);
        }
        _cleanup_free_ uint8_t *buf = malloc(HELPER_HEADER_SIZE + payload_size);
        if (!buf)
                return -ENOMEM;
        helper_header_encode(buf, &h);
        if (payload_size > 0)
                memcpy(buf + HELPER_HEADER_SIZE, payload, payload_size);
        return send_datagram(sock, buf, HELPER_HEADER_SIZE + payload_size, fds, n_fds);
}

void helper_message_clear(HelperMessage *m) {
        free(m->payload);
        for (size_t i = 0; i < m->n_fds; i++)
                safe_close(m->fds[i]);
        *m = (HelperMessage) {};
}

static int read_sealed_memfd(int fd, size_t size, uint8_t **ret) {
        int seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0)
                return -EBADMSG; /* not a memfd */
        const int need = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
        if ((seals & need) != need)
                return -EBADMSG;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t) st.st_size != size)
                return -EBADMSG;
        _cleanup_free_ uint8_t *buf = malloc(size ? size : 1);
        if (!buf)
                return -ENOMEM;
        size_t done = 0;
        while (done < size) {
                ssize_t k = pread(fd, buf + done, size - done, (off_t) done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EBADMSG;
                done += (size_t) k;
        }
        *ret = TAKE_PTR(buf);
        return 0;
}

int helper_receive_message(int sock, size_t max_fds, HelperMessage *ret) {
        enum { MAX_PASSED = 8 };
        size_t bufsize = HELPER_HEADER_SIZE + HELPER_MAX_INLINE_PAYLOAD;
        _cleanup_free_ uint8_t *buf = malloc(bufsize);
        if (!buf)
                return -ENOMEM;
        union {
                struct cmsghdr align;
                uint8_t buf[CMSG_SPACE(sizeof(int) * MAX_PASSED)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = bufsize };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1,
                .msg_control = control.buf, .msg_controllen = sizeof control.buf,
        };
        ssize_t k;
        do
                k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;

        HelperMessage m = {};
        size_t n_extra = 0;
        int r = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                        r = -EBADMSG;
                        continue;
                }
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                int fds[MAX_PASSED];
                if (n > MAX_PASSED)
                        n = MAX_PASSED;
                memcpy(fds, CMSG_DATA(c), n * sizeof(int));
                for (size_t i = 0; i < n; i++) {
                        if (m.n_fds < HELPER_MAX_REQUEST_FDS)
                                m.fds[m.n_fds++] = fds[i];
                        else {
                                safe_close(fds[i]);
                                n_extra++;
                        }
                }
        }
        if (n_extra > 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
                r = -EBADMSG;
        if (r == 0 && k == 0 && mh.msg_controllen == 0) {
                helper_message_clear(&m);
                return -ECONNRESET; /* peer closed */
        }
        if (r == 0)
                r = helper_header_decode(buf, (size_t) k, &m.header);
        if (r < 0) {
                helper_message_clear(&m);
                return r;
        }
        size_t inline_size = (size_t) k - HELPER_HEADER_SIZE;
        if (m.header.flags & HELPER_FLAG_PAYLOAD_MEMFD) {
                if (inline_size != 0 || m.n_fds != 1) {
                        helper_message_clear(&m);
                        return -EBADMSG;
                }
                r = read_sealed_memfd(m.fds[0], m.header.payload_size, &m.payload);
                safe_close(m.fds[0]);
                m.n_fds = 0;
                if (r < 0) {
                        helper_message_clear(&m);
                        return r;
                }
        } else {
                if (inline_size != m.header.payload_size || m.n_fds > max_fds) {
                        helper_message_clear(&m);
                        return -EBADMSG;
                }
                m.payload = malloc(inline_size ? inline_size : 1);
                if (!m.payload) {
                        helper_message_clear(&m);
                        return -ENOMEM;
                }
                memcpy(m.payload, buf + HELPER_HEADER_SIZE, inline_size);
        }
        m.payload_size = m.header.payload_size;
        *ret = m;
        return 0;
}

uint32_t helper_crc32(uint32_t crc, const void *buf, size_t n) {
        uint32_t table[256];
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
                table[i] = c;
        }
        const uint8_t *p = buf;
        crc = ~crc;
        while (n--)
                crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
        return ~crc;
}
