/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vdso-image.c: the vdso's bytes out of a process, and as a sealed memfd. */
#include "vdso-image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "process-ownership.h"

bool vdso_is_mapping(const char *filename) {
        return filename && strcmp(filename, "[vdso]") == 0;
}

int vdso_image_read(pid_t pid, uid_t owner, uint64_t start, uint64_t end, size_t max_size, uint8_t **ret,
                    size_t *ret_size) {
        char path[64];
        if (end <= start)
                return -EINVAL;
        size_t size = (size_t) (end - start);
        if (size > max_size || end - start > (uint64_t) SIZE_MAX)
                return -EFBIG;
        snprintf(path, sizeof(path), "/proc/%d/mem", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        /* The open holds the process's mm of now (taken under its exec
         * lock): still owner's now, it is owner's program's. */
        if (owner != VDSO_IMAGE_ANY_OWNER) {
                int r = process_recheck_after_open(owner, pid, "vdso image (/proc/PID/mem)");
                if (r < 0)
                        return r;
        }
        _cleanup_free_ uint8_t *buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        ssize_t n = pread(fd, buf, size, (off_t) start);
        if (n < 0)
                return -errno;
        if ((size_t) n != size)
                return -EIO;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

int vdso_image_memfd(const uint8_t *image, size_t size) {
        _cleanup_close_ int fd = memfd_create("periscope-vdso", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        for (size_t done = 0; done < size;) {
                ssize_t n = write(fd, image + done, size - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                done += (size_t) n;
        }
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        return TAKE_FD(fd);
}

int vdso_image_from_memfd(int fd, size_t max_size, uint8_t **ret, size_t *ret_size) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0)
                return -EIO;
        if ((uint64_t) st.st_size > max_size)
                return -EFBIG;
        size_t size = (size_t) st.st_size;
        _cleanup_free_ uint8_t *buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        for (size_t done = 0; done < size;) {
                ssize_t n = pread(fd, buf + done, size - done, (off_t) done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                done += (size_t) n;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}
