/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-fixture.h: the synthetic profile the report tests use, shared by
 * the generator that writes it with Periscope's capture writer and the one
 * that writes it with Sysprof's libsysprof-capture-4. The expected report
 * output in test-report.py is derived by hand from this description. */
#pragma once

#include <stdint.h>

#define FX_APP 100     /* "/usr/bin/app --fast" */
#define FX_WORKER 200  /* "worker" */

#define FX_KERNEL_MARK ((uint64_t) -128)
#define FX_USER_MARK ((uint64_t) -512)

/* app: /usr/bin/app at 0x400000 */
#define FX_MAIN 0x401100ull            /* main */
#define FX_COMPUTE_INL 0x401010ull     /* add_one (inlined) ← square (inlined) ← compute */
#define FX_COMPUTE 0x401030ull         /* compute */
#define FX_WRITE 0x401200ull           /* write_data */
#define FX_VECTOR 0x7f0000001010ull    /* libstdc++: std::vector<…>::push_back */
#define FX_LIBFOO 0x7f1000000500ull    /* libfoo.so: unresolved (helper failed) */
#define FX_LIBBAR 0x7f2000000234ull    /* libbar.so (file offset 0x1000): no symbols */
#define FX_KSYSCALL 0xffffffff81000010ull /* do_syscall_64 */
#define FX_KUNKNOWN 0xffffffff81999999ull /* a kernel address without a name */
/* worker: /usr/bin/worker at 0x400000 */
#define FX_W_LOOP 0x401300ull          /* worker_loop */
#define FX_W_COMPUTE 0x401020ull       /* compute */

#define FX_VECTOR_NAME "std::vector<int, std::allocator<int> >::push_back(int const&)"

typedef struct FxStack {
        int32_t pid;
        unsigned count;
        unsigned n;
        uint64_t addrs[6]; /* innermost first */
} FxStack;

static const FxStack fx_stacks[] = {
        { FX_APP, 60, 2, { FX_COMPUTE_INL, FX_MAIN } },
        { FX_APP, 20, 2, { FX_COMPUTE, FX_MAIN } },
        { FX_APP, 10, 2, { FX_VECTOR, FX_MAIN } },
        { FX_APP, 5, 2, { FX_LIBFOO, FX_MAIN } },
        { FX_APP, 2, 2, { FX_LIBBAR, FX_MAIN } },
        { FX_APP, 2, 5, { FX_KERNEL_MARK, FX_KSYSCALL, FX_USER_MARK, FX_WRITE, FX_MAIN } },
        { FX_APP, 1, 5, { FX_KERNEL_MARK, FX_KUNKNOWN, FX_USER_MARK, FX_WRITE, FX_MAIN } },
        { FX_WORKER, 30, 2, { FX_W_COMPUTE, FX_W_LOOP } },
        { FX_WORKER, 70, 1, { FX_W_LOOP } },
};

typedef struct FxMap {
        int32_t pid;
        uint64_t start, end, offset;
        const char *file;
} FxMap;

static const FxMap fx_maps[] = {
        { FX_APP, 0x400000, 0x500000, 0, "/usr/bin/app" },
        { FX_APP, 0x7f0000000000, 0x7f0000100000, 0, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6" },
        { FX_APP, 0x7f1000000000, 0x7f1000100000, 0, "/usr/lib/libfoo.so" },
        { FX_APP, 0x7f2000000000, 0x7f2000100000, 0x1000, "/usr/lib/libbar.so" },
        { FX_WORKER, 0x400000, 0x500000, 0, "/usr/bin/worker" },
};

/* Outermost (real) function of each named address, as Sysprof's table has
 * them; the Periscope table adds the inline chain and the unresolved range. */
typedef struct FxSymbol {
        int32_t pid; /* -1: kernel, any process */
        uint64_t begin, end;
        const char *name;
} FxSymbol;

static const FxSymbol fx_symbols[] = {
        { FX_APP, 0x401000, 0x401080, "compute" },
        { FX_APP, 0x401100, 0x401180, "main" },
        { FX_APP, 0x401200, 0x401280, "write_data" },
        { FX_APP, 0x7f0000001000, 0x7f0000001100, FX_VECTOR_NAME },
        { FX_WORKER, 0x401000, 0x401080, "compute" },
        { FX_WORKER, 0x401300, 0x401380, "worker_loop" },
        { -1, 0xffffffff81000000ull, 0xffffffff81000100ull, "do_syscall_64" },
};
