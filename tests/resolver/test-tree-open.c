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

static void test_normalize(void) {
        char out[PATH_MAX];
        CHECK(tree_path_normalize("/usr//lib/./debug/", out, sizeof(out)) == 0 && strcmp(out, "/usr/lib/debug") == 0);
        CHECK(tree_path_normalize("/usr/lib/../bin/x", out, sizeof(out)) == 0 && strcmp(out, "/usr/bin/x") == 0);
        CHECK(tree_path_normalize("/a/..", out, sizeof(out)) == 0 && strcmp(out, "/") == 0);
        CHECK(tree_path_normalize("/a/../../etc/shadow", out, sizeof(out)) == -EXDEV);
        CHECK(tree_path_normalize("relative", out, sizeof(out)) == -EINVAL);
        CHECK(tree_path_normalize("/aaaaaaaa", out, 5) == -ENAMETOOLONG);
}

static void test_links(void) {
        char tmpl[] = "/tmp/periscope-tree-XXXXXX", p[PATH_MAX], shown[PATH_MAX], buf[64];
        _cleanup_free_ char *why = NULL;
        CHECK(mkdtemp(tmpl) != NULL);
        /* outside the tree: a file the tree must never reach */
        snprintf(p, sizeof(p), "%s/outside", tmpl);
        write_file(p, "host secret");
        snprintf(p, sizeof(p), "%s/root", tmpl);
        mkdir(p, 0755);
        const char *dirs[] = { "usr", "usr/lib", "usr/lib/debug", "usr/lib/debug/.build-id", "usr/lib/debug/.build-id/ab",
                               "usr/lib/debug/usr", "usr/lib/debug/usr/bin", "lib64" };
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(p, sizeof(p), "%s/root/%s", tmpl, dirs[i]);
                CHECK(mkdir(p, 0755) == 0);
        }
        snprintf(p, sizeof(p), "%s/root/usr/lib/debug/usr/bin/app.debug", tmpl);
        write_file(p, "tree debug");
        snprintf(p, sizeof(p), "%s/root/outside", tmpl);
        write_file(p, "tree's own /outside");
