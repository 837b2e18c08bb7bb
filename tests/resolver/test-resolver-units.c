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

static void test_mountinfo(void) {
        const char *text =
                "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
                "115 26 0:61 / /mnt/top rw,relatime - btrfs /dev/loop0 rw,subvolid=5,subvol=/\n"
                "116 26 0:61 /@home /mnt/my\\040home rw,relatime shared:5 - btrfs /dev/loop0 rw,subvolid=256,subvol=/@home\n"
                "117 26 7:3 /ostree/deploy/os/deploy/abc.0 /sysroot rw - ext4 /dev/loop3 rw\n";
        MountTable *t = NULL;
        const char *rest = NULL;
        CHECK(mount_table_parse(text, &t) == 0);
        CHECK(t && t->n_entries == 4);
        if (!t)
                return;
        const MountEntry *e = mount_table_find_by_path(t, "/mnt/my home/bin/spin", &rest);
        CHECK(e && e->mount_id == 116 && strcmp(rest, "bin/spin") == 0 && strcmp(e->root, "/@home") == 0);
        char sv[64];
        CHECK(e && mount_option_get(e->super_options, "subvol", sv, sizeof(sv)) == 0 && strcmp(sv, "/@home") == 0);
        e = mount_table_find_by_path(t, "/mnt/topx/a", &rest);
        CHECK(e && e->mount_id == 26);
        e = mount_table_find_by_path(t, "/sysroot", &rest);
        CHECK(e && e->mount_id == 117 && rest[0] == 0);
        CHECK(mount_table_find_by_id(t, 115) != NULL && mount_table_find_by_id(t, 9) == NULL);
        mount_table_free(t);
        t = NULL;
        CHECK(mount_table_parse("garbage line\n", &t) == -EBADMSG);
        CHECK(mount_table_parse("1 2 3:4 relative / rw - ext4 x rw\n", &t) == -EBADMSG);
        CHECK(mount_table_load(0, &t) == 0 && t && t->n_entries > 0);
        mount_table_free(t);
}

static void test_safe_open(void) {
        char dir[] = "/tmp/periscope-safe-open-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_close_ int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(d >= 0);
        CHECK(mkdirat(d, "sub", 0755) == 0);
        int f = openat(d, "sub/file", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(f >= 0 && write(f, "hello", 5) == 5);
        safe_close(f);
        CHECK(symlinkat("/etc/passwd", d, "sub/link") == 0);
        CHECK(symlinkat("loop", d, "sub/loop") == 0);
        int fd = safe_open_beneath(d, "/sub/file", O_RDONLY, true);
        CHECK(fd >= 0);
        char *buf = NULL;
        size_t len = 0;
        CHECK(fd >= 0 && read_fd_bounded(fd, 100, false, &buf, &len) == 0 && len == 5 && strcmp(buf, "hello") == 0);
        free(buf);
        safe_close(fd);
        CHECK(safe_open_beneath(d, "sub/link", O_RDONLY, true) == -ELOOP);
        CHECK(safe_open_beneath(d, "sub/loop", O_RDONLY, true) == -ELOOP);
        CHECK(safe_open_beneath(d, "sub/../../etc/passwd", O_RDONLY, true) == -EXDEV);
        fd = safe_open_beneath(d, "sub/file", O_RDONLY, true);
        buf = NULL;
        CHECK(fd >= 0 && read_fd_bounded(fd, 4, false, &buf, &len) == -EFBIG && buf == NULL);
        safe_close(fd);
        CHECK(is_hex_id("0123456789abcdef", 16) && !is_hex_id("0123456789ABCDEF", 16) && !is_hex_id("../..", 5));
        unlinkat(d, "sub/file", 0);
        unlinkat(d, "sub/link", 0);
        unlinkat(d, "sub/loop", 0);
        unlinkat(d, "sub", AT_REMOVEDIR);
        rmdir(dir);
}

int main(void) {
        test_mountinfo();
        test_safe_open();
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        printf("all resolver unit checks passed\n");
        return 0;
}
