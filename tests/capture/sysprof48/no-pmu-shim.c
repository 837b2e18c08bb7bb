/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* no-pmu-shim.c: LD_PRELOADed into sysprofd by make-sysprof48-fixture.sh,
 * only on a machine without a hardware PMU (a virtual machine). Sysprof
 * 48.0's DWARF sampler (sysprof-user-sampler.c) asks for
 * PERF_COUNT_HW_CPU_CYCLES first and, when that fails, retries with the CPU
 * clock but keeps the first GError, so its g_unix_fd_list_append() of the
 * fd that worked fails ("Out of FDs to add to FDList") and the recording
 * has no samples. Here a cycles event the kernel refuses with ENOENT is
 * opened as the CPU clock (Sysprof's own fallback and period) at once;
 * every other call passes through unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...) {
        static long (*real)(long, ...);
        va_list ap;
        long a[6];

        va_start(ap, number);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (!real)
                real = (long (*)(long, ...)) dlsym(RTLD_NEXT, "syscall");
        long r = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
        if (number == SYS_perf_event_open && r < 0 && errno == ENOENT) {
                struct perf_event_attr *attr = (struct perf_event_attr *) a[0];
                if (attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_CPU_CYCLES) {
                        attr->type = PERF_TYPE_SOFTWARE;
                        attr->config = PERF_COUNT_SW_CPU_CLOCK;
                        attr->sample_period = 1000000;
                        r = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
                }
        }
        return r;
}
