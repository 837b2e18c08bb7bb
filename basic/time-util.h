/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* time-util.h: the clocks Periscope reads. Captures, perf records and
 * control rings all count CLOCK_MONOTONIC nanoseconds. Header-only, so the
 * collector can use it inside profiled programs. */
#pragma once

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC INT64_C(1000000000)
#define NSEC_PER_MSEC INT64_C(1000000)
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

/* CLOCK_MONOTONIC now, in nanoseconds (the captures' time base). */
static inline int64_t now_monotonic_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* CLOCK_MONOTONIC now, in milliseconds (timeouts). */
static inline int64_t now_monotonic_ms(void) {
        return now_monotonic_ns() / NSEC_PER_MSEC;
}
