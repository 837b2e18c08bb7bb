/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-memory-paths.c: two paths into one allocating function, for
 * `periscope report --memory`'s call stacks. Prints "pid PID base 0xBASE"
 * (its load address, as tests/service/control/control-record expects), then:
 *   leak_path: 10 x make_buf(1000), never freed        = 10000 bytes leaked
 *   temp_path: 50 x make_buf(300), each freed at once  = 15000 bytes of temporaries
 * Built without inlining or sibling calls so each function keeps its frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload-announce.h"

static char *volatile kept[16];
static char *volatile sink;

__attribute__((noinline, noclone)) static char *make_buf(size_t n) {
        char *p = malloc(n);
        if (!p)
                exit(1);
        memset(p, 0x5a, n);
        return p;
}

__attribute__((noinline, noclone)) static void leak_path(void) {
        for (int i = 0; i < 10; i++)
                kept[i] = make_buf(1000);
}

__attribute__((noinline, noclone)) static void temp_path(void) {
        for (int i = 0; i < 50; i++) {
                char *p = make_buf(300);
                sink = p;
                free(p);
        }
}

int main(void) {
        if (workload_announce(main) < 0)
                return 1;
        leak_path();
        temp_path();
        return 0;
}