#define LINK(target, name)                                                  \
        do {                                                                \
                snprintf(p, sizeof(p), "%s/root/%s", tmpl, name);           \
                CHECK(symlink(target, p) == 0);                             \
        } while (0)
        /* Fedora style: relative, within the tree */
        LINK("../../usr/bin/app.debug", "usr/lib/debug/.build-id/ab/rel.debug");
        /* absolute: the tree's own /usr/lib/debug/…, never the host's */
        LINK("/usr/lib/debug/usr/bin/app.debug", "usr/lib/debug/.build-id/ab/abs.debug");
        /* a directory link on the way */
        LINK("usr/lib", "lib");
        /* climbs above the root towards the host file */
        char up[PATH_MAX];
        snprintf(up, sizeof(up), "../../../../../../..%s/outside", tmpl);
        LINK(up, "usr/lib/debug/.build-id/ab/escape.debug");
        /* absolute host path: inside the tree it names the tree's /outside */
        snprintf(up, sizeof(up), "/outside");
        LINK(up, "usr/lib/debug/.build-id/ab/hostabs.debug");
        LINK("loop2", "usr/lib/debug/.build-id/ab/loop1");
        LINK("loop1", "usr/lib/debug/.build-id/ab/loop2");
        LINK("/proc/self/root/etc/passwd", "usr/lib/debug/.build-id/ab/magic.debug");

        snprintf(p, sizeof(p), "%s/root", tmpl);
        _cleanup_close_ int root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(root >= 0);
        int fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/rel.debug", shown, sizeof(shown),
                                     &why);
        CHECK(fd >= 0);
        if (fd >= 0) {
                content(fd, buf, sizeof(buf));
                CHECK(strcmp(buf, "tree debug") == 0);
                CHECK(strcmp(shown, "tree/usr/lib/debug/usr/bin/app.debug") == 0);
                CHECK(why && strstr(why, "-> ../../usr/bin/app.debug") != NULL);
                close(fd);
        }
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/abs.debug", shown, sizeof(shown), &why);
        CHECK(fd >= 0);
        if (fd >= 0) {
                content(fd, buf, sizeof(buf));
                CHECK(strcmp(buf, "tree debug") == 0);
                close(fd);
        }
        fd = tree_open_following(dir_open, &root, "/lib/debug/usr/bin/app.debug", shown, sizeof(shown), &why);
        CHECK(fd >= 0);
        safe_close(fd);
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/escape.debug", shown, sizeof(shown),
                                 &why);
        CHECK(fd == -EXDEV);
        CHECK(why && strstr(why, "leads out of the root") != NULL);
        safe_close(fd);
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/hostabs.debug", shown, sizeof(shown),
                                 &why);
        CHECK(fd >= 0);
        if (fd >= 0) {
                content(fd, buf, sizeof(buf));
                CHECK(strcmp(buf, "tree's own /outside") == 0); /* never "host secret" */
                close(fd);
        }
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/loop1", shown, sizeof(shown), &why);
        CHECK(fd == -ELOOP);
        CHECK(why && strstr(why, "too many symbolic links") != NULL);
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/magic.debug", shown, sizeof(shown),
                                 &why);
        CHECK(fd == -ENOENT); /* the tree's own /proc/self/…: nothing there */
        safe_close(fd);
        fd = tree_open_following(dir_open, &root, "/usr/../../outside", shown, sizeof(shown), &why);
        CHECK(fd == -EXDEV);
        fd = tree_open_following(dir_open, &root, "/usr/lib", shown, sizeof(shown), &why);
        CHECK(fd == -EBADF); /* a directory is not a debug file */

        /* A FIFO must not block us, a device must not be opened, a whiteout is absence. */
        snprintf(p, sizeof(p), "%s/root/usr/lib/debug/.build-id/ab/fifo.debug", tmpl);
        CHECK(mkfifo(p, 0644) == 0);
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/fifo.debug", shown, sizeof(shown), &why);
        CHECK(fd == -EBADF);
        snprintf(p, sizeof(p), "%s/root/usr/lib/debug/.build-id/ab/null.debug", tmpl);
        CHECK(mknod(p, S_IFCHR | 0644, makedev(1, 3)) == 0); /* /dev/null's numbers */
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/null.debug", shown, sizeof(shown), &why);
        CHECK(fd == -EBADF);
        snprintf(p, sizeof(p), "%s/root/usr/lib/debug/.build-id/ab/whiteout.debug", tmpl);
        CHECK(mknod(p, S_IFCHR | 0644, makedev(0, 0)) == 0);
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/whiteout.debug", shown, sizeof(shown),
                                 &why);
        CHECK(fd == -ENOENT);
        /* the resolver's own opens (binaries in layers, app-path…) return at once too */
        fd = safe_open_beneath(root, "usr/lib/debug/.build-id/ab/fifo.debug", O_RDONLY, false);
        CHECK(fd >= 0);
        struct stat fst;
        CHECK(fd >= 0 && fstat(fd, &fst) == 0 && S_ISFIFO(fst.st_mode));
        safe_close(fd);
        LINK("fifo.debug", "usr/lib/debug/.build-id/ab/tofifo.debug");
        fd = tree_open_following(dir_open, &root, "/usr/lib/debug/.build-id/ab/tofifo.debug", shown, sizeof(shown),
                                 &why);
        CHECK(fd == -EBADF);

        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        CHECK(system(cmd) == 0);
}

static void test_flatpak_refs(void) {
        char id[256], arch[256], branch[256];
        CHECK(flatpak_ref_split("runtime/org.gnome.Platform/x86_64/46", id, arch, branch) == 0 &&
              strcmp(id, "org.gnome.Platform") == 0 && strcmp(arch, "x86_64") == 0 && strcmp(branch, "46") == 0);
        CHECK(flatpak_ref_split("org.example.Platform/aarch64/1.0", id, arch, branch) == 0 && strcmp(branch, "1.0") == 0);
        CHECK(flatpak_ref_split("runtime/../x86_64/1.0", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime/a/x86_64/1.0/extra", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime/a/x86_64", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime/a b/x86_64/1", id, arch, branch) == -EINVAL);
        CHECK(flatpak_ref_split("runtime//x86_64/1", id, arch, branch) == -EINVAL);
        char shown[PATH_MAX];
        CHECK(flatpak_extension_open("../../etc", "x86_64", "1", 0, shown, sizeof(shown)) == -EINVAL);
        CHECK(flatpak_extension_open("org.periscope.NoSuch.Debug", "x86_64", "1", 0, shown, sizeof(shown)) == -ENOENT);
}

int main(void) {
        test_normalize();
        test_links();
        test_flatpak_refs();
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        printf("ok: tree-open and Flatpak ref checks passed\n");
        return 0;
}
