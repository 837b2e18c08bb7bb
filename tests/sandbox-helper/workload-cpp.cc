// SPDX-License-Identifier: LGPL-2.1-or-later
// workload-cpp.cc: C++ names (namespaces, templates, const methods,
// operators) and an inlined method; prints file offsets (workload-pc.h).
#include <string>

extern "C" {
#include "workload-pc.h"
}

namespace periscope_test {

template <typename T> struct Box {
        T value;
        __attribute__((always_inline)) inline T twice() const {
                report_pc("twice", CURRENT_PC());
                return value * 2;
        }
        __attribute__((noinline)) T compute(int times) const {
                T r = twice() + times;
                report_pc("compute", CURRENT_PC());
                return r;
        }
};

__attribute__((noinline)) int operator+(const Box<long> &a, const std::string &s) {
        report_pc("operator", CURRENT_PC());
        return (int) (a.value + (long) s.size());
}

} // namespace periscope_test

int main(int argc, char **) {
        periscope_test::Box<long> b{argc};
        volatile long r = b.compute(3);
        volatile int q = b + std::string("xy");
        (void) r;
        (void) q;
        return 0;
}
