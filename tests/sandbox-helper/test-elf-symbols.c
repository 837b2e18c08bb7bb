/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-elf-symbols: the real helper (in its sandbox) places named symbols
 * of a mapped ELF file (ELF_SYMBOLS, how the daemon finds an interpreter's
 * _PyRuntime): this test's own functions land where they run, missing
 * names are missing, a file that is no ELF or an offset in no executable
 * segment is refused with the helper still up, and answers that lie
 * (flags, addresses beyond user space, trailing bytes) are refused. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include "basic.h"
#include "helper-client.h"
#include "test-check.h"

/* What the helper must find, with its size, in this very file. */
__attribute__((noinline, used)) int elf_symbols_marker(int x);
__attribute__((noinline, used)) int elf_symbols_marker(int x) {
        return x * 3 + 1;
}
int elf_symbols_data[64] = { 1 };

static HelperClient *shared_client;

static HelperClient *client(void) {
        if (!shared_client)
                MUST(helper_client_new(NULL, &shared_client));
        return shared_client;
}

/* This program's executable mapping that holds addr: start and file offset. */
static void own_mapping(uint64_t addr, uint64_t *start, uint64_t *pgoff) {
        FILE *f = fopen("/proc/self/maps", "re");
        char line[512];
        MUST(f ? 0 : -errno);
        while (fgets(line, sizeof line, f)) {
                uint64_t s, e, o;
                char perms[8];
                if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64, &s, &e, perms, &o) == 4 && addr >= s &&
                    addr < e && perms[2] == 'x') {
                        *start = s;
                        *pgoff = o;
                        fclose(f);
                        return;
                }
        }
        fclose(f);
        abort();
}

static void expect_helper_still_up(void) {
        unsigned starts = helper_client_get_starts(client());
        CHECK_MSG(starts == 1, "the helper was started %u times: a request crashed it", starts);
}

TEST(own_symbols_land_where_they_run) {
        uint64_t start, pgoff;
        own_mapping((uint64_t) (uintptr_t) elf_symbols_marker, &start, &pgoff);
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        MUST(fd < 0 ? -errno : 0);
        const char *names[] = { "elf_symbols_marker", "elf_symbols_data", "no_such_symbol_anywhere" };
        HelperElfSymbol sym[3];
        _cleanup_free_ char *why = NULL;
        int r = helper_client_elf_symbols(client(), fd, start, pgoff, names, 3, sym, &why);
        CHECK_MSG(r == 0, "ELF_SYMBOLS: %d %s", r, why ? why : "");
        CHECK_MSG(sym[0].found && sym[0].address == (uint64_t) (uintptr_t) elf_symbols_marker && sym[0].size > 0,
                  "marker at 0x%" PRIx64 " (size %" PRIu64 "), runs at %p", sym[0].address, sym[0].size,
                  (void *) elf_symbols_marker);
        CHECK_MSG(sym[1].found && sym[1].address == (uint64_t) (uintptr_t) elf_symbols_data &&
                          sym[1].size == sizeof elf_symbols_data,
                  "data at 0x%" PRIx64 ", is at %p", sym[1].address, (void *) elf_symbols_data);
        CHECK(!sym[2].found && sym[2].address == 0);
        expect_helper_still_up();
}

TEST(interpreter_has_its_runtime) {
        _cleanup_close_ int fd = open("/usr/bin/python3.11", O_RDONLY | O_CLOEXEC);
        MUST(fd < 0 ? -errno : 0);
        const char *names[] = { "_PyRuntime", "_PyEval_EvalFrameDefault", "Py_Version" };
        HelperElfSymbol sym[3];
        _cleanup_free_ char *why = NULL;
        /* Debian's build is no PIE: its text segment (file offset 0x1f000)
         * is mapped at its own vaddr, 0x41f000, where nm's values hold */
        int r = helper_client_elf_symbols(client(), fd, 0x41f000, 0x1f000, names, 3, sym, &why);
        CHECK_MSG(r == 0, "ELF_SYMBOLS: %d %s", r, why ? why : "");
        CHECK_MSG(sym[0].found && sym[0].address == 0xa5b740 && sym[1].found && sym[1].address == 0x52b0f0 &&
                          sym[1].size > 0 && sym[2].found && sym[2].address == 0x8cc3e8 && sym[2].size == 8,
                  "_PyRuntime 0x%" PRIx64 ", _PyEval_EvalFrameDefault 0x%" PRIx64 ", Py_Version 0x%" PRIx64,
                  sym[0].address, sym[1].address, sym[2].address);
        expect_helper_still_up();
}

