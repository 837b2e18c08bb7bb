/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-protobuf.h: the few protocol buffer encodings the pprof export
 * needs (varints, length-delimited fields, packed repeated integers),
 * appended to a GByteArray. Fields equal to their default (0, "") are left
 * out, as proto3 encoders do. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* A varint field (int64, uint64, bool); skipped when 0. */
void pb_add_varint(GByteArray *b, uint32_t field, uint64_t v);

/* An int64 field: negative values as 10-byte varints; skipped when 0. */
static inline void pb_add_int64(GByteArray *b, uint32_t field, int64_t v) {
        pb_add_varint(b, field, (uint64_t) v);
}

/* A length-delimited field (string, bytes, embedded message), always written. */
void pb_add_bytes(GByteArray *b, uint32_t field, const void *data, size_t len);

/* An embedded message: msg's bytes as a length-delimited field. */
static inline void pb_add_message(GByteArray *b, uint32_t field, const GByteArray *msg) {
        pb_add_bytes(b, field, msg->data, msg->len);
}

/* A packed repeated varint field; skipped when n is 0. */
void pb_add_packed(GByteArray *b, uint32_t field, const uint64_t *v, size_t n);
