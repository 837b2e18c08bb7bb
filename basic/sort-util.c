/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sort-util.c: sorting in slices that an event loop can interleave with. */
#include "sort-util.h"

#include <stdlib.h>
#include <string.h>

/* Merges the sorted runs a[0..na) and b[0..nb) into out, yielding every
 * SORT_SLICE_ELEMENTS elements. */
static void merge_runs(const char *a, size_t na, const char *b, size_t nb, char *out, size_t size,
                       int (*cmp)(const void *, const void *), void (*yield)(void *), void *userdata,
                       size_t *since_yield) {
        while (na > 0 || nb > 0) {
                const char **from = nb == 0 || (na > 0 && cmp(a, b) <= 0) ? &a : &b;
                memcpy(out, *from, size);
                *from += size;
                if (from == &a)
                        na--;
                else
                        nb--;
                out += size;
                if (++*since_yield >= SORT_SLICE_ELEMENTS) {
                        *since_yield = 0;
                        yield(userdata);
                }
        }
}

void sort_in_slices(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                    void (*yield)(void *userdata), void *userdata) {
        if (n < 2)
                return;
        char *tmp = yield && n > SORT_SLICE_ELEMENTS ? malloc(n * size) : NULL;
        if (!tmp) {
                qsort(base, n, size, cmp);
                return;
        }
        char *src = base, *dst = tmp;
        for (size_t i = 0; i < n; i += SORT_SLICE_ELEMENTS) {
                size_t k = n - i < SORT_SLICE_ELEMENTS ? n - i : SORT_SLICE_ELEMENTS;
                qsort(src + i * size, k, size, cmp);
                yield(userdata);
        }
        size_t since_yield = 0;
        for (size_t width = SORT_SLICE_ELEMENTS; width < n; width *= 2) {
                for (size_t i = 0; i < n; i += 2 * width) {
                        size_t na = n - i < width ? n - i : width;
                        size_t nb = n - i - na < width ? n - i - na : width;
                        merge_runs(src + i * size, na, src + (i + na) * size, nb, dst + i * size, size, cmp, yield,
                                   userdata, &since_yield);
                }
                char *t = src;
                src = dst;
                dst = t;
        }
        if (src != base)
                for (size_t i = 0; i < n; i += SORT_SLICE_ELEMENTS) {
                        size_t k = n - i < SORT_SLICE_ELEMENTS ? n - i : SORT_SLICE_ELEMENTS;
                        memcpy((char *) base + i * size, src + i * size, k * size);
                        yield(userdata);
                }
        free(tmp);
}
