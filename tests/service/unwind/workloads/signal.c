/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* signal: a signal handler interrupts a busy loop; the stack must read
 * signal_work → on_signal → (the kernel's signal frame, __restore_rt) → spin → main. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "workload-common.h"

volatile uint64_t workload_sink;
static volatile sig_atomic_t handled;

NOINLINE static uint64_t signal_work(uint64_t v) {
        for (int i = 0; i < 500000; i++)
                v = v * 6364136223846793005ull + 1442695040888963407ull;
        return v;
}

NOINLINE static void on_signal(int sig) {
        workload_sink = signal_work(workload_sink + (uint64_t) sig);
        handled++;
}

NOINLINE static uint64_t spin(double budget, double start) {
        uint64_t v = 3;
        while (workload_cpu_ms() - start < budget)
                for (int i = 0; i < 1000; i++)
                        v = v * 2862933555777941757ull + 3037000493ull;
        return v;
}

int main(int argc, char **argv) {
        double budget = workload_budget_ms(argc, argv, 600);
        struct sigaction sa;
        struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGPROF, &sa, NULL) < 0 || setitimer(ITIMER_PROF, &it, NULL) < 0)
                return 1;
        workload_sink = spin(budget, workload_cpu_ms());
        it = (struct itimerval) {};
        setitimer(ITIMER_PROF, &it, NULL);
        return handled > 0 ? 0 : 1;
}
