/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-path-walk.c: path_open_resolve() (basic/path-walk.h) against a real
 * tree, one table run three times: the kernel's openat2() itself (that the
 * table says what openat2 does), path_open_resolve() with openat2, and
 * path_open_resolve() in a child where a seccomp filter answers openat2
 * with ENOSYS, as systemd's RestrictSUIDSGID= does (tests/lib/no-openat2.h):
 * the walk alone. Symbolic links in every position, "..", absolute links
 * in and beneath a root, a loop, 40 links and 41, /proc's magic links, a
 * tmpfs and a bind mount for RESOLVE_NO_XDEV (in a mount namespace of the
 * test's own). Needs root. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"
#include "no-openat2.h"
#include "test-check.h"

#define CONFINED (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define BENEATH_LINKS (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

enum { AT_ROOT, AT_MNT, AT_PROC, AT_CWD };

/* One open: from where, what; and what must come of it: an errno, or the
 * inode at `target` (relative to the same directory; lstat'ed). */
typedef struct Case {
        int at;
        const char *path;
        int flags;
        uint64_t resolve;
        int error;
        const char *target;
} Case;

static const Case cases[] = {
        /* beneath, no symbolic link (safe_open_beneath) */
        { AT_ROOT, "dir/file", O_RDONLY, CONFINED, 0, "dir/file" },
        { AT_ROOT, "/dir/file", O_RDONLY, CONFINED, EXDEV, NULL },
        { AT_ROOT, "dir/../dir/file", O_RDONLY, CONFINED, 0, "dir/file" },
        { AT_ROOT, "dir/sub/../../dir/./file", O_RDONLY, CONFINED, 0, "dir/file" },
        { AT_ROOT, "../root/dir/file", O_RDONLY, CONFINED, EXDEV, NULL },
        { AT_ROOT, "dir/../../root/dir/file", O_RDONLY, CONFINED, EXDEV, NULL },
        { AT_ROOT, "..", O_PATH, CONFINED, EXDEV, NULL },
        { AT_ROOT, "rel", O_RDONLY, CONFINED, ELOOP, NULL },
        { AT_ROOT, "dirlink/file", O_RDONLY, CONFINED, ELOOP, NULL },
        { AT_ROOT, "dir/sublink/x", O_RDONLY, CONFINED, ELOOP, NULL },
        { AT_ROOT, "rel", O_RDONLY | O_NOFOLLOW, CONFINED, ELOOP, NULL },
        { AT_ROOT, "rel", O_PATH | O_NOFOLLOW, CONFINED, 0, "rel" },
        { AT_ROOT, "missing", O_RDONLY, CONFINED, ENOENT, NULL },
        { AT_ROOT, "dir/missing/x", O_RDONLY, CONFINED, ENOENT, NULL },
        { AT_ROOT, "", O_RDONLY, CONFINED, ENOENT, NULL },
        { AT_ROOT, "dir/file/", O_RDONLY, CONFINED, ENOTDIR, NULL },
        { AT_ROOT, "dir/file/x", O_RDONLY, CONFINED, ENOTDIR, NULL },
        { AT_ROOT, "dir/file", O_RDONLY | O_DIRECTORY, CONFINED, ENOTDIR, NULL },
        { AT_ROOT, "dir//sub/", O_RDONLY | O_DIRECTORY, CONFINED, 0, "dir/sub" },
        { AT_ROOT, "dir", O_WRONLY, CONFINED, EISDIR, NULL },
        { AT_ROOT, ".", O_PATH | O_DIRECTORY, CONFINED, 0, "." },
        { AT_ROOT, "dir/..", O_RDONLY | O_DIRECTORY, CONFINED, 0, "." },
        { AT_ROOT, "mnt/f", O_RDONLY, CONFINED, 0, "mnt/f" },
        { AT_ROOT, "bind/file", O_RDONLY, CONFINED, 0, "dir/file" },
        /* beneath, symbolic links followed (debug files under a debug root) */
        { AT_ROOT, "rel", O_RDONLY, BENEATH_LINKS, 0, "dir/file" },
        { AT_ROOT, "abs", O_RDONLY, BENEATH_LINKS, EXDEV, NULL },
        { AT_ROOT, "up", O_RDONLY, BENEATH_LINKS, EXDEV, NULL },
        { AT_ROOT, "dirlink/file", O_RDONLY, BENEATH_LINKS, 0, "dir/file" },
        { AT_ROOT, "dir/sublink/file", O_RDONLY, BENEATH_LINKS, 0, "dir/file" },
        { AT_ROOT, "dirlink_abs/file", O_RDONLY, BENEATH_LINKS, EXDEV, NULL },
        { AT_ROOT, "dir/../rel", O_RDONLY, BENEATH_LINKS, 0, "dir/file" },
        { AT_ROOT, "loop1", O_RDONLY, BENEATH_LINKS, ELOOP, NULL },
        { AT_ROOT, "c0", O_RDONLY, BENEATH_LINKS, 0, "dir/file" },
        { AT_ROOT, "cx", O_RDONLY, BENEATH_LINKS, ELOOP, NULL },
        { AT_ROOT, "rel/", O_RDONLY, BENEATH_LINKS, ENOTDIR, NULL },
        { AT_ROOT, "dirlink/", O_RDONLY | O_NOFOLLOW, BENEATH_LINKS, 0, "dir" },
        /* in a root, links followed inside it (the caller's opener with follow_links) */
        { AT_ROOT, "abs", O_RDONLY, IN_ROOT, 0, "dir/file" },
        { AT_ROOT, "/dir/file", O_RDONLY, IN_ROOT, 0, "dir/file" },
        { AT_ROOT, "up", O_RDONLY, IN_ROOT, 0, "outside/decoy" },
        { AT_ROOT, "../../../dir/file", O_RDONLY, IN_ROOT, 0, "dir/file" },
        { AT_ROOT, "dirlink_abs/../decoy", O_RDONLY, IN_ROOT, 0, "decoy" },
        { AT_ROOT, "dir/uplink/dir/file", O_RDONLY, IN_ROOT, 0, "dir/file" },
        { AT_ROOT, "loop1", O_RDONLY, IN_ROOT, ELOOP, NULL },
        { AT_ROOT, "c0", O_RDONLY, IN_ROOT, 0, "dir/file" },
        { AT_ROOT, "cx", O_RDONLY, IN_ROOT, ELOOP, NULL },
        { AT_ROOT, "rel", O_RDONLY | O_NOFOLLOW, IN_ROOT, ELOOP, NULL },
        { AT_ROOT, "abs", O_PATH | O_NOFOLLOW, IN_ROOT, 0, "abs" },
        { AT_ROOT, "abs", O_RDONLY, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS, ELOOP, NULL },
        { AT_ROOT, "mntlink/f", O_RDONLY, IN_ROOT, 0, "mnt/f" },
        /* not scoped: absolute links lead to the host's "/" */
        { AT_ROOT, "abs", O_RDONLY, RESOLVE_NO_MAGICLINKS, ENOENT, NULL },
        { AT_ROOT, "abs", O_RDONLY, RESOLVE_NO_SYMLINKS, ELOOP, NULL },
        { AT_ROOT, "rel", O_RDONLY, RESOLVE_NO_XDEV, 0, "dir/file" },
        { AT_ROOT, "/", O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV, 0, "/" },
        { AT_ROOT, "/", O_PATH, IN_ROOT, 0, "." },
        { AT_ROOT, "abs", O_RDONLY, RESOLVE_NO_XDEV, EXDEV, NULL },
        /* no crossing of mounts: a tmpfs, a bind mount (same st_dev), ".." out of a mount */
        { AT_ROOT, "mnt/f", O_RDONLY, CONFINED | RESOLVE_NO_XDEV, EXDEV, NULL },
        { AT_ROOT, "mnt", O_PATH, CONFINED | RESOLVE_NO_XDEV, EXDEV, NULL },
        { AT_ROOT, "bind/file", O_RDONLY, CONFINED | RESOLVE_NO_XDEV, EXDEV, NULL },
        { AT_ROOT, "dir/file", O_RDONLY, CONFINED | RESOLVE_NO_XDEV, 0, "dir/file" },
        { AT_ROOT, "mntlink/f", O_RDONLY, IN_ROOT | RESOLVE_NO_XDEV, EXDEV, NULL },
        { AT_MNT, "f", O_RDONLY, CONFINED | RESOLVE_NO_XDEV, 0, "f" },
        { AT_MNT, "../dir/file", O_RDONLY, RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV, EXDEV, NULL },
        { AT_MNT, "../dir/file", O_RDONLY, RESOLVE_NO_SYMLINKS, 0, "../dir/file" },
        { AT_MNT, "..", O_PATH, IN_ROOT, 0, "." },
        /* /proc's magic links (AT_PROC is /proc/PID of the process that opens) */
        { AT_PROC, "status", O_RDONLY, CONFINED, 0, "status" },
        { AT_PROC, "exe", O_RDONLY, IN_ROOT, ELOOP, NULL },
        { AT_PROC, "exe", O_RDONLY, BENEATH_LINKS, ELOOP, NULL },
        { AT_PROC, "exe", O_RDONLY, RESOLVE_NO_MAGICLINKS, ELOOP, NULL },
        { AT_PROC, "fd/0", O_RDONLY, BENEATH_LINKS, ELOOP, NULL },
        { AT_PROC, "root/etc", O_PATH, IN_ROOT, ELOOP, NULL },
        { AT_PROC, "cwd/.", O_PATH, RESOLVE_NO_MAGICLINKS, ELOOP, NULL },
        { AT_PROC, "exe", O_PATH | O_NOFOLLOW, IN_ROOT, 0, "exe" },
        { AT_CWD, "/proc/self/exe", O_RDONLY, RESOLVE_NO_MAGICLINKS, ELOOP, NULL },
        /* refused as openat2 refuses it */
        { AT_ROOT, "dir/file", O_RDONLY, RESOLVE_BENEATH | RESOLVE_IN_ROOT, EINVAL, NULL },
};

static char tmp[] = "/tmp/periscope-path-walk.XXXXXX";

static void must(int ok, const char *what) {
        if (!ok) {
                fprintf(stderr, "FAIL: cannot set up the tree: %s: %m\n", what);
                exit(1);
        }
}

static void put(const char *name, const char *text) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", tmp, name);
        FILE *f = fopen(p, "we");
        must(f && fputs(text, f) >= 0 && fclose(f) == 0, p);
}

