/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwinder-aarch64: the aarch64 unwinder on x86_64, from register and
 * stack vectors captured once under qemu-aarch64-static with gdb-multiarch
 * (aarch64/make-vectors.sh): the table compiled from the checked-in program
 * (aarch64/chain-NAME), executed over the copied stack, must give gdb's own
 * backtrace, and every frame must name the program's chain through main:
 * a call-free leaf whose return address is still in LR, a frame-pointer
 * build, a pointer-authentication build (signed return addresses on the
 * stack; gdb over qemu 7.2 knows no PAC mask and stops at the first signed
 * one, so past it the names are the check), and a signal frame that
 * interrupted a leaf. Also the frame-pointer mode's leaf fix-up.
 * The vectors' folder is AARCH64_VECTORS (meson). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "protocol.h"
#include "test-check.h"
#include "unwind-compile.h"
#include "unwinder.h"

#define MAX_MAPS 32
#define MAX_EXPECT 64

typedef struct Map {
        uint64_t start, end, pgoff;
        char file[64];
} Map;

typedef struct Vector {
        uint64_t pc, sp, x29, x30;
        Map maps[MAX_MAPS];
        size_t n_maps;
        uint64_t stack_base;
        uint8_t *stack;
        size_t stack_size;
        uint64_t expect[MAX_EXPECT];
        size_t n_expect;
} Vector;

typedef struct Program {
        char file[64];
        void *blob;
        UnwindTable table;
        Elf *elf;
        int fd;
} Program;

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int vector_parse(FILE *f, Vector *v);

static int vector_load(const char *path, Vector *v) {
        FILE *f = fopen(path, "re");
        int r;

        *v = (Vector) {};
        if (!f)
                return -errno;
        r = vector_parse(f, v);
        fclose(f);
        return r;
}

static int vector_parse(FILE *f, Vector *v) {
        char line[256];
        size_t filled = 0;

        while (fgets(line, sizeof(line), f)) {
                char name[64];
                uint64_t a, b, c;

                if (sscanf(line, "reg %63s %" SCNx64, name, &a) == 2) {
                        if (strcmp(name, "pc") == 0)
                                v->pc = a;
                        else if (strcmp(name, "sp") == 0)
                                v->sp = a;
                        else if (strcmp(name, "x29") == 0)
                                v->x29 = a;
                        else if (strcmp(name, "x30") == 0)
                                v->x30 = a;
                } else if (sscanf(line, "map %" SCNx64 " %" SCNx64 " %" SCNx64 " %63s", &a, &b, &c, name) == 4) {
                        if (v->n_maps == MAX_MAPS)
                                return -E2BIG;
                        v->maps[v->n_maps] = (Map) { a, b, c, "" };
                        snprintf(v->maps[v->n_maps].file, sizeof(v->maps[v->n_maps].file), "%s", name);
                        v->n_maps++;
                } else if (sscanf(line, "stack %" SCNx64 " %" SCNu64, &a, &b) == 2) {
                        if (b > 65536 || v->stack)
                                return -EBADMSG;
                        v->stack_base = a;
                        v->stack_size = b;
                        v->stack = calloc(1, b ? b : 1);
                        if (!v->stack)
                                return -ENOMEM;
                } else if (strncmp(line, "s ", 2) == 0) {
                        for (const char *p = line + 2; hexval(p[0]) >= 0 && hexval(p[1]) >= 0; p += 2) {
                                if (filled >= v->stack_size)
                                        return -EBADMSG;
                                v->stack[filled++] = (uint8_t) (hexval(p[0]) << 4 | hexval(p[1]));
                        }
                } else if (sscanf(line, "expect %" SCNx64, &a) == 1) {
                        if (v->n_expect == MAX_EXPECT)
                                return -E2BIG;
                        v->expect[v->n_expect++] = a;
                }
        }
        if (filled != v->stack_size || v->n_expect == 0 || v->n_maps == 0)
                return -EBADMSG;
        return 0;
}

