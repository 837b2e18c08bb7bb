/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-burn.c: a CPU-bound program with known function names for the
 * real-recording report tests: main → burn_outer → burn_inner, built with
 * frame pointers so Sysprof's kernel callchains see the whole stack
 * (burn_seed only keeps burn_inner from being a leaf). */
#include <stdio.h>
#include <stdlib.h>

/* Called once per burn_inner call so burn_inner is not a leaf: gcc gives
 * leaf functions no frame even with -fno-omit-frame-pointer, and a
 * frame-pointer callchain then skips the leaf's caller. */
__attribute__((noinline)) double burn_seed(double x) {
        return x < 1e12 ? x : 1.0;
}

__attribute__((noinline)) double burn_inner(double x) {
        x = burn_seed(x);
        for (int i = 0; i < 2000; i++)
                x = x * 1.0000001 + 0.5 / (x + 1.0);
        return x;
}

__attribute__((noinline)) double burn_outer(long rounds) {
        double acc = 1.0;
        for (long r = 0; r < rounds; r++)
                acc += burn_inner(acc);
        return acc;
}

int main(int argc, char **argv) {
        long rounds = argc > 1 ? atol(argv[1]) : 200000;
        printf("%f\n", burn_outer(rounds));
        return 0;
}