static void dir(const char *name) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", tmp, name);
        must(mkdir(p, 0755) == 0, p);
}

static void link_to(const char *target, const char *name) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", tmp, name);
        must(symlink(target, p) == 0, p);
}

/* The test's tree on a tmpfs of its own, in its own mount namespace:
 * root/ is the directory every AT_ROOT case starts from. */
static bool tree_made;

static void make_tree(void) {
        if (tree_made)
                return;
        tree_made = true;
        must(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS)");
        must(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "mount --make-rprivate /");
        must(mkdtemp(tmp) != NULL, "mkdtemp");
        must(mount("periscope-test", tmp, "tmpfs", 0, "mode=0755") == 0, "mount tmpfs");
        dir("outside");
        put("outside/decoy", "outside\n");
        dir("root");
        dir("root/dir");
        dir("root/dir/sub");
        put("root/dir/file", "inside\n");
        put("root/decoy", "decoy\n");
        dir("root/outside");
        put("root/outside/decoy", "clamped\n");
        link_to("dir/file", "root/rel");
        link_to("/dir/file", "root/abs");
        link_to("../outside/decoy", "root/up");
        link_to("dir", "root/dirlink");
        link_to("/dir", "root/dirlink_abs");
        link_to(".", "root/dir/sublink");
        link_to("../../..", "root/dir/uplink");
        link_to("loop2", "root/loop1");
        link_to("loop1", "root/loop2");
        link_to("/mnt", "root/mntlink");
        /* c0 -> c1 -> ... -> c39 -> dir/file: 40 links; cx -> c0: 41 */
        for (int i = 0; i < 40; i++) {
                char name[32], target[32];
                snprintf(name, sizeof(name), "root/c%d", i);
                if (i == 39)
                        snprintf(target, sizeof(target), "dir/file");
                else
                        snprintf(target, sizeof(target), "c%d", i + 1);
                link_to(target, name);
        }
        link_to("c0", "root/cx");
        dir("root/mnt");
        char p[256], q[256];
        snprintf(p, sizeof(p), "%s/root/mnt", tmp);
        must(mount("periscope-test-mnt", p, "tmpfs", 0, "mode=0755") == 0, "mount tmpfs on root/mnt");
        put("root/mnt/f", "mnt\n");
        dir("root/bind");
        snprintf(p, sizeof(p), "%s/root/dir", tmp);
        snprintf(q, sizeof(q), "%s/root/bind", tmp);
        must(mount(p, q, NULL, MS_BIND, NULL) == 0, "bind mount root/dir on root/bind");
}

