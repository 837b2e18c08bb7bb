/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* io-util.c: see io-util.h. */
#include "io-util.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

ssize_t read_full(int fd, void *buf, size_t n, off_t offset) {
        size_t done = 0;
        while (done < n) {
                ssize_t k = offset < 0 ? read(fd, (uint8_t *) buf + done, n - done)
                                       : pread(fd, (uint8_t *) buf + done, n - done, offset + (off_t) done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (size_t) k;
        }
        return (ssize_t) done;
}
