/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-tree-open: opens inside a foreign tree (a container's root) follow
 * symlinks only inside it: relative and absolute links resolve against the
 * tree's root, a link that climbs above the root or points at a host path
 * outside is refused with a reason, loops end, FIFOs and devices are never
 * opened (a whiteout is absence); Flatpak refs are validated. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic.h"
#include "debug-trees.h"
#include "test-check.h"
#include "tree-open.h"

static int dir_open(void *userdata, const char *path, int flags, char *shown, size_t shown_size) {
        int *dirfd = userdata;
        if (shown)
                snprintf(shown, shown_size, "tree%s", path);
        return safe_open_beneath(*dirfd, path, flags, false);
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                perror(path);
                exit(1);
        }
}

/* Reads the opened file's content (short test files). */
static void content(int fd, char *buf, size_t size) {
        ssize_t n = read(fd, buf, size - 1);
        buf[n < 0 ? 0 : n] = 0;
}

TEST(normalize_cleans_path) {
        char out[PATH_MAX];
        CHECK(tree_path_normalize("/usr//lib/./debug/", out, sizeof(out)) == 0 && strcmp(out, "/usr/lib/debug") == 0);
        CHECK(tree_path_normalize("/usr/lib/../bin/x", out, sizeof(out)) == 0 && strcmp(out, "/usr/bin/x") == 0);
        CHECK(tree_path_normalize("/a/..", out, sizeof(out)) == 0 && strcmp(out, "/") == 0);
}

TEST(normalize_refuses_escape_relative_and_long) {
        char out[PATH_MAX];
        CHECK(tree_path_normalize("/a/../../etc/shadow", out, sizeof(out)) == -EXDEV);
        CHECK(tree_path_normalize("relative", out, sizeof(out)) == -EINVAL);
        CHECK(tree_path_normalize("/aaaaaaaa", out, 5) == -ENAMETOOLONG);
}

/* The foreign tree of the link cases, made once: TMP/outside (the host
 * file the tree must never reach) and TMP/root, a tree with debug files,
 * links of every kind, a FIFO, a device and a whiteout under
 * /usr/lib/debug/.build-id/ab/. */
static char tree_tmp[] = "/tmp/periscope-tree-XXXXXX";
static int tree_root = -1;

static void must_ok(bool ok, const char *what, const char *path) {
        if (!ok) {
                fprintf(stderr, "FAIL: cannot set up the tree: %s %s: %m\n", what, path);
                exit(1);
        }
}

/* Makes `name` (below root/) a symbolic link to target. */
static void tree_link(const char *target, const char *name) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/root/%s", tree_tmp, name);
        must_ok(symlink(target, p) == 0, "symlink", p);
}

static void tree_node(const char *name, mode_t mode, dev_t dev) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/root/usr/lib/debug/.build-id/ab/%s", tree_tmp, name);
        must_ok((S_ISFIFO(mode) ? mkfifo(p, mode & 07777) : mknod(p, mode, dev)) == 0, "mknod", p);
}