static int open_at(int at) {
        char p[256];
        make_tree();
        switch (at) {
        case AT_ROOT:
                snprintf(p, sizeof(p), "%s/root", tmp);
                break;
        case AT_MNT:
                snprintf(p, sizeof(p), "%s/root/mnt", tmp);
                break;
        case AT_PROC:
                snprintf(p, sizeof(p), "/proc/%d", (int) getpid());
                break;
        default:
                return AT_FDCWD;
        }
        int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        must(fd >= 0, p);
        return fd;
}

static int raw_openat2(int dirfd, const char *path, int flags, uint64_t resolve) {
        struct open_how how = { .flags = (uint64_t) (unsigned) flags, .resolve = resolve };
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        return fd < 0 ? -errno : (int) fd;
}

/* Runs every case through open_fn; returns the number that differ from the table. */
static int run(const char *how, int (*open_fn)(int, const char *, int, uint64_t)) {
        int bad = 0;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Case *c = &cases[i];
                int at = open_at(c->at);
                int fd = open_fn(at, c->path, c->flags | O_CLOEXEC, c->resolve);
                char got[128] = "", want[128] = "";
                if (c->error)
                        snprintf(want, sizeof(want), "%s", strerror(c->error));
                else
                        snprintf(want, sizeof(want), "%s", c->target);
                if (fd < 0)
                        snprintf(got, sizeof(got), "%s", strerror(-fd));
                else {
                        struct stat a, b;
                        int fl = fcntl(fd, F_GETFL);
                        if (c->error == 0 && fstatat(fd, "", &a, AT_EMPTY_PATH) == 0 &&
                            fstatat(at, c->target, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
                            a.st_ino == b.st_ino && (fl & O_PATH) == (c->flags & O_PATH) &&
                            (fl & O_ACCMODE) == (c->flags & O_ACCMODE))
                                snprintf(got, sizeof(got), "%s", c->target);
                        else
                                snprintf(got, sizeof(got), "an fd of inode %llu, flags 0%o",
                                         (unsigned long long) a.st_ino, (unsigned) fl);
                        close(fd);
                }
                if (strcmp(got, want) != 0) {
                        fprintf(stderr, "FAIL: %s: case %zu (%s, flags 0%o, resolve 0x%llx): want %s, got %s\n", how, i,
                                c->path, (unsigned) c->flags, (unsigned long long) c->resolve, want, got);
                        bad++;
                }
                if (at >= 0)
                        close(at);
        }
        printf("%s: %zu cases, %d differ from the table\n", how, ELEMENTSOF(cases), bad);
        return bad;
}

