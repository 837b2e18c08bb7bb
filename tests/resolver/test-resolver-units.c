/* test-resolver-units: the resolver's parsers on hostile and real input:
 * strict JSON (UTF-8, escapes, depth, size), mountinfo (escapes, btrfs and
 * OSTree roots, longest-prefix lookup), /.flatpak-info, beneath-only opens. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "container-info.h"
#include "json-value.h"
#include "mountinfo.h"
#include "test-check.h"

static int parse(const char *s, JsonValue **v) {
        return json_parse(s, strlen(s), 1000, v, NULL);
}

static void test_json(void) {
        JsonValue *v = NULL;
        CHECK(parse("[{\"id\":\"ab\",\"names\":[\"x\",\"y\"],\"n\":-1.5e3,\"t\":true,\"z\":null}]", &v) == 0);
        CHECK(v && v->type == JSON_ARRAY && v->n_items == 1);
        if (v && v->n_items == 1) {
                CHECK(strcmp(json_object_get_string(v->items[0], "id"), "ab") == 0);
                CHECK(json_object_get(v->items[0], "n")->number == -1500);
                CHECK(json_object_get(v->items[0], "names")->n_items == 2);
                CHECK(json_object_get_string(v->items[0], "missing") == NULL);
        }
        json_value_free(v);
        v = NULL;
        CHECK(parse("\"\\u00e9\\ud83d\\ude00\"", &v) == 0);
        CHECK(v && strcmp(v->string, "\xc3\xa9\xf0\x9f\x98\x80") == 0);
        json_value_free(v);

        static const char *const bad[] = {
                "", "[", "[1,]", "{\"a\":1,}", "[01]", "[1.]", "{'a':1}", "[1] x", "\"\xff\"",
                "\"\xc0\xaf\"",               /* overlong '/' */
                "\"\xed\xa0\x80\"",           /* UTF-8 encoded surrogate */
                "\"\xf4\x90\x80\x80\"",       /* beyond U+10FFFF */
                "\"\\ud800\"", "\"\\udc00\"", "\"\\u0000\"", "\"a\nb\"", "\"\\x\"", "tru", "nul", "[1 2]",
                "\"abc\\", "/* c */ 1",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                v = NULL;
                int r = parse(bad[i], &v);
                if (r != -EBADMSG)
                        fprintf(stderr, "accepted bad JSON #%zu\n", i);
                CHECK(r == -EBADMSG && v == NULL);
        }
        /* Depth bomb and value-count limit. */
        char deep[2 * JSON_MAX_DEPTH + 10];
        memset(deep, '[', JSON_MAX_DEPTH + 5);
        memset(deep + JSON_MAX_DEPTH + 5, ']', JSON_MAX_DEPTH + 5);
        v = NULL;
        CHECK(json_parse(deep, 2 * JSON_MAX_DEPTH + 10, 100000, &v, NULL) == -EBADMSG);
        CHECK(json_parse("[1,2,3,4,5]", 11, 3, &v, NULL) == -E2BIG);
}

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

static void test_flatpak_info(void) {
        ContainerInfo info = { 0 };
        const char *text = "[Application]\nname=org.example.App\nruntime=runtime/org.example.Platform/x86_64/1.0\n\n"
                           "[Instance]\ninstance-id=12345\napp-path=/var/lib/flatpak/app/org.example.App/x/y/files\n"
                           "runtime-path=/var/lib/flatpak/runtime/org.example.Platform/x/1.0/z/files\n";
        CHECK(flatpak_info_parse(text, &info) == 0);
        CHECK(strcmp(info.name, "org.example.App") == 0);
        CHECK(strcmp(info.id, "12345") == 0);
        CHECK(strcmp(info.app_path, "/var/lib/flatpak/app/org.example.App/x/y/files") == 0);
        CHECK(strncmp(info.runtime_path, "/var/lib/flatpak/runtime/", 25) == 0);
        ContainerInfo none = { 0 };
        CHECK(flatpak_info_parse("[Instance]\napp-path=/x\n", &none) == -EBADMSG);
        CHECK(flatpak_info_parse("[unterminated\n", &none) == -EBADMSG);
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
        test_json();
        test_mountinfo();
        test_flatpak_info();
        test_safe_open();
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        printf("all resolver unit checks passed\n");
        return 0;
}