static int tree(void) {
        if (tree_root >= 0)
                return tree_root;
        char p[PATH_MAX];
        must_ok(mkdtemp(tree_tmp) != NULL, "mkdtemp", tree_tmp);
        snprintf(p, sizeof(p), "%s/outside", tree_tmp);
        write_file(p, "host secret");
        snprintf(p, sizeof(p), "%s/root", tree_tmp);
        must_ok(mkdir(p, 0755) == 0, "mkdir", p);
        const char *dirs[] = { "usr", "usr/lib", "usr/lib/debug", "usr/lib/debug/.build-id", "usr/lib/debug/.build-id/ab",
                               "usr/lib/debug/usr", "usr/lib/debug/usr/bin", "lib64" };
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(p, sizeof(p), "%s/root/%s", tree_tmp, dirs[i]);
                must_ok(mkdir(p, 0755) == 0, "mkdir", p);
        }
        snprintf(p, sizeof(p), "%s/root/usr/lib/debug/usr/bin/app.debug", tree_tmp);
        write_file(p, "tree debug");
        snprintf(p, sizeof(p), "%s/root/outside", tree_tmp);
        write_file(p, "tree's own /outside");
        /* Fedora style: relative, within the tree */
        tree_link("../../usr/bin/app.debug", "usr/lib/debug/.build-id/ab/rel.debug");
        /* absolute: the tree's own /usr/lib/debug/…, never the host's */
        tree_link("/usr/lib/debug/usr/bin/app.debug", "usr/lib/debug/.build-id/ab/abs.debug");
        /* a directory link on the way */
        tree_link("usr/lib", "lib");
        /* climbs above the root towards the host file */
        char up[PATH_MAX];
        snprintf(up, sizeof(up), "../../../../../../..%s/outside", tree_tmp);
        tree_link(up, "usr/lib/debug/.build-id/ab/escape.debug");
        /* absolute host path: inside the tree it names the tree's /outside */
        tree_link("/outside", "usr/lib/debug/.build-id/ab/hostabs.debug");
        tree_link("loop2", "usr/lib/debug/.build-id/ab/loop1");
        tree_link("loop1", "usr/lib/debug/.build-id/ab/loop2");
        tree_link("/proc/self/root/etc/passwd", "usr/lib/debug/.build-id/ab/magic.debug");
        tree_node("fifo.debug", S_IFIFO | 0644, 0);
        tree_node("null.debug", S_IFCHR | 0644, makedev(1, 3)); /* /dev/null's numbers */
        tree_node("whiteout.debug", S_IFCHR | 0644, makedev(0, 0));
        tree_link("fifo.debug", "usr/lib/debug/.build-id/ab/tofifo.debug");
        snprintf(p, sizeof(p), "%s/root", tree_tmp);
        tree_root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        must_ok(tree_root >= 0, "open", p);
        return tree_root;
}

static void tree_remove(void) {
        if (tree_root < 0)
                return;
        tree_root = safe_close(tree_root);
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tree_tmp);
        CHECK(system(cmd) == 0);
}

/* What tree_open_following() says of path in the tree: the fd or the
 * negative errno, and the path shown and the reason. */
typedef struct Opened {
        int fd;
        char shown[PATH_MAX];
        char why[1024];
} Opened;

static void open_in_tree(const char *path, Opened *o) {
        int root = tree();
        o->shown[0] = o->why[0] = 0;
        _cleanup_free_ char *why = NULL;
        o->fd = tree_open_following(dir_open, &root, path, o->shown, sizeof(o->shown), &why);
        snprintf(o->why, sizeof(o->why), "%s", why ?: "");
}

/* Expects path to open, with the content `text`. */
static void expect_content(const char *path, const char *text, Opened *o) {
        char buf[64];
        open_in_tree(path, o);
        CHECK_MSG(o->fd >= 0, "%s: %s (%s)", path, strerror(-o->fd), o->why);
        if (o->fd >= 0) {
                content(o->fd, buf, sizeof(buf));
                CHECK_MSG(strcmp(buf, text) == 0, "%s holds '%s', not '%s'", path, buf, text);
                o->fd = safe_close(o->fd);
        }
}

/* Expects path to be refused with error, and the reason to say `reason` (unless NULL). */
static void expect_error(const char *path, int error, const char *reason) {
        Opened o;
        open_in_tree(path, &o);
        CHECK_MSG(o.fd == error, "%s: got %d, want %d (%s)", path, o.fd, error, strerror(-error));
        CHECK_MSG(!reason || strstr(o.why, reason), "%s: the reason '%s' does not say '%s'", path, o.why, reason);
        if (o.fd >= 0)
                safe_close(o.fd);
}

TEST(relative_link_followed_in_tree) {
        Opened o;
        expect_content("/usr/lib/debug/.build-id/ab/rel.debug", "tree debug", &o);
        CHECK(strcmp(o.shown, "tree/usr/lib/debug/usr/bin/app.debug") == 0);
        CHECK(strstr(o.why, "-> ../../usr/bin/app.debug") != NULL);
}

