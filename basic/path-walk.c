/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* path-walk.c: openat2() and the walk that stands in for it where openat2
 * is refused (see path-walk.h). */
#include "path-walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"

#define PATH_WALK_MAX_LINKS 40 /* the kernel's MAXSYMLINKS */
#define PATH_WALK_RESOLVE_KNOWN                                                                                        \
        (RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_IN_ROOT)

/* What the walk knows of an inode it holds an fd of. */
typedef struct Node {
        dev_t dev;
        ino_t ino;
        mode_t mode;
        uint64_t mnt_id;
        bool has_mnt_id;
} Node;

typedef struct Walk {
        uint64_t resolve;
        bool scoped; /* RESOLVE_BENEATH or RESOLVE_IN_ROOT */
        int root;    /* scoped: dirfd's directory, where absolute names start */
        int cur;     /* the directory the walk stands in */
        Node start;  /* RESOLVE_NO_XDEV: everything walked through is on its mount */
        Node *dirs;  /* scoped: the directories from the root (dirs[0]) down to cur */
        size_t n_dirs, n_alloc;
        unsigned links;
} Walk;

static void walk_done(Walk *w) {
        safe_close(w->root);
        safe_close(w->cur);
        free(w->dirs);
}

static int node_of(int fd, Node *ret) {
        struct statx sx;
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_MNT_ID, &sx) == 0 &&
            (sx.stx_mask & (STATX_TYPE | STATX_INO)) == (STATX_TYPE | STATX_INO)) {
                *ret = (Node) {
                        .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
                        .ino = sx.stx_ino,
                        .mode = sx.stx_mode,
                        .mnt_id = sx.stx_mnt_id,
                        .has_mnt_id = sx.stx_mask & STATX_MNT_ID,
                };
                return 0;
        }
        /* no statx (before 4.11, or filtered), or no mount id (before 5.8): st_dev */
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret = (Node) { .dev = st.st_dev, .ino = st.st_ino, .mode = st.st_mode };
        return 0;
}

static bool same_inode(const Node *a, const Node *b) {
        return a->dev == b->dev && a->ino == b->ino;
}

static bool same_mount(const Node *a, const Node *b) {
        if (a->has_mnt_id && b->has_mnt_id)
                return a->mnt_id == b->mnt_id;
        return a->dev == b->dev;
}

static int walk_check_mount(const Walk *w, const Node *n) {
        if ((w->resolve & RESOLVE_NO_XDEV) && !same_mount(&w->start, n))
                return -EXDEV;
        return 0;
}

/* cur becomes fd (taken), a directory one level further down. */
static int walk_push(Walk *w, int fd, const Node *n) {
        if (!w->scoped) {
                safe_close(w->cur);
                w->cur = fd;
                return 0;
        }
        if (w->n_dirs == w->n_alloc) {
                size_t na = w->n_alloc * 2;
                Node *d = realloc(w->dirs, na * sizeof(*d));
                if (!d) {
                        safe_close(fd);
                        return -ENOMEM;
                }
                w->dirs = d;
                w->n_alloc = na;
        }
        w->dirs[w->n_dirs++] = *n;
        safe_close(w->cur);
        w->cur = fd;
        return 0;
}

/* An absolute link target: back to the root (scoped), or to "/", which
 * RESOLVE_NO_XDEV wants on the start's mount. */
static int walk_restart(Walk *w) {
        if (w->resolve & RESOLVE_BENEATH)
                return -EXDEV;
        _cleanup_close_ int fd = w->scoped ? openat(w->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)
                                           : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        Node n;
        int r = node_of(fd, &n);
        if (r < 0)
                return r;
        if ((r = walk_check_mount(w, &n)) < 0)
                return r;
        w->n_dirs = 1;
        safe_close(w->cur);
        w->cur = TAKE_FD(fd);
        return 0;
}

/* "..": never above the root (-EXDEV beneath it, stays there in it), and
 * only into the directory the walk came down from: one moved away
 * meanwhile could lead out of the root (-EAGAIN, as openat2 answers a
 * rename racing a scoped lookup). */
static int walk_up(Walk *w) {
        if (w->scoped && w->n_dirs == 1)
                return w->resolve & RESOLVE_IN_ROOT ? 0 : -EXDEV;
        _cleanup_close_ int fd = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        Node n;
        int r = node_of(fd, &n);
        if (r < 0)
                return r;
        if (w->scoped && !same_inode(&n, &w->dirs[w->n_dirs - 2]))
                return -EAGAIN;
        if ((r = walk_check_mount(w, &n)) < 0)
                return r;
        if (w->scoped)
                w->n_dirs--;
        safe_close(w->cur);
        w->cur = TAKE_FD(fd);
        return 0;
}

/* A symbolic link (linkfd, its O_PATH fd) in the way: *todo becomes its
 * target followed by rest. */
