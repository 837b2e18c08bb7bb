/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-symbolize-cache.c: the helper keeps the file it last symbolized
 * open between SYMBOLIZE requests (sandbox-helper/symbolize-module.c); the
 * answers must stay those of the bytes the request's fd holds:
 *   - the same file asked twice answers the same, byte for byte;
 *   - the same fd (one inode) rewritten with another program between two
 *     requests answers with the new program's names;
 *   - another file with the first program answers with the first names.
 * Drives the request handler in-process, as the helper's loop does.
 * usage: test-symbolize-cache TARGET_ALPHA TARGET_GAMMA [CASE...] */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "helper-client.h"
#include "helper-server.h"
#include "test-check.h"

/* File offset of the function `name` in the ELF file at path, or 0. */
static uint64_t function_offset(const char *path, const char *name) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
        uint64_t vaddr = 0, offset = 0;
        Elf_Scn *scn = NULL;
        while (elf && !vaddr && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
                        continue;
                Elf_Data *d = elf_getdata(scn, NULL);
                for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *n = gelf_getsym(d, (int) i, &sym) ? elf_strptr(elf, sh.sh_link, sym.st_name) : NULL;
                        if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
                                vaddr = sym.st_value;
                }
        }
        size_t phnum = 0;
        if (elf && elf_getphdrnum(elf, &phnum) == 0)
                for (size_t i = 0; i < phnum && vaddr; i++) {
                        GElf_Phdr ph;
                        if (gelf_getphdr(elf, (int) i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
                            vaddr - ph.p_vaddr < ph.p_filesz)
                                offset = ph.p_offset + (vaddr - ph.p_vaddr);
                }
        if (elf)
                elf_end(elf);
        return offset;
}

/* Replaces the contents of fd by the file at path; moves its mtime a
 * second on, as a later write would (tmpfs times are coarse). */
static void rewrite(int fd, const char *path) {
        _cleanup_close_ int in = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(in >= 0);
        CHECK(ftruncate(fd, 0) == 0);
        char buf[65536];
        ssize_t n;
        while (in >= 0 && (n = read(in, buf, sizeof buf)) > 0)
                CHECK(pwrite(fd, buf, (size_t) n, lseek(fd, 0, SEEK_END)) == n);
        struct stat st;
        CHECK(fstat(fd, &st) == 0);
        struct timespec times[2] = { st.st_atim, { st.st_mtim.tv_sec + 1, st.st_mtim.tv_nsec } };
        CHECK(futimens(fd, times) == 0);
}

/* One SYMBOLIZE request of one offset; the reply payload in *reply. */
static void ask(HelperServer *server, int fd, uint64_t offset, HelperWriter *reply) {
        HelperWriter req;
        helper_writer_init(&req, HELPER_MAX_INLINE_PAYLOAD);
        helper_put_u32(&req, 0);
        helper_put_u32(&req, 1);
        helper_put_u64(&req, offset);
        uint16_t type = 0;
        helper_writer_init(reply, HELPER_MAX_PAYLOAD);
        helper_handle_request(server, HELPER_MSG_SYMBOLIZE, req.data, req.size, &fd, 1, &type, reply);
        CHECK(type == (HELPER_MSG_SYMBOLIZE | HELPER_MSG_REPLY));
        helper_writer_done(&req);
}

/* The outermost name of the one address of a reply, or "" (freed by the caller). */
static char *name_of(const HelperWriter *reply) {
        _cleanup_(helper_symbols_freep) HelperSymbols *s = NULL;
        if (helper_symbolize_reply_decode(reply->data, reply->size, 1, &s) < 0 || s->addresses[0].n_frames == 0)
                return strdup("");
        HelperAddressSymbols *a = &s->addresses[0];
        return strdup(a->frames[a->n_frames - 1].name);
}

/* The two programs of argv. */
static const char *target_alpha, *target_gamma;

/* A helper that has answered for probe_alpha in a memfd holding the
 * first program: its cache holds that module. */
typedef struct Warm {
        HelperServer server;
        int memfd;
        HelperWriter first;
        uint64_t alpha, gamma;
} Warm;

static void warm_up(Warm *w) {
        *w = (Warm){ .memfd = -1 };
        CHECK(elf_version(EV_CURRENT) != EV_NONE);
        w->alpha = function_offset(target_alpha, "probe_alpha");
        w->gamma = function_offset(target_gamma, "probe_gamma");
        if (!w->alpha || !w->gamma) {
                fprintf(stderr, "FAIL: probe_alpha/probe_gamma not found in the targets' symbol tables\n");
                exit(1);
        }
        w->memfd = memfd_create("target", MFD_CLOEXEC);
        MUST(w->memfd < 0 ? -errno : 0);
        rewrite(w->memfd, target_alpha);
        ask(&w->server, w->memfd, w->alpha, &w->first);
}

static void cool_down(Warm *w) {
        helper_writer_done(&w->first);
        helper_server_clear(&w->server);
        safe_close(w->memfd);
}

TEST(first_request_names_the_function) {
        Warm w;
        warm_up(&w);
        _cleanup_free_ char *n1 = name_of(&w.first);
        CHECK_MSG(strcmp(n1, "probe_alpha") == 0, "first request named '%s', not probe_alpha", n1);
        cool_down(&w);
}

TEST(same_file_answers_the_same) {
        Warm w;
        warm_up(&w);
        HelperWriter again;
        ask(&w.server, w.memfd, w.alpha, &again);
        CHECK_MSG(w.first.size == again.size && memcmp(w.first.data, again.data, w.first.size) == 0,
                  "the same file asked again answered differently");
        helper_writer_done(&again);
        cool_down(&w);
}

TEST(rewritten_inode_answers_for_new_bytes) {
        Warm w;
        warm_up(&w);
        /* the same inode, now the other program */
        rewrite(w.memfd, target_gamma);
        HelperWriter after;
        ask(&w.server, w.memfd, w.gamma, &after);
        _cleanup_free_ char *n2 = name_of(&after);
        CHECK_MSG(strcmp(n2, "probe_gamma") == 0, "after rewriting the file, named '%s', not probe_gamma", n2);
        helper_writer_done(&after);
        cool_down(&w);
}

TEST(other_file_with_first_program) {
        Warm w;
        warm_up(&w);
        rewrite(w.memfd, target_gamma);
        HelperWriter after, other;
        ask(&w.server, w.memfd, w.gamma, &after);
        /* another file holding the first program */
        _cleanup_close_ int fd = open(target_alpha, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        ask(&w.server, fd, w.alpha, &other);
        _cleanup_free_ char *n3 = name_of(&other);
        CHECK_MSG(strcmp(n3, "probe_alpha") == 0, "the other file named '%s', not probe_alpha", n3);
        helper_writer_done(&after);
        helper_writer_done(&other);
        cool_down(&w);
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: %s TARGET_ALPHA TARGET_GAMMA [CASE...]\n", argv[0]);
                return 2;
        }
        target_alpha = argv[1];
        target_gamma = argv[2];
        /* what follows the targets names the cases to run */
        return test_main(argc - 2, argv + 2);
}
