/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-user-files: the real helper (in its sandbox) parses the files users
 * write for the daemon: Podman's containers.json, layers.json, images.json
 * and /.flatpak-info. Real files and hostile ones: invalid UTF-8, 100 000
 * nested arrays, a top level that is no array, wrong types, 64 KiB names,
 * layer cycles, missing layers, over-long chains, broken keyfiles. Each
 * rejection says why, and the helper stays up for the next file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "helper-client.h"
#include "test-check.h"

static int file_with(const char *text, size_t len) {
        int fd = memfd_create("user-file", MFD_CLOEXEC);
        if (fd < 0 || write(fd, text, len) != (ssize_t) len || lseek(fd, 0, SEEK_SET) < 0)
                abort();
        return fd;
}

#define ID(c) c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c
#define CID ID("c")
#define L1 ID("1")
#define L2 ID("2")
#define IMG ID("a")

static void test_containers(HelperClient *c) {
        const char *json = "[{\"id\":\"" ID("b") "\",\"names\":[\"other\"],\"layer\":\"" L2 "\"},"
                           "{\"id\":\"" CID "\",\"names\":[\"web\",\"alias\"],\"image\":\"" IMG "\",\"layer\":\"" L1 "\","
                           "\"metadata\":{\"deep\":[1,2,{\"x\":null}]},\"created\":1.5e3}]";
        HelperPodmanContainer pc;
        _cleanup_free_ char *why = NULL;
        _cleanup_close_ int fd = file_with(json, strlen(json));
        CHECK(helper_client_podman_container(c, fd, "alias", &pc, &why) == 0);
        CHECK(strcmp(pc.id, CID) == 0 && strcmp(pc.name, "web") == 0 && strcmp(pc.image_id, IMG) == 0 &&
              strcmp(pc.layer, L1) == 0);
        safe_close(fd);
        fd = file_with(json, strlen(json));
        CHECK(helper_client_podman_container(c, fd, "cccccccccccc", &pc, &why) == 0 && strcmp(pc.id, CID) == 0);
        safe_close(fd);
        fd = file_with(json, strlen(json));
        CHECK(helper_client_podman_container(c, fd, "nobody", &pc, &why) == -ENOENT);
}

/* Expects type's rejection of text with a reason containing reason. */
static void expect_rejected(HelperClient *c, const char *what, const char *text, size_t len, int error, const char *reason) {
        _cleanup_close_ int fd = file_with(text, len);
        _cleanup_free_ char *why = NULL;
        HelperPodmanContainer pc;
        int r = helper_client_podman_container(c, fd, "web", &pc, &why);
        CHECK_MSG(r == error && why && strstr(why, reason), "%s: got %d (%s), expected %d (%s)", what, r,
                  why ? why : "-", error, reason);
        if (r == error)
                printf("ok: %s: %s\n", what, why);
}

static void test_hostile_json(HelperClient *c) {
        unsigned starts = helper_client_get_starts(c);
        expect_rejected(c, "invalid UTF-8", "[{\"id\":\"\xff\xfe\"}]", 14, -EBADMSG, "invalid UTF-8 at byte 8");
        size_t n = 100000;
        _cleanup_free_ char *deep = malloc(2 * n);
        memset(deep, '[', n);
        memset(deep + n, ']', n);
        expect_rejected(c, "100 000 nested arrays", deep, 2 * n, -EBADMSG, "nested deeper than 64 levels");
        expect_rejected(c, "a top level that is an object", "{\"containers\":[]}", 17, -EBADMSG, "top level is not an array");
        const char *truncated = "[{\"id\":\"" CID "\"";
        expect_rejected(c, "truncated", truncated, strlen(truncated), -EBADMSG, "not valid JSON / UTF-8 (");
        const char *wrong = "[{\"id\":\"" CID "\",\"names\":[\"web\"],\"layer\":12345}]";
        expect_rejected(c, "a layer that is a number", wrong, strlen(wrong), -EINVAL, "not 64 hex digits");
        /* wrong types elsewhere are absent values: names as a string, ids as numbers */
        const char *odd = "[{\"id\":17,\"names\":\"web\"},7,null,\"x\",{\"id\":\"" CID "\",\"names\":[3,\"web\"],\"layer\":\"" L1 "\"}]";
        _cleanup_close_ int fd = file_with(odd, strlen(odd));
        HelperPodmanContainer pc;
        CHECK(helper_client_podman_container(c, fd, "web", &pc, NULL) == 0 && strcmp(pc.id, CID) == 0 &&
              strcmp(pc.name, "") == 0);
        /* a 64 KiB name comes back cut to the protocol's 255 bytes */
        size_t big = 65536;
        _cleanup_free_ char *huge = malloc(big + 200);
        int k = snprintf(huge, big + 200, "[{\"id\":\"%s\",\"layer\":\"%s\",\"names\":[\"", CID, L1);
        memset(huge + k, 'n', big);
        strcpy(huge + k + big, "\"]}]");
        safe_close(fd);
        fd = file_with(huge, strlen(huge));
        CHECK(helper_client_podman_container(c, fd, CID, &pc, NULL) == 0 && strlen(pc.name) == HELPER_MAX_FIELD);
        CHECK(helper_client_get_starts(c) == starts); /* every rejection was the helper's verdict, not a crash */
}

