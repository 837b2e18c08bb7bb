/* kallsyms.c: parses /proc/kallsyms ("ADDR TYPE NAME [MODULE]") into a
 * sorted array for binary search. */
#include "kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

typedef struct KernelSymbol {
        uint64_t addr;
        char *name;
} KernelSymbol;

struct Kallsyms {
        KernelSymbol *syms;
        size_t n;
};

void kallsyms_free(Kallsyms *k) {
        if (!k)
                return;
        for (size_t i = 0; i < k->n; i++)
                free(k->syms[i].name);
        free(k->syms);
        free(k);
}

static int compare_syms(const void *a, const void *b) {
        const KernelSymbol *x = a, *y = b;
        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int kallsyms_load(const char *path, Kallsyms **ret) {
        FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
        if (!f)
                return -errno;
        Kallsyms *k = calloc(1, sizeof *k);
        if (!k) {
                fclose(f);
                return -ENOMEM;
        }
        size_t allocated = 0, nonzero = 0;
        char line[1024];
        int r = 0;
        while (fgets(line, sizeof line, f)) {
                char type, name[512], module[256] = "";
                unsigned long long addr;
                int n = sscanf(line, "%llx %c %511s [%255[^]]]", &addr, &type, name, module);
                if (n < 3 || !strchr("tTwW", type))
                        continue;
                if (addr != 0)
                        nonzero++;
                if (k->n == allocated) {
                        size_t na = allocated ? allocated * 2 : 4096;
                        KernelSymbol *s = realloc(k->syms, na * sizeof *s);
                        if (!s) {
                                r = -ENOMEM;
                                break;
                        }
                        k->syms = s;
                        allocated = na;
                }
                char *full = NULL;
                if ((module[0] ? asprintf(&full, "%s [%s]", name, module) : asprintf(&full, "%s", name)) < 0) {
                        r = -ENOMEM;
                        break;
                }
                k->syms[k->n++] = (KernelSymbol) { addr, full };
        }
        fclose(f);
        if (r == 0 && nonzero == 0)
                r = -EPERM;
        if (r < 0) {
                kallsyms_free(k);
                return r;
        }
        qsort(k->syms, k->n, sizeof *k->syms, compare_syms);
        *ret = k;
        return 0;
}

const char *kallsyms_lookup(const Kallsyms *k, uint64_t addr, uint64_t *start, uint64_t *end) {
        size_t lo = 0, hi = k->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (k->syms[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        const KernelSymbol *s = &k->syms[lo - 1];
        /* the next symbol with a higher address ends this one */
        size_t next = lo;
        while (next < k->n && k->syms[next].addr == s->addr)
                next++;
        *start = s->addr;
        *end = next < k->n ? k->syms[next].addr : s->addr + 1;
        if (addr >= *end)
                return NULL;
        return s->name;
}
