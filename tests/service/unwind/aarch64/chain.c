/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chain: the aarch64 unwinder's vector program. main → f3 → f2 (alloca) →
 * f1 (with mix inlined) → leaf, a call-free leaf that builds no frame: its
 * return address stays in x30 (LR) while it runs. make-vectors.sh stops it at `leaf_loop` (inside
 * the leaf) and at `handler_leaf` (a leaf in the handler of a timer signal
 * that interrupted the call-free leaf spin_leaf). */
#include <alloca.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile uint64_t sink;

NOINLINE uint64_t leaf(uint64_t x) {
        __asm__ volatile(".globl leaf_loop\nleaf_loop:" ::: "memory");
        for (int i = 0; i < 100; i++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
        return x;
}

/* inlined into f1: the symbolizer's inline frame (f1 → mix → leaf) */
static inline __attribute__((always_inline)) uint64_t mix(uint64_t v) {
        uint64_t r = leaf(v);
        sink = r;
        return r ^ v;
}

NOINLINE uint64_t f1(uint64_t v) {
        return mix(v) + 1;
}

NOINLINE uint64_t f2(uint64_t v, size_t n) {
        char *buf = alloca(n);
        memset(buf, (int) v, n);
        __asm__ volatile("" : : "r"(buf) : "memory");
        return f1(v + (uint64_t) buf[n / 2]) + (uint64_t) buf[0];
}

NOINLINE uint64_t f3(uint64_t v) {
        volatile uint64_t small[8];
        small[v % 8] = v;
        return f2(v, 64 + (v % 512)) + small[v % 8];
}

/* The signal return trampoline, as Linux's vdso has it (a nop, then
 * `mov x8, #__NR_rt_sigreturn; svc #0`) and under the same name, installed
 * with SA_RESTORER: qemu-user's own trampoline is in no ELF file, the
 * kernel's is in the vdso. */
__asm__(".text\n.balign 16\nnop\n.globl __kernel_rt_sigreturn\n.type __kernel_rt_sigreturn, %function\n"
        "__kernel_rt_sigreturn:\nmov x8, #139\nsvc #0\n.size __kernel_rt_sigreturn, . - __kernel_rt_sigreturn\n");
void __kernel_rt_sigreturn(void);

/* the kernel's: flags 0x04000000 is SA_RESTORER */
struct kernel_sigaction {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
};

NOINLINE uint64_t handler_leaf(uint64_t x) {
        return x * 3 + 1;
}

volatile int fired;

NOINLINE void on_signal(int sig) {
        sink = handler_leaf((uint64_t) sig);
        fired = 1;
}

/* A call-free leaf the timer's signal interrupts: its return address is in
 * x30, which the signal frame's sigcontext keeps. */
NOINLINE uint64_t spin_leaf(uint64_t v) {
        while (!fired)
                v = v * 7 + 1;
        return v;
}

NOINLINE uint64_t spin(uint64_t v) {
        struct itimerval it = { .it_value = { .tv_usec = 20000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        return spin_leaf(v) + 1;
}

int main(int argc, char **argv) {
        (void) argv;
        struct kernel_sigaction sa = { .handler = on_signal, .flags = 0x04000000, .restorer = __kernel_rt_sigreturn };
        if (syscall(SYS_rt_sigaction, SIGALRM, &sa, NULL, sizeof(sa.mask)) < 0)
                return 1;
        sink = f3((uint64_t) argc);
        sink = spin(sink);
        return 0;
}
