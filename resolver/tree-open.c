/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tree-open.c: symlink-following opens confined to a foreign tree (see tree-open.h). */
#include "tree-open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"

int tree_path_normalize(const char *path, char *out, size_t out_size) {
        if (!path || path[0] != '/')
                return -EINVAL;
        if (out_size < 2)
                return -ENAMETOOLONG;
        size_t len = 0;
        out[0] = 0;
        for (const char *p = path; *p;) {
                while (*p == '/')
                        p++;
                const char *e = strchrnul(p, '/');
                size_t n = (size_t) (e - p);
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        /* nothing */
                } else if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (len == 0)
                                return -EXDEV;
                        while (len > 0 && out[len - 1] != '/')
                                len--;
                        len--; /* the '/' itself */
                        out[len] = 0;
                } else {
                        if (len + 1 + n + 1 > out_size)
                                return -ENAMETOOLONG;
                        out[len++] = '/';
                        memcpy(out + len, p, n);
                        len += n;
                        out[len] = 0;
                }
                p = e;
        }
        if (len == 0) {
                out[0] = '/';
                out[1] = 0;
        }
        return 0;
}

/* Finds the first symlink on cur and rewrites cur through it. 0 rewritten,
 * < 0 error (-EXDEV: it leads out of the tree). */
static int follow_first_link(TreeOpenFunc f, void *userdata, char *cur, size_t cur_size, char **why) {
        char prefix[PATH_MAX], target[PATH_MAX], next[PATH_MAX];
        size_t len = strlen(cur);
        for (size_t i = 1; i <= len; i++) {
                if (cur[i] != '/' && cur[i] != 0)
                        continue;
                if (i >= sizeof(prefix))
                        return -ENAMETOOLONG;
                memcpy(prefix, cur, i);
                prefix[i] = 0;
                _cleanup_close_ int lfd = f(userdata, prefix, O_PATH | O_NOFOLLOW, NULL, 0);
                if (lfd < 0)
                        return lfd;
                struct stat st;
                if (fstat(lfd, &st) < 0)
                        return -errno;
                if (!S_ISLNK(st.st_mode))
                        continue;
                ssize_t n = readlinkat(lfd, "", target, sizeof(target) - 1);
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ENOENT;
                target[n] = 0;
                const char *rest = cur + i;
                int k;
                if (target[0] == '/')
                        k = snprintf(next, sizeof(next), "%s%s", target, rest);
                else {
                        int dir_len = (int) (strrchr(prefix, '/') - prefix + 1); /* the link's directory, with its '/' */
                        k = snprintf(next, sizeof(next), "%.*s%s%s", dir_len, prefix, target, rest);
                }
                if (k < 0 || (size_t) k >= sizeof(next))
                        return -ENAMETOOLONG;
                int r = tree_path_normalize(next, cur, cur_size);
                if (r == -EXDEV) {
                        why_appendf(why, "symlink %s -> %s leads out of the root, not followed", prefix, target);
                        return r;
                }
                if (r < 0)
                        return r;
                why_appendf(why, "%s -> %s", prefix, target);
                return 0;
        }
        return -ELOOP;
}

int tree_open_following(TreeOpenFunc f, void *userdata, const char *path, char *shown, size_t shown_size,
                        char **ret_why) {
        char cur[PATH_MAX];
        if (ret_why) {
                free(*ret_why);
                *ret_why = NULL;
        }
        int r = tree_path_normalize(path, cur, sizeof(cur));
        if (r == -EXDEV)
                why_appendf(ret_why, "%s climbs above the root, not followed", path);
        if (r < 0)
                return r;
        for (unsigned hops = 0;; hops++) {
                /* O_PATH first: opening a FIFO or a device the tree's owner
                 * put there could block or have side effects; only a regular
                 * file is then reopened for reading. A trailing symlink comes
                 * back as itself. */
                _cleanup_close_ int pfd = f(userdata, cur, O_PATH, shown, shown_size);
                if (pfd >= 0) {
                        struct stat st;
                        if (fstat(pfd, &st) < 0)
                                return -errno;
                        if (S_ISCHR(st.st_mode) && st.st_rdev == 0)
                                return -ENOENT; /* an overlay whiteout: deleted in an upper layer */
                        if (S_ISREG(st.st_mode)) {
                                /* Opened again by its path, through the same
                                 * opener (never by reopening the O_PATH fd:
                                 * the opener decides with whose rights), and
                                 * taken only if it is still the same file. */
                                _cleanup_close_ int fd = f(userdata, cur, O_RDONLY, NULL, 0);
                                struct stat again;
                                if (fd < 0)
                                        return fd;
                                if (fstat(fd, &again) < 0)
                                        return -errno;
                                if (again.st_dev != st.st_dev || again.st_ino != st.st_ino)
                                        return -ESTALE;
                                return TAKE_FD(fd);
                        }
                        if (!S_ISLNK(st.st_mode))
                                return -EBADF;
                } else if (pfd != -ELOOP)
                        return pfd;
                if (hops == TREE_OPEN_MAX_LINKS) {
                        why_appendf(ret_why, "too many symbolic links");
                        return -ELOOP;
                }
                r = follow_first_link(f, userdata, cur, sizeof(cur), ret_why);
                if (r < 0)
                        return r;
        }
}