static int walk_link(Walk *w, int linkfd, const char *rest, char **todo) {
        if (w->resolve & RESOLVE_NO_SYMLINKS)
                return -ELOOP;
        if (++w->links > PATH_WALK_MAX_LINKS)
                return -ELOOP;
        /* A magic link is a symbolic link on procfs, and every one there
         * is taken for one (/proc/self too): none is followed. */
        struct statfs sf;
        if (fstatfs(linkfd, &sf) < 0)
                return -errno;
        if (sf.f_type == PROC_SUPER_MAGIC)
                return -ELOOP;
        char target[PATH_MAX];
        ssize_t n = readlinkat(linkfd, "", target, sizeof(target));
        if (n < 0)
                return -errno;
        if ((size_t) n >= sizeof(target))
                return -ENAMETOOLONG;
        if (n == 0)
                return -ENOENT;
        if (target[0] == '/') {
                int r = walk_restart(w);
                if (r < 0)
                        return r;
        }
        size_t nrest = strlen(rest);
        char *t = malloc((size_t) n + nrest + 1);
        if (!t)
                return -ENOMEM;
        memcpy(t, target, (size_t) n);
        memcpy(t + n, rest, nrest + 1);
        free(*todo);
        *todo = t;
        return 0;
}

/* The last name, opened with the caller's flags where it was checked; an
 * inode other than the one checked (replaced meanwhile) is -EAGAIN. */
static int walk_open_last(int dir, const char *name, int flags, const Node *want) {
        _cleanup_close_ int fd = openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        Node got;
        int r = node_of(fd, &got);
        if (r < 0)
                return r;
        if (!same_inode(&got, want) || !same_mount(&got, want))
                return -EAGAIN;
        return TAKE_FD(fd);
}

/* The next component of *p after any slashes: its start in *ret, its length (0 at the end). */
static size_t next_component(const char **p, const char **ret) {
        const char *s = *p;
        while (*s == '/')
                s++;
        size_t n = strcspn(s, "/");
        *ret = s;
        *p = s + n;
        return n;
}

static int walk(int dirfd, const char *path, int flags, uint64_t resolve) {
        if ((resolve & ~(uint64_t) PATH_WALK_RESOLVE_KNOWN) ||
            ((resolve & RESOLVE_BENEATH) && (resolve & RESOLVE_IN_ROOT)) || (flags & O_CREAT) ||
            (flags & O_TMPFILE) == O_TMPFILE)
                return -EINVAL;
        if (!path)
                return -EFAULT;
        if (!*path)
                return -ENOENT;
        if (strlen(path) >= PATH_MAX)
                return -ENAMETOOLONG;

        _cleanup_(walk_done) Walk w = {
                .resolve = resolve,
                .scoped = resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT),
                .root = -1,
                .cur = -1,
        };
        /* an absolute path starts at the root (scoped: dirfd) or at "/", and on its mount */
        bool absolute = path[0] == '/';
        if (absolute && (resolve & RESOLVE_BENEATH))
                return -EXDEV;
        w.cur = openat(dirfd, absolute && !w.scoped ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (w.cur < 0)
                return -errno;
        int r = node_of(w.cur, &w.start);
        if (r < 0)
                return r;
        w.n_alloc = 16;
        w.dirs = malloc(w.n_alloc * sizeof(*w.dirs));
        if (!w.dirs)
                return -ENOMEM;
        w.dirs[0] = w.start;
        w.n_dirs = 1;
        if (w.scoped && (w.root = fcntl(w.cur, F_DUPFD_CLOEXEC, 3)) < 0)
                return -errno;
        _cleanup_free_ char *todo = strdup(path);
        if (!todo)
                return -ENOMEM;

        const char *p = todo;
        for (;;) {
                const char *c;
                size_t n = next_component(&p, &c);
                if (n == 0)
                        break; /* it ends in "." or "..", or with a slash: the directory the walk is in */
                bool last = *p == 0;
                if (n == 1 && c[0] == '.')
                        continue;
                if (n == 2 && c[0] == '.' && c[1] == '.') {
                        if ((r = walk_up(&w)) < 0)
                                return r;
                        continue;
                }
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                char name[NAME_MAX + 1];
                memcpy(name, c, n);
                name[n] = 0;
                _cleanup_close_ int child = openat(w.cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (child < 0)
                        return -errno;
                Node node;
                if ((r = node_of(child, &node)) < 0)
                        return r;
                if (S_ISLNK(node.mode) && !(last && (flags & O_NOFOLLOW))) {
                        if ((r = walk_link(&w, child, p, &todo)) < 0)
                                return r;
                        p = todo;
                        continue;
                }
                if ((r = walk_check_mount(&w, &node)) < 0)
                        return r;
                if (last)
                        return walk_open_last(w.cur, name, flags, &node);
                if (!S_ISDIR(node.mode))
                        return -ENOTDIR;
                if ((r = walk_push(&w, TAKE_FD(child), &node)) < 0)
                        return r;
        }
        int fd = openat(w.cur, ".", flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int path_open_resolve(int dirfd, const char *path, int flags, uint64_t resolve) {
        struct open_how how = { .flags = (uint64_t) (unsigned) flags, .resolve = resolve };
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd >= 0)
                return (int) fd;
        /* refused rather than failed: filtered (ENOSYS: systemd's
         * RestrictSUIDSGID=; EPERM: other filters), or older kernels */
        if (errno != ENOSYS && errno != EPERM && errno != EINVAL && errno != E2BIG)
                return -errno;
        if (resolve == 0) {
                fd = openat(dirfd, path, flags, 0);
                return fd < 0 ? -errno : (int) fd;
        }
        return walk(dirfd, path, flags, resolve);
}
