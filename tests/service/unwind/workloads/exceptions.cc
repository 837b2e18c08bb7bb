// SPDX-License-Identifier: LGPL-2.1-or-later
// exceptions: C++ exceptions in flight. throw_loop → thrower (three levels,
// each holding a Guard) → throw; while the exception travels, each Guard's
// destructor runs cleanup_work from its thrower frame, with the throwing
// frames still on the stack. Caught in throw_loop.
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

volatile uint64_t workload_sink;

static double cpu_ms() {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Runs only during stack unwinding: samples here have an exception in flight.
extern "C" NOINLINE void cleanup_work(uint64_t v) {
        if (std::uncaught_exceptions() == 0)
                abort();
        for (int i = 0; i < 20000; i++)
                v = v * 6364136223846793005ull + 1442695040888963407ull;
        workload_sink = v;
}

struct Guard {
        uint64_t v;
        ~Guard() {
                if (std::uncaught_exceptions() > 0)
                        cleanup_work(v);
        }
};

extern "C" NOINLINE void thrower(int depth, uint64_t v) {
        Guard g{v};
        volatile char pad[64 * (depth + 1)];
        pad[0] = (char) v;
        if (depth == 0)
                throw std::runtime_error("in flight");
        thrower(depth - 1, v + pad[0]);
        workload_sink = pad[0];
}

extern "C" NOINLINE uint64_t throw_loop(double budget, double start) {
        uint64_t caught = 0;
        while (cpu_ms() - start < budget) {
                for (int i = 0; i < 20; i++) {
                        try {
                                thrower(2, caught);
                        } catch (const std::runtime_error &e) {
                                caught += e.what()[0];
                        }
                }
        }
        return caught;
}

int main(int argc, char **argv) {
        // libstdc++'s start-up (relocations before main) is longer than a C
        // program's: a longer run keeps its share of samples well under 1%.
        double budget = argc > 1 ? atof(argv[1]) : 1500;
        workload_sink = throw_loop(budget, cpu_ms());
        return 0;
}
