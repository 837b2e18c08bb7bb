/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kallsyms.c: parses /proc/kallsyms ("ADDR TYPE NAME [MODULE]") into a
 * sorted array for binary search. */
#include "kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

typedef struct KernelSymbol {
        uint64_t addr;
        size_t name;               /* offset into the arena */
} KernelSymbol;

struct Kallsyms {
        KernelSymbol *syms;
        size_t n;
        char *arena;               /* "name\0" or "name [module]\0", back to back */
        size_t arena_size;
};

Kallsyms *kallsyms_free(Kallsyms *k) {
        if (!k)
                return NULL;
        free(k->syms);
        free(k->arena);
        free(k);
        return NULL;
}

static int compare_syms(const void *a, const void *b) {
        const KernelSymbol *x = a, *y = b;
        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One line: "ffffffff81000000 T _stext" or "… t name\t[module]". Hand
 * parsed: the file has ~100k lines and sscanf is slow under sanitizers. */
static int parse_line(Kallsyms *k, char *line, size_t *allocated_syms, size_t *allocated_arena, size_t *nonzero) {
        char *end;
        uint64_t addr = strtoull(line, &end, 16);
        if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !strchr("tTwW", end[1]))
                return 0;
        char *name = end + 3;
        size_t nl = strcspn(name, " \t\n");
        char *module = name + nl;
        module += strspn(module, " \t");
        size_t ml = 0;
        if (*module == '[') {
                module++;
                ml = strcspn(module, "]\n");
        }
        if (nl == 0 || nl > 511 || ml > 255)
                return 0;
        if (addr != 0)
                (*nonzero)++;
        size_t need = nl + (ml ? ml + 3 : 0) + 1;
        if (GROW_ARRAY(k->syms, *allocated_syms, k->n + 1, 4096) < 0 ||
            GROW_ARRAY(k->arena, *allocated_arena, k->arena_size + need, 4096) < 0)
                return -ENOMEM;
        char *d = k->arena + k->arena_size;
        memcpy(d, name, nl);
        if (ml) {
                memcpy(d + nl, " [", 2);
                memcpy(d + nl + 2, module, ml);
                d[nl + 2 + ml] = ']';
        }
        d[need - 1] = '\0';
        k->syms[k->n++] = (KernelSymbol) { addr, k->arena_size };
        k->arena_size += need;
        return 0;
}

int kallsyms_load(const char *path, Kallsyms **ret) {
        return kallsyms_load_in_slices(path, NULL, NULL, ret);
}

int kallsyms_load_in_slices(const char *path, void (*yield)(void *userdata), void *userdata, Kallsyms **ret) {
        FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
        if (!f)
                return -errno;
        Kallsyms *k = calloc(1, sizeof *k);
        if (!k) {
                fclose(f);
                return -ENOMEM;
        }
        size_t allocated_syms = 0, allocated_arena = 0, nonzero = 0;
        char line[1024];
        int r = 0;
        for (size_t i = 1; r == 0 && fgets(line, sizeof line, f); i++) {
                r = parse_line(k, line, &allocated_syms, &allocated_arena, &nonzero);
                if (yield && i % 4096 == 0)
                        yield(userdata);
        }
        fclose(f);
        if (r == 0 && nonzero == 0)
                r = -EPERM;
        if (r < 0) {
                kallsyms_free(k);
                return r;
        }
        sort_in_slices(k->syms, k->n, sizeof *k->syms, compare_syms, yield, userdata);
        *ret = k;
        return 0;
}

const char *kallsyms_lookup(const Kallsyms *k, uint64_t addr, uint64_t *start, uint64_t *end) {
        size_t lo = FIRST_ABOVE(k->syms, k->n, addr, addr);
        if (lo == 0)
                return NULL;
        const KernelSymbol *s = &k->syms[lo - 1];
        *start = s->addr;
        *end = lo < k->n ? k->syms[lo].addr : s->addr + 1;
        if (addr >= *end)
                return NULL;
        return k->arena + s->name;
}
