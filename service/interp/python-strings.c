/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-strings.c: checked reads of a target's memory; CPython's str and
 * bytes objects read from it. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "python-frames.h"
#include "python-strings.h"

int py_memory_read(PyMemory *m, uint64_t addr, size_t align, void *buf, size_t n, const char *what, char **ret_why) {
        int r;

        if (addr == 0)
                return why_setf(ret_why, -EFAULT, "%s: null pointer", what);
        if (align > 1 && addr % align != 0)
                return why_setf(ret_why, -EFAULT, "%s at 0x%" PRIx64 " is not aligned to %zu", what, addr, align);
        if (addr >= PY_ADDRESS_END || n > PY_ADDRESS_END - addr)
                return why_setf(ret_why, -EFAULT, "%s at 0x%" PRIx64 " is beyond user space", what, addr);
        if (n == 0)
                return 0;
        m->reads++;
        r = m->read(m->userdata, addr, buf, n);
        if (r < 0)
                return why_setf(ret_why, r, "%s at 0x%" PRIx64 " (%zu bytes) cannot be read: %m", what, addr, n);
        return 0;
}

int py_memory_read_in(PyMemory *m, uint64_t addr, size_t offset, void *buf, size_t n, const char *what,
                      char **ret_why) {
        int r;

        r = py_memory_read(m, addr, 8, buf, 0, what, ret_why);
        if (r < 0)
                return r;
        if (offset + n > PY_ADDRESS_END - addr)
                return why_setf(ret_why, -EFAULT, "%s at 0x%" PRIx64 " is beyond user space", what, addr);
        if (n == 0)
                return 0;
        m->reads++;
        r = m->read(m->userdata, addr + offset, buf, n);
        if (r < 0)
                return why_setf(ret_why, r, "%s at 0x%" PRIx64 " cannot be read: %m", what, addr);
        return 0;
}

/* The state bits of PyASCIIObject, the same from 3.11 to 3.14: interned:2,
 * kind:3, compact:1, ascii:1, then ready (3.11) or statically_allocated. */
#define STATE_KIND(s) (((s) >> 2) & 7u)
#define STATE_COMPACT(s) (((s) >> 5) & 1u)
#define STATE_ASCII(s) (((s) >> 6) & 1u)

static size_t utf8_put(char *out, uint32_t c) {
        if (c >= 0xd800 && c <= 0xdfff)
                c = 0xfffd; /* a lone surrogate, which a str may hold */
        if (c < 0x80) {
                out[0] = (char) c;
                return 1;
        }
        if (c < 0x800) {
                out[0] = (char) (0xc0 | c >> 6);
                out[1] = (char) (0x80 | (c & 0x3f));
                return 2;
        }
        if (c < 0x10000) {
                out[0] = (char) (0xe0 | c >> 12);
                out[1] = (char) (0x80 | ((c >> 6) & 0x3f));
                out[2] = (char) (0x80 | (c & 0x3f));
                return 3;
        }
        out[0] = (char) (0xf0 | c >> 18);
        out[1] = (char) (0x80 | ((c >> 12) & 0x3f));
        out[2] = (char) (0x80 | ((c >> 6) & 0x3f));
        out[3] = (char) (0x80 | (c & 0x3f));
        return 4;
}

int py_read_str(PyMemory *m, const PyLayout *l, uint64_t addr, char **ret, char **ret_why) {
        uint8_t header[PY_LAYOUT_HEADER_MAX];
        uint8_t data[PY_STRING_MAX + 4];
        int r;

        /* The header to its end: the compact form's if the str is not ASCII. */
        r = py_memory_read(m, addr, 8, header, l->unicode_ascii_data, "str", ret_why);
        if (r < 0)
                return r;
        uint64_t length = unaligned_load_u64(header + l->unicode_length, true);
        uint32_t state = unaligned_load_u32(header + l->unicode_state, true);
        unsigned kind = STATE_KIND(state);
        bool ascii = STATE_ASCII(state);

        if (!STATE_COMPACT(state) || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
                return why_setf(ret_why, -EBADMSG, "str at 0x%" PRIx64 " is not a compact str (state 0x%08" PRIx32 ")",
                                addr, state);
        if (length > PY_STRING_MAX / kind)
                return why_setf(ret_why, -E2BIG, "str at 0x%" PRIx64 " has %" PRIu64 " characters, more than %u bytes",
                                addr, length, PY_STRING_MAX);

        size_t n = (size_t) length * kind;
        uint64_t at = addr + (ascii ? l->unicode_ascii_data : l->unicode_compact_data);
        /* The characters and the NUL after them. */
        r = py_memory_read(m, at, 1, data, n + kind, "str characters", ret_why);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < kind; i++)
                if (data[n + i] != 0)
                        return why_setf(ret_why, -EBADMSG, "str at 0x%" PRIx64 " does not end where its length says",
                                        addr);

        _cleanup_free_ char *s = malloc(length * 4 + 1);
        if (!s)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < length; i++) {
                uint32_t c = kind == 1   ? data[i]
                             : kind == 2 ? unaligned_load_u16(data + 2 * i, true)
                                         : unaligned_load_u32(data + 4 * i, true);
                if (ascii && c >= 0x80)
                        return why_setf(ret_why, -EBADMSG, "str at 0x%" PRIx64 " says ASCII but holds 0x%02" PRIx32,
                                        addr, c);
                if (c > 0x10ffff)
                        return why_setf(ret_why, -EBADMSG,
                                        "str at 0x%" PRIx64 " holds 0x%" PRIx32 ", which is no character", addr, c);
                if (c == 0)
                        c = 0xfffd; /* a NUL would end the name early */
                k += utf8_put(s + k, c);
        }
        s[k] = 0;
        *ret = TAKE_PTR(s);
        return 0;
}

int py_read_bytes(PyMemory *m, const PyLayout *l, uint64_t addr, size_t max, uint8_t **ret, size_t *ret_size,
                  char **ret_why) {
        uint8_t header[PY_LAYOUT_HEADER_MAX];
        int r;

        r = py_memory_read(m, addr, 8, header, l->bytes_data, "bytes", ret_why);
        if (r < 0)
                return r;
        uint64_t size = unaligned_load_u64(header + l->bytes_size, true);
        if (size > max)
                return why_setf(ret_why, -E2BIG, "bytes at 0x%" PRIx64 " has %" PRIu64 " bytes, more than %zu", addr,
                                size, max);

        _cleanup_free_ uint8_t *data = malloc(size + 1);
        if (!data)
                return -ENOMEM;
        r = py_memory_read(m, addr + l->bytes_data, 1, data, size + 1, "bytes data", ret_why);
        if (r < 0)
                return r;
        if (data[size] != 0)
                return why_setf(ret_why, -EBADMSG, "bytes at 0x%" PRIx64 " does not end where its size says", addr);
        *ret = TAKE_PTR(data);
        *ret_size = size;
        return 0;
}
