/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-inline.c: two levels of inlining inside a non-inlined function;
 * prints file offsets of points inside each (see workload-pc.h). Lines
 * marked MARK-... are looked up by the test to check source positions. */
#include <stdlib.h>

#include "workload-pc.h"

static volatile int sink;

static inline __attribute__((always_inline)) void inner_inline(int x) {
        sink += x * 3;
        report_pc("inner", CURRENT_PC()); /* MARK-inner */
        sink += x;
}

static inline __attribute__((always_inline)) void outer_inline(int x) {
        sink -= x;
        inner_inline(x + 1); /* MARK-call-inner */
        sink ^= x;
}

__attribute__((noinline)) void work_function(int x) {
        sink = x;
        outer_inline(x * 2); /* MARK-call-outer */
        report_pc("work", CURRENT_PC()); /* MARK-work */
        sink++; /* keeps report_pc from being a tail call */
}

int main(int argc, char **argv) {
        work_function(argc);
        report_pc("main", CURRENT_PC());
        if (getenv("WORKLOAD_WAIT")) {
                /* stay mapped until the test says so (stdin closes) */
                printf("ready\n");
                fflush(stdout);
                while (getchar() != EOF)
                        ;
        }
        return 0;
}
