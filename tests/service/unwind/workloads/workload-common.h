/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-common.h: helpers shared by the unwinding workloads (built with
 * -O2 -fomit-frame-pointer). Every named function is noinline and does work
 * after its call, so neither inlining nor tail calls hide a frame. */
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

extern volatile uint64_t workload_sink;

/* CPU time of the process in milliseconds. */
static inline double workload_cpu_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* Milliseconds of CPU to burn, from argv[1] (default def). */
static inline double workload_budget_ms(int argc, char **argv, double def) {
        return argc > 1 ? atof(argv[1]) : def;
}
