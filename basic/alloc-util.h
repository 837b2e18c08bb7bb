/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alloc-util.h: growing arrays without repeating the doubling dance. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes room for at least need elements of size bytes in *array, whose
 * capacity is *allocated: doubles it, starting at initial. Returns 0 or
 * -ENOMEM (then *array and *allocated are unchanged). */
static inline int grow_array(void **array, size_t *allocated, size_t need, size_t size, size_t initial) {
        if (need <= *allocated)
                return 0;
        size_t n = *allocated ? *allocated : initial;
        while (n < need) {
                if (n > SIZE_MAX / 2)
                        return -ENOMEM;
                n *= 2;
        }
        void *p = reallocarray(*array, n, size);
        if (!p)
                return -ENOMEM;
        *array = p;
        *allocated = n;
        return 0;
}

/* GROW_ARRAY(items, allocated, n_items + 1, 16): typed grow_array(). */
#define GROW_ARRAY(array, allocated, need, initial) \
        grow_array((void **) &(array), &(allocated), (need), sizeof(*(array)), (initial))
