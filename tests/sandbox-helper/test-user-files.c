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

/* The one client of every case, made on first use; the helper it starts
 * serves every file of the run. */
static HelperClient *shared_client;

static HelperClient *client(void) {
        if (!shared_client)
                MUST(helper_client_new(NULL, &shared_client));
        return shared_client;
}

/* Every rejection was the helper's verdict, not a crash: the one helper
 * started by the first request is still the one answering. */
static void expect_helper_still_up(void) {
        unsigned starts = helper_client_get_starts(client());
        CHECK_MSG(starts == 1, "the helper was started %u times: a file crashed it", starts);
}

static const char containers_json[] =
        "[{\"id\":\"" ID("b") "\",\"names\":[\"other\"],\"layer\":\"" L2 "\"},"
                              "{\"id\":\"" CID "\",\"names\":[\"web\",\"alias\"],\"image\":\"" IMG "\",\"layer\":\"" L1
                              "\","
                              "\"metadata\":{\"deep\":[1,2,{\"x\":null}]},\"created\":1.5e3}]";

TEST(container_found_by_alias) {
        HelperPodmanContainer pc;
        _cleanup_free_ char *why = NULL;
        _cleanup_close_ int fd = file_with(containers_json, strlen(containers_json));
        CHECK(helper_client_podman_container(client(), fd, "alias", &pc, &why) == 0);
        CHECK(strcmp(pc.id, CID) == 0 && strcmp(pc.name, "web") == 0 && strcmp(pc.image_id, IMG) == 0 &&
              strcmp(pc.layer, L1) == 0);
        expect_helper_still_up();
}

TEST(container_found_by_id_prefix) {
        HelperPodmanContainer pc;
        _cleanup_free_ char *why = NULL;
        _cleanup_close_ int fd = file_with(containers_json, strlen(containers_json));
        CHECK(helper_client_podman_container(client(), fd, "cccccccccccc", &pc, &why) == 0 && strcmp(pc.id, CID) == 0);
        expect_helper_still_up();
}

TEST(unknown_container_not_found) {
        HelperPodmanContainer pc;
        _cleanup_free_ char *why = NULL;
        _cleanup_close_ int fd = file_with(containers_json, strlen(containers_json));
        CHECK(helper_client_podman_container(client(), fd, "nobody", &pc, &why) == -ENOENT);
        expect_helper_still_up();
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
                printf("  the helper on %s: %s\n", what, why);
}

TEST(invalid_utf8_rejected) {
        expect_rejected(client(), "invalid UTF-8", "[{\"id\":\"\xff\xfe\"}]", 14, -EBADMSG, "invalid UTF-8 at byte 8");
        expect_helper_still_up();
}

TEST(deep_nesting_rejected) {
        size_t n = 100000;
        _cleanup_free_ char *deep = malloc(2 * n);
        MUST(deep ? 0 : -ENOMEM);
        memset(deep, '[', n);
        memset(deep + n, ']', n);
        expect_rejected(client(), "100 000 nested arrays", deep, 2 * n, -EBADMSG, "nested deeper than 64 levels");
        expect_helper_still_up();
}

TEST(top_level_object_rejected) {
        expect_rejected(client(), "a top level that is an object", "{\"containers\":[]}", 17, -EBADMSG,
                        "top level is not an array");
        expect_helper_still_up();
}

TEST(truncated_json_rejected) {
        const char *truncated = "[{\"id\":\"" CID "\"";
        expect_rejected(client(), "truncated", truncated, strlen(truncated), -EBADMSG, "not valid JSON / UTF-8 (");
        expect_helper_still_up();
}

TEST(numeric_layer_rejected) {
        const char *wrong = "[{\"id\":\"" CID "\",\"names\":[\"web\"],\"layer\":12345}]";
        expect_rejected(client(), "a layer that is a number", wrong, strlen(wrong), -EINVAL, "not 64 hex digits");
        expect_helper_still_up();
}

TEST(wrong_types_are_absent_values) {
        /* wrong types elsewhere are absent values: names as a string, ids as numbers */
        const char *odd = "[{\"id\":17,\"names\":\"web\"},7,null,\"x\",{\"id\":\"" CID "\",\"names\":[3,\"web\"],\"layer\":\"" L1 "\"}]";
        _cleanup_close_ int fd = file_with(odd, strlen(odd));
        HelperPodmanContainer pc;
        CHECK(helper_client_podman_container(client(), fd, "web", &pc, NULL) == 0 && strcmp(pc.id, CID) == 0 &&
              strcmp(pc.name, "") == 0);
        expect_helper_still_up();
}

TEST(long_name_cut_to_field_size) {
        /* a 64 KiB name comes back cut to the protocol's 255 bytes */
        size_t big = 65536;
        _cleanup_free_ char *huge = malloc(big + 200);
        MUST(huge ? 0 : -ENOMEM);
        int k = snprintf(huge, big + 200, "[{\"id\":\"%s\",\"layer\":\"%s\",\"names\":[\"", CID, L1);
        memset(huge + k, 'n', big);
        strcpy(huge + k + big, "\"]}]");
        _cleanup_close_ int fd = file_with(huge, strlen(huge));
        HelperPodmanContainer pc;
        CHECK(helper_client_podman_container(client(), fd, CID, &pc, NULL) == 0 && strlen(pc.name) == HELPER_MAX_FIELD);
        expect_helper_still_up();
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
                printf("  the helper on %s%s%s\n", what, why ? ": " : "", why ? why : "");
}

