/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-ids.h: hands out the capture-wide counter ids (24 bits in the
 * file) of one recording, so the service's own counters and the counters
 * that profiled programs define through their control rings never collide. */
#pragma once

#include <stdint.h>

#define COUNTER_ID_MAX 0xffffffu

typedef struct CounterIdAllocator {
        uint32_t next; /* 0 means "start at 1" */
} CounterIdAllocator;

/* Reserves n consecutive ids and returns the first, or 0 when the 24-bit id
 * space is exhausted (the caller then leaves those counters out). */
static inline uint32_t counter_ids_allocate(CounterIdAllocator *a, uint32_t n) {
        if (a->next == 0)
                a->next = 1;
        if (n == 0 || n > COUNTER_ID_MAX || a->next > COUNTER_ID_MAX - n + 1)
                return 0;
        uint32_t first = a->next;
        a->next += n;
        return first;
}
