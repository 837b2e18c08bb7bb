/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-entry.c: a program with its own entry point, _start, written
 * without call frame information and with a frame pointer that points at
 * the top of the initial stack (argc, then argv[0], a pointer into the stack,
 * where a return address would be). Its stacks end at _start: an unwinder
 * that steps past it reads argv[0] as a return address and invents a frame
 * in no mapping. Built with -nostartfiles; glibc is initialized by ld.so. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t entry_spin(uint64_t x) {
        for (int i = 0; i < 100000; i++)
                x = x * 6364136223846793005u + (uint64_t) i;
        __asm__ volatile("" : "+r"(x));
        return x;
}

__attribute__((noinline, used)) void entry_main(long argc, char **argv) {
        double ms = argc > 1 ? atof(argv[1]) : 1500;
        double end = now() + ms / 1000;
        uint64_t x = 1;
        while (now() < end)
                x = entry_spin(x);
        syscall(SYS_exit_group, (int) (x & 0)); /* no libc exit: nothing to unwind into */
}

__asm__(".text\n"
        ".globl _start\n"
        "_start:\n"
        "        mov %rsp, %rbp\n"      /* rbp -> argc; rbp+8 -> argv[0] */
        "        mov (%rsp), %rdi\n"    /* argc */
        "        lea 8(%rsp), %rsi\n"   /* argv */
        "        and $-16, %rsp\n"
        "        call entry_main\n"
        "        hlt\n");
