/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-resolver-units: the resolver's parsers on hostile and real input:
 * mountinfo (escapes, btrfs and OSTree roots, longest-prefix lookup),
 * beneath-only opens. (Podman's JSON and /.flatpak-info are the helper's:
 * tests/sandbox-helper/test-user-files.c.) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "container-info.h"
#include "mountinfo.h"
#include "test-check.h"

/* A table of four mounts: the root, a btrfs top level, a btrfs subvolume
 * at an escaped path, an OSTree deployment. */
static MountTable *sample_table(void) {
        const char *text =
                "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
                "115 26 0:61 / /mnt/top rw,relatime - btrfs /dev/loop0 rw,subvolid=5,subvol=/\n"
                "116 26 0:61 /@home /mnt/my\\040home rw,relatime shared:5 - btrfs /dev/loop0 rw,subvolid=256,subvol=/@home\n"
                "117 26 7:3 /ostree/deploy/os/deploy/abc.0 /sysroot rw - ext4 /dev/loop3 rw\n";
        MountTable *t = NULL;
        CHECK(mount_table_parse(text, &t) == 0);
        CHECK(t && t->n_entries == 4);
        if (!t) {
                fprintf(stderr, "FAIL: mount_table_parse gave no table\n");
                exit(1);
        }
        return t;
}

TEST(mountinfo_escaped_path_and_btrfs_subvolume) {
        MountTable *t = sample_table();
        const char *rest = NULL;
        const MountEntry *e = mount_table_find_by_path(t, "/mnt/my home/bin/spin", &rest);
        CHECK(e && e->mount_id == 116 && strcmp(rest, "bin/spin") == 0 && strcmp(e->root, "/@home") == 0);
        char sv[64];
        CHECK(e && mount_option_get(e->super_options, "subvol", sv, sizeof(sv)) == 0 && strcmp(sv, "/@home") == 0);
        mount_table_free(t);
}

TEST(mountinfo_prefix_is_whole_components) {
        MountTable *t = sample_table();
        const char *rest = NULL;
        const MountEntry *e = mount_table_find_by_path(t, "/mnt/topx/a", &rest);
        CHECK(e && e->mount_id == 26);
        mount_table_free(t);
}

TEST(mountinfo_mount_point_itself) {
        MountTable *t = sample_table();
        const char *rest = NULL;
        const MountEntry *e = mount_table_find_by_path(t, "/sysroot", &rest);
        CHECK(e && e->mount_id == 117 && rest[0] == 0);
        mount_table_free(t);
}

TEST(mountinfo_find_by_id) {
        MountTable *t = sample_table();
        CHECK(mount_table_find_by_id(t, 115) != NULL && mount_table_find_by_id(t, 9) == NULL);
        mount_table_free(t);
}

TEST(mountinfo_garbage_rejected) {
        MountTable *t = NULL;
        CHECK(mount_table_parse("garbage line\n", &t) == -EBADMSG);
        CHECK(mount_table_parse("1 2 3:4 relative / rw - ext4 x rw\n", &t) == -EBADMSG);
}

TEST(mountinfo_of_this_process) {
        MountTable *t = NULL;
        CHECK(mount_table_load(0, &t) == 0 && t && t->n_entries > 0);
        mount_table_free(t);
}

/* A directory with sub/file ("hello"), sub/link -> /etc/passwd and a
 * self-loop sub/loop; removed by tree_remove(). */
typedef struct Tree {
        char dir[64];
        int fd;
} Tree;

static void tree_make(Tree *t) {
        snprintf(t->dir, sizeof(t->dir), "/tmp/periscope-safe-open-XXXXXX");
        MUST(mkdtemp(t->dir) ? 0 : -errno);
        t->fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        MUST(t->fd < 0 ? -errno : 0);
        MUST(mkdirat(t->fd, "sub", 0755) < 0 ? -errno : 0);
        int f = openat(t->fd, "sub/file", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(f >= 0 && write(f, "hello", 5) == 5);
        safe_close(f);
        CHECK(symlinkat("/etc/passwd", t->fd, "sub/link") == 0);
        CHECK(symlinkat("loop", t->fd, "sub/loop") == 0);
}

static void tree_remove(Tree *t) {
        unlinkat(t->fd, "sub/file", 0);
        unlinkat(t->fd, "sub/link", 0);
        unlinkat(t->fd, "sub/loop", 0);
        unlinkat(t->fd, "sub", AT_REMOVEDIR);
        safe_close(t->fd);
        rmdir(t->dir);
}

TEST(safe_open_beneath_reads_file) {
        Tree t;
        tree_make(&t);
        int fd = safe_open_beneath(t.fd, "/sub/file", O_RDONLY, true);
        CHECK(fd >= 0);
        char *buf = NULL;
        size_t len = 0;
        CHECK(fd >= 0 && read_fd_bounded(fd, 100, false, &buf, &len) == 0 && len == 5 && strcmp(buf, "hello") == 0);
        free(buf);
        safe_close(fd);
        tree_remove(&t);
}

TEST(safe_open_beneath_refuses_links) {
        Tree t;
        tree_make(&t);
        CHECK(safe_open_beneath(t.fd, "sub/link", O_RDONLY, true) == -ELOOP);
        CHECK(safe_open_beneath(t.fd, "sub/loop", O_RDONLY, true) == -ELOOP);
        tree_remove(&t);
}

TEST(safe_open_beneath_refuses_escape) {
        Tree t;
        tree_make(&t);
        CHECK(safe_open_beneath(t.fd, "sub/../../etc/passwd", O_RDONLY, true) == -EXDEV);
        tree_remove(&t);
}

TEST(read_bounded_refuses_larger_file) {
        Tree t;
        tree_make(&t);
        int fd = safe_open_beneath(t.fd, "sub/file", O_RDONLY, true);
        char *buf = NULL;
        size_t len = 0;
        CHECK(fd >= 0 && read_fd_bounded(fd, 4, false, &buf, &len) == -EFBIG && buf == NULL);
        safe_close(fd);
        tree_remove(&t);
}

TEST(hex_ids) {
        CHECK(is_hex_id("0123456789abcdef", 16) && !is_hex_id("0123456789ABCDEF", 16) && !is_hex_id("../..", 5));
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
