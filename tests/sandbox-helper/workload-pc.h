/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-pc.h: test workloads print "LABEL FILE-OFFSET" for code addresses
 * inside specific (inlined) functions, computed from /proc/self/maps exactly
 * like the service maps a sampled address to a file offset. */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Address of the next instruction: a point inside the function it sits in. */
#define CURRENT_PC() ({ uintptr_t _pc; __asm__ volatile("lea 0(%%rip), %0" : "=r"(_pc)); _pc; })

static inline void report_pc(const char *label, uintptr_t pc) {
        FILE *f = fopen("/proc/self/maps", "re");
        char line[4096];
        while (f && fgets(line, sizeof line, f)) {
                unsigned long start, end, pgoff;
                if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
                        continue;
                if (pc >= start && pc < end) {
                        printf("%s 0x%lx 0x%lx\n", label, (unsigned long) (pc - start + pgoff), (unsigned long) pc);
                        break;
                }
        }
        if (f)
                fclose(f);
}