/* Absolute links resolve against the tree's root, links to directories
 * are followed on the way, and a host path names the tree's own file
 * (never "host secret"). */
TEST(links_resolved_against_tree_root) {
        static const char *const opens[][2] = {
                { "/usr/lib/debug/.build-id/ab/abs.debug", "tree debug" },
                { "/lib/debug/usr/bin/app.debug", "tree debug" },
                { "/usr/lib/debug/.build-id/ab/hostabs.debug", "tree's own /outside" },
        };
        for (size_t i = 0; i < ELEMENTSOF(opens); i++) {
                Opened o;
                expect_content(opens[i][0], opens[i][1], &o);
        }
}

TEST(ways_out_of_root_refused) {
        expect_error("/usr/lib/debug/.build-id/ab/escape.debug", -EXDEV, "leads out of the root");
        expect_error("/usr/../../outside", -EXDEV, NULL);
}

TEST(link_loop_ends) {
        expect_error("/usr/lib/debug/.build-id/ab/loop1", -ELOOP, "too many symbolic links");
}

/* Only regular files are debug files: a FIFO must not block us, a device
 * must not be opened, nor a directory, nor what a link to a FIFO names. */
TEST(only_regular_files_opened) {
        static const char *const paths[] = {
                "/usr/lib",
                "/usr/lib/debug/.build-id/ab/fifo.debug",
                "/usr/lib/debug/.build-id/ab/null.debug",
                "/usr/lib/debug/.build-id/ab/tofifo.debug",
        };
        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                expect_error(paths[i], -EBADF, NULL);
}

/* Nothing there: a whiteout, and the tree's own /proc/self/… */
TEST(whiteout_and_tree_proc_are_absent) {
        expect_error("/usr/lib/debug/.build-id/ab/whiteout.debug", -ENOENT, NULL);
        expect_error("/usr/lib/debug/.build-id/ab/magic.debug", -ENOENT, NULL);
}

TEST(resolver_open_of_fifo_returns_at_once) {
        /* the resolver's own opens (binaries in layers, app-path…) return at once too */
        int fd = safe_open_beneath(tree(), "usr/lib/debug/.build-id/ab/fifo.debug", O_RDONLY, false);
        CHECK(fd >= 0);
        struct stat fst;
        CHECK(fd >= 0 && fstat(fd, &fst) == 0 && S_ISFIFO(fst.st_mode));
        safe_close(fd);
}

TEST(flatpak_ref_split) {
        char id[256], arch[256], branch[256];
        CHECK(flatpak_ref_split("runtime/org.gnome.Platform/x86_64/46", id, arch, branch) == 0 &&
              strcmp(id, "org.gnome.Platform") == 0 && strcmp(arch, "x86_64") == 0 && strcmp(branch, "46") == 0);
        CHECK(flatpak_ref_split("org.example.Platform/aarch64/1.0", id, arch, branch) == 0 && strcmp(branch, "1.0") == 0);
}

TEST(flatpak_ref_split_refuses_malformed) {
        char id[256], arch[256], branch[256];
        CHECK(flatpak_ref_split("runtime/../x86_64/1.0", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime/a/x86_64/1.0/extra", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime/a/x86_64", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime/a b/x86_64/1", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime//x86_64/1", id, arch, branch) == -EINVAL);
}

TEST(flatpak_extension_open_refuses) {
        char shown[PATH_MAX];
        CHECK(flatpak_extension_open("../../etc", "x86_64", "1", 0, shown, sizeof(shown)) == -EINVAL);
        CHECK(flatpak_extension_open("org.periscope.NoSuch.Debug", "x86_64", "1", 0, shown, sizeof(shown)) == -ENOENT);
}

int main(int argc, char **argv) {
        int r = test_main(argc, argv);
        int before = failures;
        tree_remove();
        return r != 0 || failures > before ? 1 : 0;
}
