/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-linetable.c: the line of an instruction from a 3.11+ code
 * object's co_linetable (CPython's Objects/locations.md): entries of one
 * first byte (bit 7 set, a 4-bit code, the length in code units minus
 * one) and the code's varints, none of which has bit 7 set. */
#include <errno.h>

#include "python-frames.h"

enum {
        LOCATION_ONE_LINE0 = 10,
        LOCATION_ONE_LINE2 = 12,
        LOCATION_NO_COLUMNS = 13,
        LOCATION_LONG = 14,
        LOCATION_NONE = 15,
};

/* A signed varint (6 bits a byte, bit 6 to go on, the sign in bit 0 of
 * the value) at table[*i], advancing *i; -EBADMSG when the table ends or a
 * byte has bit 7 set inside it, or the value takes more than 32 bits. */
static int svarint(const uint8_t *table, size_t size, size_t *i, int64_t *ret) {
        uint64_t v = 0;
        unsigned shift = 0;

        for (;;) {
                if (*i >= size || (table[*i] & 0x80) || shift > 30)
                        return -EBADMSG;
                uint8_t b = table[(*i)++];
                v |= (uint64_t) (b & 63) << shift;
                shift += 6;
                if (!(b & 64))
                        break;
        }
        *ret = (v & 1) ? -(int64_t) (v >> 1) : (int64_t) (v >> 1);
        return 0;
}

int py_linetable_line(const uint8_t *table, size_t size, int firstlineno, int64_t addrq) {
        int64_t line = firstlineno, addr = 0;
        size_t i = 0;

        if (addrq < 0)
                return firstlineno;
        while (i < size) {
                uint8_t first = table[i++];
                if (!(first & 0x80))
                        return -EBADMSG;
                unsigned code = (first >> 3) & 15;
                int64_t delta = 0;

                if (code == LOCATION_LONG || code == LOCATION_NO_COLUMNS) {
                        if (svarint(table, size, &i, &delta) < 0)
                                return -EBADMSG;
                } else if (code >= LOCATION_ONE_LINE0 && code <= LOCATION_ONE_LINE2)
                        delta = code - LOCATION_ONE_LINE0;
                /* The rest of the entry (columns, end line) up to the next. */
                while (i < size && !(table[i] & 0x80))
                        i++;

                line += delta;
                if (line < -(INT64_C(1) << 40) || line > (INT64_C(1) << 40))
                        return -EBADMSG;
                addr += (int64_t) ((first & 7) + 1) * 2;
                if (addrq < addr) {
                        if (code == LOCATION_NONE || line <= 0 || line > INT32_MAX)
                                return 0;
                        return (int) line;
                }
        }
        return 0;
}