TEST(statx_gives_mount_id) {
        struct statx sx;
        if (statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
                fail("statx gives no mount id: the bind mount case cannot be told from st_dev");
}

TEST(openat2_answers_here) {
        CHECK(!openat2_forbidden());
}

TEST(table_says_what_openat2_does) {
        if (run("the kernel's openat2", raw_openat2) > 0)
                fail("the table does not say what openat2 does");
}

TEST(path_open_resolve_with_openat2) {
        if (run("path_open_resolve with openat2", path_open_resolve) > 0)
                fail("path_open_resolve differs from openat2");
}

TEST(walk_without_openat2) {
        make_tree();
        pid_t pid = fork();
        must(pid >= 0, "fork");
        if (pid == 0) {
                int r = forbid_openat2();
                if (r < 0 || !openat2_forbidden()) {
                        fprintf(stderr, "FAIL: the seccomp filter is not on: %s\n",
                                r < 0 ? strerror(-r) : "openat2 answers");
                        _exit(2);
                }
                int bad = run("path_open_resolve, openat2 answering ENOSYS (the walk)", path_open_resolve);
                fflush(stdout);
                _exit(bad > 0 ? 1 : 0);
        }
        int st = 0;
        must(waitpid(pid, &st, 0) == pid, "waitpid");
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the walk differs from openat2 (status 0x%x)", (unsigned) st);
}

int main(int argc, char **argv) {
        if (getuid() != 0) {
                fprintf(stderr, "FAIL: needs root (a mount namespace with a tmpfs and a bind mount)\n");
                return 1;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        int r = test_main(argc, argv);
        if (tree_made) {
                char cmd[128];
                snprintf(cmd, sizeof(cmd), "umount -R %s && rmdir %s", tmp, tmp);
                if (system(cmd) != 0) {
                        fprintf(stderr, "FAIL: cannot remove %s\n", tmp);
                        return 1;
                }
        }
        return r;
}
