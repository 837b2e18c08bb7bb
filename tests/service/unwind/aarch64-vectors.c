/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* aarch64-vectors.c: reading the aarch64 vectors and their programs. */
#include "aarch64-vectors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "unwind-compile.h"

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int vector_parse(FILE *f, Vector *v);

int vector_load(const char *path, Vector *v) {
        FILE *f = fopen(path, "re");
        int r;

        *v = (Vector){};
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
                        v->maps[v->n_maps] = (Map){ a, b, c, "" };
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

int program_load(const char *dir, const char *file, Program *p) {
        _cleanup_free_ char *path = NULL;
        size_t size;
        const char *reason;
        int r;

        *p = (Program){ .fd = -1 };
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

void program_done(Program *p) {
        if (p->elf)
                elf_end(p->elf);
        free(p->blob);
        if (p->fd >= 0)
                close(p->fd);
}

/* The function of the program's .symtab holding file offset `off` (the
 * program's text is mapped at its file offsets: vaddr == offset). */
const char *program_name(const Program *p, uint64_t off) {
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

const Map *find_map(const Vector *v, uint64_t ip) {
        for (size_t i = 0; i < v->n_maps; i++)
                if (ip >= v->maps[i].start && ip < v->maps[i].end)
                        return &v->maps[i];
        return NULL;
}

bool finder_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit) {
        Finder *f = userdata;
        const Map *m = find_map(f->v, ip);

        if (!m)
                return false;
        *offset = ip - m->start + m->pgoff;
        /* the program's table only: libc's frames come after main */
        *table = strcmp(m->file, f->p->file) == 0 ? &f->p->table : NULL;
        return true;
}

UnwindRegs vector_regs(const Vector *v) {
        return (UnwindRegs){ .ip = v->pc,
                             .sp = v->sp,
                             .fp = v->x29,
                             .lr = v->x30,
                             .arch = UNWIND_ARCH_AARCH64,
                             .pac_mask = UNWIND_AARCH64_PAC_MASK_VA48 };
}