static int program_load(const char *dir, const char *file, Program *p) {
        _cleanup_free_ char *path = NULL;
        size_t size;
        const char *reason;
        int r;

        *p = (Program) { .fd = -1 };
        snprintf(p->file, sizeof(p->file), "%s", file);
        if (asprintf(&path, "%s/%s", dir, file) < 0)
                return -ENOMEM;
        p->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (p->fd < 0)
                return -errno;
        r = unwind_compile_fd(p->fd, &p->blob, &size, NULL);
        if (r < 0)
                return r;
        r = unwind_table_validate(p->blob, size, &p->table, &reason);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", file, reason);
                return r;
        }
        if (p->table.arch != UNWIND_ARCH_AARCH64)
                return -EPROTONOSUPPORT;
        elf_version(EV_CURRENT);
        p->elf = elf_begin(p->fd, ELF_C_READ, NULL);
        return p->elf ? 0 : -ENOEXEC;
}

static void program_done(Program *p) {
        if (p->elf)
                elf_end(p->elf);
        free(p->blob);
        if (p->fd >= 0)
                close(p->fd);
}

/* The function of the program's .symtab holding file offset `off` (the
 * program's text is mapped at its file offsets: vaddr == offset). */
static const char *program_name(const Program *p, uint64_t off) {
        Elf_Scn *scn = NULL;

        while ((scn = elf_nextscn(p->elf, scn))) {
                GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
                Elf_Data *d;

                if (!sh || sh->sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
                        GElf_Sym sm, *sym = gelf_getsym(d, (int) i, &sm);
                        if (sym && GELF_ST_TYPE(sym->st_info) == STT_FUNC && off >= sym->st_value &&
                            off < sym->st_value + sym->st_size)
                                return elf_strptr(p->elf, sh->sh_link, sym->st_name);
                }
        }
        return "??";
}

typedef struct Finder {
        const Vector *v;
        const Program *p;
} Finder;

static const Map *find_map(const Vector *v, uint64_t ip) {
        for (size_t i = 0; i < v->n_maps; i++)
                if (ip >= v->maps[i].start && ip < v->maps[i].end)
                        return &v->maps[i];
        return NULL;
}

static bool finder_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset) {
        Finder *f = userdata;
        const Map *m = find_map(f->v, ip);

        if (!m)
                return false;
        *offset = ip - m->start + m->pgoff;
        /* the program's table only: libc's frames come after main */
        *table = strcmp(m->file, f->p->file) == 0 ? &f->p->table : NULL;
        return true;
}

static UnwindRegs vector_regs(const Vector *v) {
        return (UnwindRegs) { .ip = v->pc, .sp = v->sp, .fp = v->x29, .lr = v->x30, .arch = UNWIND_ARCH_AARCH64,
                              .pac_mask = UNWIND_AARCH64_PAC_MASK_VA48 };
}

/* Unwinds vector NAME-WHERE over program chain-NAME and checks gdb's pcs
 * (PAC bits stripped) and the names through main. */
