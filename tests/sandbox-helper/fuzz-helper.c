/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-helper.c: libFuzzer target over the helper's parsing entry points
 * (IDENTIFY and SYMBOLIZE request handling, so libelf/libdw/liblzma and our
 * code see the input as an ELF file; plus the request decoder). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "helper-server.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(HelperServer *server, uint16_t type, const void *payload, size_t payload_size, int fd) {
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_PAYLOAD);
        uint16_t reply_type;
        helper_handle_request(server, type, payload, payload_size, &fd, 1, &reply_type, &w);
        helper_writer_done(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
        if (fd < 0)
                abort();
        if (size > 0 && write(fd, data, size) != (ssize_t) size)
                abort();
        /* one server for the input: the second SYMBOLIZE reuses the module
         * the first one opened, as batches of one file do */
        HelperServer server = {};

        uint8_t identify[4] = { HELPER_IDENTIFY_WANT_FILE_CRC, 0, 0, 0 };
        run(&server, HELPER_MSG_IDENTIFY, identify, sizeof identify, fd);

        /* symbolize a spread of offsets, some taken from the input itself */
        HelperWriter req;
        helper_writer_init(&req, HELPER_MAX_INLINE_PAYLOAD);
        helper_put_u32(&req, 0);
        helper_put_u32(&req, 8);
        for (uint64_t i = 0; i < 6; i++)
                helper_put_u64(&req, i * 0x400 + 0x40);
        uint64_t a = 0, b = 0;
        if (size >= 16) {
                memcpy(&a, data + size - 16, 8);
                memcpy(&b, data + size - 8, 8);
        }
        helper_put_u64(&req, a);
        helper_put_u64(&req, b % (size + 1));
        run(&server, HELPER_MSG_SYMBOLIZE, req.data, req.size, fd);
        run(&server, HELPER_MSG_SYMBOLIZE, req.data, req.size, fd);

        /* the raw input as a request payload */
        run(&server, HELPER_MSG_SYMBOLIZE, data, size, fd);
        helper_writer_done(&req);
        helper_server_clear(&server);
        close(fd);
        return 0;
}
