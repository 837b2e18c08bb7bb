/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hostile-python: a program that looks like CPython 3.11 to the python
 * part (test-record-python.sh copies it to a file named python3.11): it
 * exports _PyRuntime, _PyEval_EvalFrameDefault and Py_Version, and spins
 * in that function, but every word of its _PyRuntime points back at
 * _PyRuntime, so its interpreter list, thread list and frame chain loop. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((visibility("default"))) const unsigned long Py_Version = 0x030b02f0;
__attribute__((visibility("default"))) uintptr_t _PyRuntime[8192];

__attribute__((noinline, visibility("default"))) long _PyEval_EvalFrameDefault(long n);
__attribute__((noinline, visibility("default"))) long _PyEval_EvalFrameDefault(long n) {
        volatile long x = 0;
        for (long i = 0; i < n; i++)
                x += i;
        return x;
}

int main(int argc, char **argv) {
        for (size_t i = 0; i < sizeof _PyRuntime / sizeof _PyRuntime[0]; i++)
                _PyRuntime[i] = (uintptr_t) &_PyRuntime[0];
        time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 2);
        while (time(NULL) < end)
                _PyEval_EvalFrameDefault(1000000);
        return 0;
}
