/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* safe-open.c: beneath-only opens and bounded reads (see safe-open.h). */
#include "safe-open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "path-walk.h"

int safe_open_beneath(int dirfd, const char *path, int flags, bool no_xdev) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                           (no_xdev ? RESOLVE_NO_XDEV : 0),
        };
        if (!path)
                return -EINVAL;
        while (*path == '/')
                path++;
        if (*path == 0)
                path = ".";
        if (flags & O_PATH)
                how.flags &= ~(uint64_t) O_NOCTTY;
        else
                how.flags |= O_NONBLOCK; /* a FIFO planted in a container's files must not block us */
        return path_open_resolve(dirfd, path, (int) how.flags, how.resolve);
}

int read_fd_bounded(int fd, size_t max_bytes, bool allow_special, char **ret, size_t *ret_len) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        if (!allow_special && (uint64_t) st.st_size > max_bytes)
                return -EFBIG;
        size_t cap = allow_special ? 4096 : (size_t) st.st_size + 1, n = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (n + 1 >= cap) {
                        if (cap > max_bytes)
                                return -EFBIG;
                        size_t ncap = cap * 2 > max_bytes + 1 ? max_bytes + 2 : cap * 2;
                        char *nb = realloc(buf, ncap);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        cap = ncap;
                }
                ssize_t r = read(fd, buf + n, cap - 1 - n);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r == 0)
                        break;
                n += (size_t) r;
                if (n > max_bytes)
                        return -EFBIG;
        }
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = n;
        return 0;
}

int read_file_bounded(int dirfd, const char *path, size_t max_bytes, bool allow_special, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_fd_bounded(fd, max_bytes, allow_special, ret, ret_len);
}

int open_home_dir(uid_t uid, char *ret_path, size_t path_size) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res || !pw.pw_dir || pw.pw_dir[0] != '/')
                return -ENOENT;
        int fd = open(pw.pw_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (ret_path)
                snprintf(ret_path, path_size, "%s", pw.pw_dir);
        return fd;
}

bool is_hex_id(const char *s, size_t n) {
        if (!s || strlen(s) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}
