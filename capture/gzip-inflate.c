/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gzip-inflate.c: one gzip member inflated in two passes, the first only
 * counting, so a bomb costs time up to the bound and no memory. */
#include "gzip-inflate.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "basic.h"

__attribute__((format(printf, 3, 4))) static int inflate_fail(char **error, int err, const char *fmt, ...) {
        if (error) {
                va_list ap;
                va_start(ap, fmt);
                free(*error);
                if (vasprintf(error, fmt, ap) < 0)
                        *error = NULL;
                va_end(ap);
        }
        return err;
}

/* Inflates in[0, len): into out[0, out_size) when out is non-NULL, else
 * into a scratch buffer, only counting. Stops with -EFBIG past max_out. */
static int inflate_pass(const uint8_t *in, size_t len, size_t max_out, uint8_t *out, size_t out_size, size_t *ret_len,
                        char **error) {
        z_stream z = {};
        /* 16 + MAX_WBITS: the gzip wrapper only (header, CRC-32, ISIZE checked). */
        if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
                return -ENOMEM;
        uint8_t scratch[64 * 1024];
        size_t total = 0, in_left = len;
        int r = 0, zr = Z_OK;
        z.next_in = (Bytef *) in;
        while (zr != Z_STREAM_END) {
                if (z.avail_in == 0 && in_left > 0) {
                        z.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt) in_left;
                        in_left -= z.avail_in;
                }
                uint8_t *dst = out ? out + total : scratch;
                size_t room = out ? out_size - total : sizeof(scratch);
                if (room > UINT_MAX)
                        room = UINT_MAX;
                /* One byte more than the bound may take, to see it overflow. */
                if (total + room > max_out + 1)
                        room = max_out + 1 - total;
                z.next_out = dst;
                z.avail_out = (uInt) room;
                zr = inflate(&z, Z_NO_FLUSH);
                total += room - z.avail_out;
                if (total > max_out) {
                        r = inflate_fail(error, -EFBIG, "inflates to more than %zu bytes (a compression bomb?)",
                                         max_out);
                        break;
                }
                if (zr == Z_STREAM_END)
                        break;
                if (zr == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) {
                        r = inflate_fail(error, -EBADMSG, "gzip stream cut short after %zu bytes (%zu inflated)", len,
                                         total);
                        break;
                }
                if (zr == Z_MEM_ERROR) {
                        r = -ENOMEM;
                        break;
                }
                if (zr != Z_OK && zr != Z_BUF_ERROR) {
                        r = inflate_fail(error, -EBADMSG, "not a valid gzip stream at byte %zu: %s",
                                         len - in_left - z.avail_in, z.msg ? z.msg : "zlib error");
                        break;
                }
        }
        if (r == 0 && (z.avail_in > 0 || in_left > 0))
                r = inflate_fail(error, -EBADMSG, "%zu bytes after the end of the gzip stream",
                                 (size_t) z.avail_in + in_left);
        inflateEnd(&z);
        if (r < 0)
                return r;
        *ret_len = total;
        return 0;
}

int gzip_inflate(const uint8_t *in, size_t len, size_t max_out, uint8_t **ret, size_t *ret_len, char **error) {
        size_t n = 0;
        if (max_out >= SIZE_MAX - 1)
                return -EINVAL;
        int r = inflate_pass(in, len, max_out, NULL, 0, &n, error);
        if (r < 0)
                return r;
        _cleanup_free_ uint8_t *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        /* n + 1 bytes of room: a stream that inflated differently the
         * second time would show in the count. */
        size_t m = 0;
        r = inflate_pass(in, len, n, out, n + 1, &m, error);
        if (r < 0)
                return r;
        if (m != n)
                return inflate_fail(error, -EBADMSG, "gzip stream inflated to %zu bytes, then %zu", n, m);
        out[n] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = n;
        return 0;
}
