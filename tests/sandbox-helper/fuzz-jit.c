/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-jit.c: libFuzzer target over the helper's JIT file parsers: the
 * input is a perf map and a jitdump at once, asked for a spread of
 * addresses (some taken from the input itself). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit-names.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int fd = memfd_create("fuzz-jit", MFD_CLOEXEC);
        if (fd < 0)
                abort();
        if (size > 0 && write(fd, data, size) != (ssize_t) size)
                abort();
        uint64_t addrs[8];
        for (size_t i = 0; i < 6; i++)
                addrs[i] = 0x1000 * i + 0x10;
        uint64_t a = 0, b = 0;
        if (size >= 16) {
                memcpy(&a, data + size - 16, 8);
                memcpy(&b, data + size - 8, 8);
        }
        /* strictly ascending, as the request requires */
        addrs[6] = a > addrs[5] ? a : addrs[5] + 1;
        addrs[7] = b > addrs[6] ? b : addrs[6] + 1;
        for (uint32_t format = HELPER_JIT_PERF_MAP; format <= HELPER_JIT_DUMP; format++) {
                HelperWriter w;
                helper_writer_init(&w, HELPER_MAX_PAYLOAD);
                (void) jit_names_run(fd, format, addrs, 8, &w);
                helper_writer_done(&w);
        }
        close(fd);
        return 0;
}
