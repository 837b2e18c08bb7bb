/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-client-failures.c: the helper client under a misbehaving helper
 * (fake-helper through the real bwrap launcher): every hang, crash and
 * garbage answer costs exactly that file's symbols, with a reason, and the
 * next file is served by a fresh helper. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "helper-client.h"

#include "test-check.h"

static int file_with(const char *content) {
        int fd = memfd_create("test-file", MFD_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(write(fd, content, strlen(content)) == (ssize_t) strlen(content));
        return fd;
}

static void expect_ok(HelperClient *c) {
        _cleanup_close_ int fd = file_with("OK");
        uint64_t offs[3] = { 1, 2, 3 };
        HelperSymbols *s = NULL;
        char *why = NULL;
        int r = helper_client_symbolize(c, fd, -1, offs, 3, &s, &why);
        if (r < 0)
                fprintf(stderr, "valid request failed: %s\n", why);
        CHECK(r == 0);
        CHECK(s->n_addresses == 3);
        for (size_t i = 0; i < 3; i++) {
                CHECK(s->addresses[i].status == HELPER_ADDRESS_OK);
                CHECK(s->addresses[i].n_frames == 1);
                CHECK(strcmp(s->addresses[i].frames[0].name, "ok_function") == 0);
        }
        helper_symbols_free(s);
        free(why);
}

static void expect_failure(HelperClient *c, const char *mode, const char *reason) {
        unsigned starts = helper_client_get_starts(c);
        _cleanup_close_ int fd = file_with(mode);
        uint64_t off = 0x1000;
        HelperSymbols *s = NULL;
        char *why = NULL;
        int r = helper_client_symbolize(c, fd, -1, &off, 1, &s, &why);
        fprintf(stderr, "%s: r=%d why=%s\n", mode, r, why ? why : "(null)");
        CHECK(r == HELPER_CLIENT_FAILED);
        CHECK(s == NULL);
        CHECK(why && strncmp(why, "helper failed: ", 15) == 0);
        CHECK(strstr(why, reason));
        CHECK(helper_client_get_pid(c) == 0); /* killed and reaped */
        free(why);
        /* the next file works, with a new helper */
        expect_ok(c);
        CHECK(helper_client_get_starts(c) == starts + 1);
}

/* The one client of every case, made on first use: a helper failure must
 * not spoil the client for the case after it. */
static HelperClient *shared_client;

static HelperClient *client(void) {
        if (!shared_client) {
                HelperClientConfig cfg = { .helper_path = getenv("FAKE_HELPER"), .timeout_ms = 1500 };
                if (!cfg.helper_path) {
                        fprintf(stderr, "FAIL: FAKE_HELPER is not set (meson sets it)\n");
                        exit(1);
                }
                MUST(helper_client_new(&cfg, &shared_client));
        }
        return shared_client;
}

TEST(valid_request_served) {
        expect_ok(client());
        CHECK(helper_client_get_pid(client()) > 0);
}

TEST(hang_times_out) {
        expect_ok(client());
        pid_t hung = helper_client_get_pid(client());
        CHECK(hung > 0);
        expect_failure(client(), "HANG", "timed out after 1500 ms");
        CHECK(kill(hung, 0) < 0); /* the hung sandbox is gone, not a zombie */
}

TEST(crash_reported) {
#ifdef PERISCOPE_SANITIZED
        /* the sanitizer runtime catches the SIGSEGV and exits (or aborts) itself */
        expect_failure(client(), "CRASH",
                       getenv("ASAN_OPTIONS") && strstr(getenv("ASAN_OPTIONS"), "abort_on_error=1")
                               ? "crashed (signal 6"
                               : "exited with status 1");
#else
        expect_failure(client(), "CRASH", "crashed (signal 11");
#endif
}

TEST(exit_status_reported) {
        expect_failure(client(), "EXIT", "exited with status 3");
}

TEST(garbage_refused) {
        expect_failure(client(), "GARBAGE", "invalid answer");
}

TEST(wrong_request_id_refused) {
        expect_failure(client(), "WRONGID", "invalid answer");
}

TEST(wrong_message_type_refused) {
        expect_failure(client(), "WRONGTYPE", "invalid answer");
}

TEST(bad_utf8_refused) {
        expect_failure(client(), "BADUTF8", "invalid answer to SYMBOLIZE");
}

TEST(wrong_address_count_refused) {
        expect_failure(client(), "COUNT", "invalid answer to SYMBOLIZE");
}

TEST(too_many_frames_refused) {
        expect_failure(client(), "FRAMES", "invalid answer to SYMBOLIZE");
}

TEST(overlong_name_refused) {
        expect_failure(client(), "HUGE", "invalid answer to SYMBOLIZE");
}

TEST(unknown_status_refused) {
        expect_failure(client(), "NOSTATUS", "invalid answer to SYMBOLIZE");
}

TEST(extra_bytes_refused) {
        expect_failure(client(), "EXTRA", "invalid answer to SYMBOLIZE");
}

TEST(unsealed_memfd_refused) {
        expect_failure(client(), "UNSEALED", "invalid answer");
}

TEST(killed_between_requests) {
        /* the helper killed from outside between requests */
        expect_ok(client());
        pid_t p = helper_client_get_pid(client());
        CHECK(p > 0);
        if (p > 0)
                kill(p, SIGKILL);
        usleep(100 * 1000);
        _cleanup_close_ int fd = file_with("OK");
        uint64_t off = 1;
        HelperSymbols *s = NULL;
        char *why = NULL;
        int r = helper_client_symbolize(client(), fd, -1, &off, 1, &s, &why);
        fprintf(stderr, "killed: r=%d why=%s\n", r, why ? why : "-");
        CHECK(r == HELPER_CLIENT_FAILED && strstr(why, "helper failed"));
        free(why);
        expect_ok(client());
}

int main(int argc, char **argv) {
        int r = test_main(argc, argv);
        helper_client_free(shared_client);
        return r;
}
