/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-shift.c: two CPU-bound functions with known names whose shares
 * the arguments set, for the `report --diff` test on real recordings:
 * `workload-shift A B` spends A units of work in shift_a and B units in
 * shift_b, interleaved in ten rounds (a unit is about 0.1 s here). */
#include <stdio.h>
#include <stdlib.h>

#define UNIT_ITERATIONS 40000000L

__attribute__((noinline)) double shift_step(double x) {
        return x * 1.0000001 + 0.5 / (x + 1.0);
}

__attribute__((noinline)) double shift_a(long n) {
        double x = 1.0;
        for (long i = 0; i < n; i++)
                x = shift_step(x);
        return x;
}

__attribute__((noinline)) double shift_b(long n) {
        double x = 2.0;
        for (long i = 0; i < n; i++)
                x = shift_step(x);
        return x;
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: %s UNITS-IN-A UNITS-IN-B\n", argv[0]);
                return 2;
        }
        long a = atol(argv[1]), b = atol(argv[2]);
        double acc = 0;
        for (int round = 0; round < 10; round++) {
                acc += shift_a(a * UNIT_ITERATIONS / 10);
                acc += shift_b(b * UNIT_ITERATIONS / 10);
        }
        printf("%f\n", acc);
        return 0;
}