static void check_vector(const char *dir, const char *name, const char *where, const char *const *chain) {
        _cleanup_free_ char *path = NULL, *file = NULL;
        Vector v;
        Program p;
        uint64_t frames[64];
        UnwindResult res;
        size_t n_chain = 0;
        int r;

        if (asprintf(&path, "%s/%s-%s.vec", dir, name, where) < 0 || asprintf(&file, "chain-%s", name) < 0)
                abort();
        r = vector_load(path, &v);
        if (r < 0) {
                fail("%s: cannot read the vector: %s", path, strerror(-r));
                return;
        }
        r = program_load(dir, file, &p);
        if (r < 0) {
                fail("%s: no aarch64 table: %s", file, strerror(-r));
                program_done(&p);
                free(v.stack);
                return;
        }

        UnwindRegs regs = vector_regs(&v);
        UnwindStack stack = { .base = v.stack_base, .data = v.stack, .size = v.stack_size };
        Finder finder = { &v, &p };
        unwinder_unwind(&regs, &stack, finder_find, &finder, frames, ELEMENTSOF(frames), &res);

        /* gdb's own backtrace, its signed addresses stripped */
        for (size_t i = 0; i < v.n_expect; i++) {
                uint64_t want = v.expect[i] & ~UNWIND_AARCH64_PAC_MASK_VA48;
                CHECK_MSG(i < res.n_frames && frames[i] == want, "%s-%s: frame %zu is %#" PRIx64 ", gdb says %#" PRIx64,
                          name, where, i, i < res.n_frames ? frames[i] : 0, want);
        }
        /* every frame through main names the chain */
        while (chain[n_chain])
                n_chain++;
        bool exact = true;
        for (size_t i = 0; i < n_chain; i++) {
                const char *got = "(none)";
                if (i < res.n_frames) {
                        const Map *m = find_map(&v, frames[i]);
                        /* a return address names the call before it; the sampled
                         * pc and the pc a signal frame restores are exact */
                        uint64_t a = exact ? frames[i] : frames[i] - 1;
                        got = m && strcmp(m->file, file) == 0 ? program_name(&p, a - m->start + m->pgoff) : "(elsewhere)";
                        /* the handler returns to the trampoline itself; the byte
                         * before it is the nop a backtrace looks up (no symbol) */
                        if (m && strcmp(got, "??") == 0)
                                got = program_name(&p, frames[i] - m->start + m->pgoff);
                        exact = strcmp(got, "__kernel_rt_sigreturn") == 0;
                }
                CHECK_MSG(strcmp(got, chain[i]) == 0, "%s-%s: frame %zu is %s, want %s (stopped: %s after %zu)", name,
                          where, i, got, chain[i], unwind_stop_to_string(res.stop), res.n_frames);
        }
        printf("%s-%s: %zu frames, %s, gdb's %zu match\n", name, where, res.n_frames, unwind_stop_to_string(res.stop),
               v.n_expect);

        if (strcmp(where, "leaf") == 0) {
                /* Frame-pointer mode: the x29 chain skips the leaf's caller
                 * (f1) when the leaf built no frame record; the leaf's row
                 * says so, and the fix-up puts the sampled LR back. */
                uint64_t fp_frames[64], caller;
                UnwindResult fp_res;
                const Map *m = find_map(&v, v.pc);
                const UnwindRow *row = m ? unwind_table_lookup(&p.table, v.pc - m->start + m->pgoff) : NULL;

                unwinder_unwind_fp(&regs, &stack, fp_frames, ELEMENTSOF(fp_frames), &fp_res);
                CHECK_MSG(unwinder_fp_leaf_caller(&regs, row, &caller), "%s: the leaf's row does not say LR", name);
                CHECK_MSG(caller == (v.expect[1] & ~UNWIND_AARCH64_PAC_MASK_VA48), "%s: the leaf's caller is %#" PRIx64,
                          name, caller);
                if (strcmp(name, "fp") == 0) {
                        /* the chain gives leaf, f2, f3, main: f1 missing, the seed's problem */
                        CHECK_MSG(fp_res.n_frames >= 4 && fp_frames[1] == v.expect[2] && fp_frames[2] == v.expect[3] &&
                                  fp_frames[3] == v.expect[4],
                                  "fp: the frame-pointer chain is not leaf, f2, f3, main (%zu frames)", fp_res.n_frames);
                        CHECK(caller != fp_frames[1]);
                }
        }
        program_done(&p);
        free(v.stack);
}

static const char *const leaf_chain[] = { "leaf", "f1", "f2", "f3", "main", NULL };
static const char *const signal_chain[] = { "handler_leaf", "on_signal", "__kernel_rt_sigreturn", "spin_leaf", "spin",
                                            "main", NULL };

TEST(no_frame_pointer_leaf) {
        check_vector(AARCH64_VECTORS, "nofp", "leaf", leaf_chain);
}

TEST(frame_pointer_leaf) {
        check_vector(AARCH64_VECTORS, "fp", "leaf", leaf_chain);
}

TEST(pac_leaf) {
        check_vector(AARCH64_VECTORS, "pac", "leaf", leaf_chain);
}

TEST(no_frame_pointer_signal) {
        check_vector(AARCH64_VECTORS, "nofp", "signal", signal_chain);
}

TEST(frame_pointer_signal) {
        check_vector(AARCH64_VECTORS, "fp", "signal", signal_chain);
}

TEST(pac_signal) {
        check_vector(AARCH64_VECTORS, "pac", "signal", signal_chain);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
