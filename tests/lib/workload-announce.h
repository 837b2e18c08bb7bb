/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-announce.h: the first line of the test workloads that a test
 * symbolizes by hand: "pid PID base 0xBASE" (the program's load address). */
#pragma once

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

/* Prints the line for the program holding main; -1 when dladdr cannot tell. */
static inline int workload_announce(int (*main_fn)(void)) {
        Dl_info info;
        if (!dladdr((void *) main_fn, &info))
                return -1;
        printf("pid %d base %p\n", getpid(), info.dli_fbase);
        fflush(stdout);
        return 0;
}
