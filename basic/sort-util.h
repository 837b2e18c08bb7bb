/* sort-util.h: searching sorted arrays. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Index of the first element of array (n elements of size bytes, sorted by
 * the uint64_t at offset) whose key is above key; n when none is. */
static inline size_t bsearch_first_above(const void *array, size_t n, size_t size, size_t offset, uint64_t key) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (*(const uint64_t *) ((const uint8_t *) array + mid * size + offset) <= key)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* FIRST_ABOVE(maps, n_maps, end, addr): typed bsearch_first_above(). */
#define FIRST_ABOVE(array, n, member, key) \
        bsearch_first_above((array), (n), sizeof(*(array)), offsetof(__typeof__(*(array)), member), (key))
