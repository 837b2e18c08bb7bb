/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

/* Sorts like qsort(), but in slices: between slices of about
 * SORT_SLICE_ELEMENTS elements of work it calls yield(userdata), so a
 * caller on an event loop can let other work run (a merge sort over
 * qsort()ed runs; plain qsort() when yield is NULL, the array is small, or
 * the merge buffer cannot be had). Not stable. */
void sort_in_slices(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                    void (*yield)(void *userdata), void *userdata);

#define SORT_SLICE_ELEMENTS 4096

/* Index of the first element of array (n elements of size bytes, sorted by
 * the int32_t at offset, a pid for example) whose key is key or above; n
 * when none is: where key is, or goes. */
static inline size_t bsearch_first_at_least_i32(const void *array, size_t n, size_t size, size_t offset, int32_t key) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (*(const int32_t *) ((const uint8_t *) array + mid * size + offset) < key)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}
