/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-jit.c: one process at a time: its distinct lookup addresses
 * (a return address is looked up by the byte before it) go to each of its
 * JIT files in turn, perf map first, each file asked only for what the
 * ones before left unnamed. */
#include "symbolize-jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

typedef struct JitAnswer {
        const HelperJitName *name;   /* NULL: not named */
        const SymbolizeJitSource *source;
} JitAnswer;

static const SymbolizeJitSource *first_source(const SymbolizeOptions *o, int32_t pid, size_t *ret_n) {
        size_t lo = 0, hi = o->n_jit_sources;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (o->jit_sources[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        size_t end = lo;
        while (end < o->n_jit_sources && o->jit_sources[end].pid == pid)
                end++;
        *ret_n = end - lo;
        return end > lo ? &o->jit_sources[lo] : NULL;
}

bool symbolize_jit_has_source(const SymbolizeOptions *o, int32_t pid) {
        size_t n;
        return first_source(o, pid, &n) != NULL;
}

static uint64_t lookup_address(const SymbolizeAddress *a) {
        return a->return_address && a->address > 0 ? a->address - 1 : a->address;
}

static int compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static size_t find_u64(const uint64_t *v, size_t n, uint64_t key) {
        const uint64_t *p = bsearch(&key, v, n, sizeof *v, compare_u64);
        return p ? (size_t) (p - v) : n;
}

/* The provenance of the anonymous mapping m: the JIT file that named it. */
static int add_provenance(SymbolTableBuilder *b, const SymbolizeMapping *m, const SymbolizeJitSource *src) {
        SymbolMapping sm = {
                .pid = m->pid,
                .start = m->start,
                .end = m->end,
                .path = src->path,
                .method = src->method,
                .verdict = src->format == HELPER_JIT_PERF_MAP ? "JIT code named by the process's perf map"
                                                              : "JIT code named by the jitdump the process mapped",
                .flags = SYMBOL_MAPPING_VERIFIED,
        };
        return symbol_table_builder_add_mapping(b, &sm);
}

/* Asks one JIT file for the addresses still unnamed. */
static int ask_source(HelperClient *c, const SymbolizeJitSource *src, const uint64_t *look, size_t n,
                      JitAnswer *answers, HelperJitNames **ret, char **ret_why, SymbolizeStats *st) {
        _cleanup_free_ uint64_t *want = malloc((n ? n : 1) * sizeof *want);
        _cleanup_free_ size_t *index = malloc((n ? n : 1) * sizeof *index);
        if (!want || !index)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (!answers[i].name) {
                        index[k] = i;
                        want[k++] = look[i];
                }
        if (k == 0)
                return 0;
        HelperJitNames *j = NULL;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_jit_names(c, src->fd, src->format, want, k, &j, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (r == HELPER_CLIENT_FAILED)
                        st->helper_failures++;
                free(*ret_why);
                *ret_why = strdup_printf("%s: %s", src->path, why ? why : strerror(-r));
                return 0;
        }
        for (size_t i = 0; i < k; i++)
                if (j->names[i].status == HELPER_JIT_NAMED)
                        answers[index[i]] = (JitAnswer) { .name = &j->names[i], .source = src };
        *ret = j;
        return 0;
}

/* One process's items[0..n). */
static int symbolize_pid(HelperClient *c, const SymbolizeOptions *o, const SymbolizeJitAddress *items, size_t n,
                         SymbolTableBuilder *b, SymbolizeStats *st) {
        size_t n_sources;
        const SymbolizeJitSource *sources = first_source(o, items[0].addr->pid, &n_sources);
        _cleanup_free_ uint64_t *look = malloc(n * sizeof *look);
        _cleanup_free_ JitAnswer *answers = calloc(n, sizeof *answers);
        _cleanup_free_ HelperJitNames **replies = calloc(n_sources ? n_sources : 1, sizeof *replies);
        if (!look || !answers || !replies)
                return -ENOMEM;
        size_t n_look = 0;
        for (size_t i = 0; i < n; i++)
                look[n_look++] = lookup_address(items[i].addr);
        qsort(look, n_look, sizeof *look, compare_u64);
        size_t u = 0;
        for (size_t i = 0; i < n_look; i++)
                if (u == 0 || look[u - 1] != look[i])
                        look[u++] = look[i];
        n_look = u;
        _cleanup_free_ char *failure = NULL;
        int r = 0;
        for (size_t s = 0; s < n_sources && r >= 0; s++)
                r = ask_source(c, &sources[s], look, n_look, answers, &replies[s], &failure, st);
        const SymbolizeMapping *described = NULL;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const SymbolizeAddress *a = items[i].addr;
                uint64_t l = lookup_address(a);
                const JitAnswer *an = &answers[find_u64(look, n_look, l)];
                if (!an->name) {
                        _cleanup_free_ char *why = strdup_printf("%s (%s)", items[i].why,
                                                                 failure ? failure : "no JIT file entry covers it");
                        if (!why) {
                                r = -ENOMEM;
                                break;
                        }
                        st->unresolved++;
                        r = symbol_table_builder_add_unresolved(b, a->pid, a->address, a->address + 1, why);
                        continue;
                }
                SymbolFrame f = {
                        .function = an->name->name,
                        .file = an->name->file,
                        .line = an->name->line,
                        .flags = SYMBOL_FRAME_JIT,
                        .offset = l - an->name->start,
                };
                st->resolved++;
                st->jit_named++;
                r = symbol_table_builder_add_range(b, a->pid, a->address, a->address + 1, &f, 1);
                if (r >= 0 && o->jit_named)
                        o->jit_named(o->jit_userdata, a->pid, a->address, an->name->name);
                if (r >= 0 && items[i].map && items[i].map != described) {
                        described = items[i].map;
                        r = add_provenance(b, items[i].map, an->source);
                }
        }
        for (size_t s = 0; s < n_sources; s++)
                helper_jit_names_free(replies[s]);
        return r;
}

int symbolize_jit(HelperClient *c, const SymbolizeOptions *o, const SymbolizeJitAddress *items, size_t n,
                  SymbolTableBuilder *b, SymbolizeStats *st) {
        for (size_t i = 0; i < n;) {
                size_t j = i + 1;
                while (j < n && items[j].addr->pid == items[i].addr->pid)
                        j++;
                int r = symbolize_pid(c, o, items + i, j - i, b, st);
                if (r < 0)
                        return r;
                i = j;
        }
        return 0;
}
