/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unaligned.h: endian-explicit, alignment-free loads and stores of the
 * little-endian integers in captures and helper messages. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t unaligned_load_u16(const uint8_t *p, bool le) {
        return le ? (uint16_t) (p[0] | p[1] << 8) : (uint16_t) (p[1] | p[0] << 8);
}

static inline uint32_t unaligned_load_u32(const uint8_t *p, bool le) {
        if (le)
                return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
        return (uint32_t) p[3] | (uint32_t) p[2] << 8 | (uint32_t) p[1] << 16 | (uint32_t) p[0] << 24;
}

static inline uint64_t unaligned_load_u64(const uint8_t *p, bool le) {
        uint64_t lo = unaligned_load_u32(p + (le ? 0 : 4), le);
        uint64_t hi = unaligned_load_u32(p + (le ? 4 : 0), le);
        return hi << 32 | lo;
}

static inline void unaligned_store_u16(uint8_t *p, uint16_t v) {
        p[0] = v & 0xff;
        p[1] = v >> 8;
}

static inline void unaligned_store_u32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (v >> (8 * i)) & 0xff;
}

static inline void unaligned_store_u64(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (v >> (8 * i)) & 0xff;
}

/* Copies a fixed-size, possibly unterminated field into dst[n+1]. */
static inline void unaligned_load_fixed_string(char *dst, const uint8_t *src, size_t n) {
        size_t l = strnlen((const char *) src, n);
        memcpy(dst, src, l);
        dst[l] = '\0';
}