TEST(no_elf_refused) {
        _cleanup_close_ int fd = memfd_create("not-elf", MFD_CLOEXEC);
        MUST(fd < 0 || write(fd, "#!/bin/sh\n", 10) != 10 ? -EIO : 0);
        const char *names[] = { "_PyRuntime" };
        HelperElfSymbol sym[1];
        _cleanup_free_ char *why = NULL;
        CHECK(helper_client_elf_symbols(client(), fd, 0x1000, 0, names, 1, sym, &why) == -ENOEXEC);
        expect_helper_still_up();
}

TEST(offset_in_no_executable_segment_refused) {
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        const char *names[] = { "elf_symbols_marker" };
        HelperElfSymbol sym[1];
        _cleanup_free_ char *why = NULL;
        CHECK(helper_client_elf_symbols(client(), fd, 0x10000, 1ull << 40, names, 1, sym, &why) == -ENOENT);
        expect_helper_still_up();
}

TEST(bad_names_refused_before_asking) {
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        const char *names[HELPER_MAX_ELF_SYMBOLS + 1] = {};
        for (size_t i = 0; i <= HELPER_MAX_ELF_SYMBOLS; i++)
                names[i] = "x";
        HelperElfSymbol sym[HELPER_MAX_ELF_SYMBOLS + 1];
        CHECK(helper_client_elf_symbols(client(), fd, 0, 0, names, HELPER_MAX_ELF_SYMBOLS + 1, sym, NULL) == -EINVAL);
        const char *empty[] = { "" };
        CHECK(helper_client_elf_symbols(client(), fd, 0, 0, empty, 1, sym, NULL) == -EINVAL);
}

/* A reply: p_vaddr, p_offset, then (found, value, size) per name. */
static size_t reply(uint8_t *buf, uint64_t vaddr, uint64_t offset, uint8_t found, uint64_t value, uint64_t size) {
        size_t n = 0;
        memcpy(buf + n, &vaddr, 8), n += 8;
        memcpy(buf + n, &offset, 8), n += 8;
        buf[n++] = found;
        memcpy(buf + n, &value, 8), n += 8;
        memcpy(buf + n, &size, 8), n += 8;
        return n;
}

TEST(lying_answers_refused) {
        uint8_t buf[64];
        HelperElfSymbol sym[1];
        size_t n = reply(buf, 0x1000, 0x1000, 1, 0x2000, 16);
        CHECK(helper_elf_symbols_reply_decode(buf, n, 0x555500001000, 0x1000, 1, sym) == 0 &&
              sym[0].address == 0x555500002000);
        n = reply(buf, 0x1000, 0x1000, 2, 0x2000, 16); /* found is 0 or 1 */
        CHECK(helper_elf_symbols_reply_decode(buf, n, 0x555500001000, 0x1000, 1, sym) == -EBADMSG);
        n = reply(buf, 0x1000, 0x1000, 0, 0x2000, 0); /* not found, yet a value */
        CHECK(helper_elf_symbols_reply_decode(buf, n, 0x555500001000, 0x1000, 1, sym) == -EBADMSG);
        n = reply(buf, 0x1000, 0x1000, 1, 0x2000, 16);
        CHECK(helper_elf_symbols_reply_decode(buf, n + 1, 0x555500001000, 0x1000, 1, sym) == -EBADMSG);
        CHECK(helper_elf_symbols_reply_decode(buf, n - 1, 0x555500001000, 0x1000, 1, sym) == -EBADMSG);
        n = reply(buf, 0x1000, 0x1000, 1, 0xffff800000000000ull, 16); /* beyond user space */
        CHECK(helper_elf_symbols_reply_decode(buf, n, 0x555500001000, 0x1000, 1, sym) == -ERANGE);
        n = reply(buf, 0x1000, 0x1000, 1, 0x2000, UINT64_MAX); /* a size that wraps */
        CHECK(helper_elf_symbols_reply_decode(buf, n, 0x555500001000, 0x1000, 1, sym) == -ERANGE);
        n = reply(buf, 0x1000, 0x9000, 1, 0x2000, 16); /* a segment after the mapping's offset */
        CHECK(helper_elf_symbols_reply_decode(buf, n, 0x555500001000, 0x1000, 1, sym) == -EBADMSG);
}

int main(int argc, char **argv) {
        int r = test_main(argc, argv);
        helper_client_free(shared_client);
        return r;
}