static void expect_chain(HelperClient *c, const char *what, const char *json, int error, const char *reason, size_t want_n) {
        _cleanup_close_ int fd = file_with(json, strlen(json));
        _cleanup_free_ char *why = NULL;
        char layers[HELPER_MAX_LAYERS][65];
        size_t n = 0;
        int r = helper_client_podman_layers(c, fd, L1, layers, &n, &why);
        CHECK_MSG(r == error && (error < 0 ? why && strstr(why, reason) : n == want_n), "%s: got %d (%s), n %zu", what, r,
                  why ? why : "-", n);
        if (r == error)
                printf("ok: %s%s%s\n", what, why ? ": " : "", why ? why : "");
}

static void test_layers(HelperClient *c) {
        expect_chain(c, "two layers", "[{\"id\":\"" L2 "\"},{\"id\":\"" L1 "\",\"parent\":\"" L2 "\"}]", 0, NULL, 2);
        expect_chain(c, "a cycle", "[{\"id\":\"" L2 "\",\"parent\":\"" L1 "\"},{\"id\":\"" L1 "\",\"parent\":\"" L2 "\"}]",
                     -EINVAL, "cycle at", 0);
        expect_chain(c, "a missing parent", "[{\"id\":\"" L1 "\",\"parent\":\"" L2 "\"}]", -EINVAL, "is missing", 0);
        expect_chain(c, "a parent path", "[{\"id\":\"" L1 "\",\"parent\":\"../../etc\"}]", -EINVAL, "is not a layer id", 0);
        expect_chain(c, "a parent of the wrong type", "[{\"id\":\"" L1 "\",\"parent\":[1]}]", -EINVAL, "is not a string", 0);
        /* 200 layers in a line */
        size_t size = 200 * 160 + 16, len = 1;
        _cleanup_free_ char *many = malloc(size);
        many[0] = '[';
        for (unsigned i = 0; i < 200; i++)
                len += (size_t) snprintf(many + len, size - len, "%s{\"id\":\"%s%064x\",\"parent\":\"%064x\"}",
                                         i ? "," : "", "", i, i + 1);
        snprintf(many + len, size - len, ",{\"id\":\"%s\",\"parent\":\"%064x\"}]", L1, 0);
        expect_chain(c, "200 layers", many, -EINVAL, "more than 128 layers", 0);
}

static void test_image(HelperClient *c) {
        const char *json = "[{\"id\":\"" IMG "\",\"names\":[\"localhost/app:latest\"]}]";
        _cleanup_close_ int fd = file_with(json, strlen(json));
        char name[HELPER_MAX_FIELD + 1];
        CHECK(helper_client_podman_image_name(c, fd, IMG, name, NULL) == 0 && strcmp(name, "localhost/app:latest") == 0);
}

static void test_flatpak_info(HelperClient *c) {
        const char *text = "[Application]\nname=org.example.App\nruntime=runtime/org.example.Platform/x86_64/1.0\n\n"
                           "[Instance]\ninstance-id=12345\napp-path=/var/lib/flatpak/app/org.example.App/x/y/files\n"
                           "runtime-path=/var/lib/flatpak/runtime/org.example.Platform/x/1.0/z/files\n";
        _cleanup_close_ int fd = file_with(text, strlen(text));
        HelperFlatpakInfo fi;
        CHECK(helper_client_flatpak_info(c, fd, &fi, NULL) == 0);
        CHECK(strcmp(fi.name, "org.example.App") == 0 && strcmp(fi.instance_id, "12345") == 0 &&
              strcmp(fi.app_path, "/var/lib/flatpak/app/org.example.App/x/y/files") == 0 &&
              strncmp(fi.runtime_path, "/var/lib/flatpak/runtime/", 25) == 0);
        static const char *const bad[][2] = {
                { "[Instance]\napp-path=/x\n", "no [Application] name" },
                { "[unterminated\nname=x\n", "not a valid keyfile" },
                { "[Application]\nname=\xff\xfe\n", "no [Application] name" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                safe_close(fd);
                fd = file_with(bad[i][0], strlen(bad[i][0]));
                _cleanup_free_ char *why = NULL;
                int r = helper_client_flatpak_info(c, fd, &fi, &why);
                CHECK_MSG(r == -EBADMSG && why && strstr(why, bad[i][1]), "flatpak-info #%zu: %d (%s)", i, r, why ? why : "-");
                if (why)
                        printf("ok: /.flatpak-info #%zu: %s\n", i, why);
        }
}

int main(void) {
        HelperClient *c = NULL;
        CHECK(helper_client_new(NULL, &c) == 0);
        if (!c)
                return 1;
        test_containers(c);
        test_hostile_json(c);
        test_layers(c);
        test_image(c);
        test_flatpak_info(c);
        CHECK(helper_client_get_starts(c) == 1);
        helper_client_free(c);
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        printf("all user-file checks passed\n");
        return 0;
}
