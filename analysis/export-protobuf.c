/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-protobuf.c: protocol buffer wire format (varint = type 0,
 * length-delimited = type 2). */
#include "export-protobuf.h"

#define WIRE_VARINT 0u
#define WIRE_LEN 2u

static void put_varint(GByteArray *b, uint64_t v) {
        guint8 buf[10];
        guint n = 0;
        do {
                buf[n] = (guint8) (v & 0x7f);
                v >>= 7;
                if (v)
                        buf[n] |= 0x80;
                n++;
        } while (v);
        g_byte_array_append(b, buf, n);
}

static void put_key(GByteArray *b, uint32_t field, uint32_t wire) {
        put_varint(b, ((uint64_t) field << 3) | wire);
}

void pb_add_varint(GByteArray *b, uint32_t field, uint64_t v) {
        if (v == 0)
                return;
        put_key(b, field, WIRE_VARINT);
        put_varint(b, v);
}

void pb_add_bytes(GByteArray *b, uint32_t field, const void *data, size_t len) {
        put_key(b, field, WIRE_LEN);
        put_varint(b, len);
        if (len)
                g_byte_array_append(b, data, (guint) len);
}

void pb_add_packed(GByteArray *b, uint32_t field, const uint64_t *v, size_t n) {
        if (n == 0)
                return;
        g_autoptr(GByteArray) body = g_byte_array_new();
        for (size_t i = 0; i < n; i++)
                put_varint(body, v[i]);
        pb_add_bytes(b, field, body->data, body->len);
}