TEST(layer_chain_of_two) {
        expect_chain(client(), "two layers", "[{\"id\":\"" L2 "\"},{\"id\":\"" L1 "\",\"parent\":\"" L2 "\"}]", 0, NULL,
                     2);
        expect_helper_still_up();
}

TEST(layer_cycle_rejected) {
        expect_chain(client(), "a cycle",
                     "[{\"id\":\"" L2 "\",\"parent\":\"" L1 "\"},{\"id\":\"" L1 "\",\"parent\":\"" L2 "\"}]", -EINVAL,
                     "cycle at", 0);
        expect_helper_still_up();
}

TEST(missing_parent_layer_rejected) {
        expect_chain(client(), "a missing parent", "[{\"id\":\"" L1 "\",\"parent\":\"" L2 "\"}]", -EINVAL, "is missing",
                     0);
        expect_helper_still_up();
}

TEST(parent_path_rejected) {
        expect_chain(client(), "a parent path", "[{\"id\":\"" L1 "\",\"parent\":\"../../etc\"}]", -EINVAL,
                     "is not a layer id", 0);
        expect_helper_still_up();
}

TEST(parent_of_wrong_type_rejected) {
        expect_chain(client(), "a parent of the wrong type", "[{\"id\":\"" L1 "\",\"parent\":[1]}]", -EINVAL,
                     "is not a string", 0);
        expect_helper_still_up();
}

TEST(overlong_layer_chain_rejected) {
        /* 200 layers in a line */
        size_t size = 200 * 160 + 16, len = 1;
        _cleanup_free_ char *many = malloc(size);
        MUST(many ? 0 : -ENOMEM);
        many[0] = '[';
        for (unsigned i = 0; i < 200; i++)
                len += (size_t) snprintf(many + len, size - len, "%s{\"id\":\"%s%064x\",\"parent\":\"%064x\"}",
                                         i ? "," : "", "", i, i + 1);
        snprintf(many + len, size - len, ",{\"id\":\"%s\",\"parent\":\"%064x\"}]", L1, 0);
        expect_chain(client(), "200 layers", many, -EINVAL, "more than 128 layers", 0);
        expect_helper_still_up();
}

TEST(image_name) {
        const char *json = "[{\"id\":\"" IMG "\",\"names\":[\"localhost/app:latest\"]}]";
        _cleanup_close_ int fd = file_with(json, strlen(json));
        char name[HELPER_MAX_FIELD + 1];
        CHECK(helper_client_podman_image_name(client(), fd, IMG, name, NULL) == 0 &&
              strcmp(name, "localhost/app:latest") == 0);
        expect_helper_still_up();
}

TEST(flatpak_info_parsed) {
        const char *text = "[Application]\nname=org.example.App\nruntime=runtime/org.example.Platform/x86_64/1.0\n\n"
                           "[Instance]\ninstance-id=12345\napp-path=/var/lib/flatpak/app/org.example.App/x/y/files\n"
                           "runtime-path=/var/lib/flatpak/runtime/org.example.Platform/x/1.0/z/files\n";
        _cleanup_close_ int fd = file_with(text, strlen(text));
        HelperFlatpakInfo fi;
        CHECK(helper_client_flatpak_info(client(), fd, &fi, NULL) == 0);
        CHECK(strcmp(fi.name, "org.example.App") == 0 && strcmp(fi.instance_id, "12345") == 0 &&
              strcmp(fi.app_path, "/var/lib/flatpak/app/org.example.App/x/y/files") == 0 &&
              strncmp(fi.runtime_path, "/var/lib/flatpak/runtime/", 25) == 0);
        expect_helper_still_up();
}

TEST(broken_flatpak_info_rejected) {
        static const char *const bad[][2] = {
                { "[Instance]\napp-path=/x\n", "no [Application] name" },
                { "[unterminated\nname=x\n", "not a valid keyfile" },
                { "[Application]\nname=\xff\xfe\n", "no [Application] name" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_close_ int fd = file_with(bad[i][0], strlen(bad[i][0]));
                _cleanup_free_ char *why = NULL;
                HelperFlatpakInfo fi;
                int r = helper_client_flatpak_info(client(), fd, &fi, &why);
                CHECK_MSG(r == -EBADMSG && why && strstr(why, bad[i][1]), "flatpak-info #%zu: %d (%s)", i, r, why ? why : "-");
                if (why)
                        printf("  the helper on /.flatpak-info #%zu: %s\n", i, why);
        }
        expect_helper_still_up();
}

int main(int argc, char **argv) {
        int r = test_main(argc, argv);
        helper_client_free(shared_client);
        return r;
}
