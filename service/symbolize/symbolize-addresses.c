/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-addresses.c: groups the addresses of a recording by mapped file (one file
 * mapped by many processes is read once), identifies each file and finds its
 * debug file through the helper, symbolizes the file offsets in batches, and
 * turns every answer, or failure, into symbol-table entries. */
#include "symbolize-addresses.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"
#include "kallsyms.h"
#include "symbolize-jit.h"

#define SYMBOLIZE_MAX_DEBUG_TREES 4

typedef struct WorkItem {
        dev_t dev;
        ino_t ino;
        uint64_t file_offset;
        const SymbolizeAddress *addr;
        const SymbolizeMapping *map;
} WorkItem;

static int compare_maps(const void *a, const void *b) {
        const SymbolizeMapping *const *x = a, *const *y = b;
        if ((*x)->pid != (*y)->pid)
                return (*x)->pid < (*y)->pid ? -1 : 1;
        return (*x)->start < (*y)->start ? -1 : (*x)->start > (*y)->start;
}

static const SymbolizeMapping *find_mapping(const SymbolizeMapping **sorted, size_t n, int32_t pid, uint64_t addr) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const SymbolizeMapping *m = sorted[mid];
                if (m->pid < pid || (m->pid == pid && m->start <= addr))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        const SymbolizeMapping *m = sorted[lo - 1];
        return m->pid == pid && addr >= m->start && addr < m->end ? m : NULL;
}

static int compare_work(const void *a, const void *b) {
        const WorkItem *x = a, *y = b;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return x->file_offset < y->file_offset ? -1 : x->file_offset > y->file_offset;
}

/* Every 128 steps of a long loop: the caller's event loop may run. */
static void maybe_yield(const SymbolizeOptions *o, size_t i) {
        if (o->yield && (i & 127) == 127)
                o->yield(o->yield_userdata);
}

static int add_unresolved(SymbolTableBuilder *b, SymbolizeStats *st, const SymbolizeAddress *a, const char *why) {
        st->unresolved++;
        return symbol_table_builder_add_unresolved(b, a->pid, a->address, a->address + 1, why);
}

static void hex(char *out, const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
        out[2 * n] = '\0';
}

/* Provenance of every mapping of this file that had samples. */
static int add_provenance(SymbolTableBuilder *b, const WorkItem *items, size_t n, const HelperIdentity *id,
                          const DebugFile *df, const char *failure, bool helper_failed) {
        char bid[2 * HELPER_MAX_BUILD_ID + 1] = "";
        if (id && id->build_id_size > 0)
                hex(bid, id->build_id, id->build_id_size);
        const SymbolizeMapping *last = NULL;
        for (size_t i = 0; i < n; i++) {
                const SymbolizeMapping *m = items[i].map;
                if (m == last)
                        continue;
                last = m;
                /* The helper did not say (it failed, or was not asked: cut
                 * short): the build-id the kernel saw at mmap time, so
                 * `periscope symbolize` can still find the file by it. */
                char kernel_bid[2 * HELPER_MAX_BUILD_ID + 1] = "";
                if (!bid[0] && m->build_id && m->build_id_size > 0 && m->build_id_size <= HELPER_MAX_BUILD_ID)
                        hex(kernel_bid, m->build_id, m->build_id_size);
                _cleanup_free_ char *method = NULL, *verdict = NULL;
                bool used = df && df->fd >= 0;
                if (asprintf(&method, "%s%s%s%s%s%s%s", m->method ? m->method : "pinned",
                             used ? "; debug file by " : "", used ? debug_file_kind_to_string(df->kind) : "",
                             used ? " from " : "", used && df->source ? df->source : (used ? "host" : ""),
                             used ? ": " : "", used ? df->path : "") < 0)
                        return -ENOMEM;
                if (asprintf(&verdict, "%s%s%s%s%s", m->verdict ? m->verdict : (m->verified ? "verified" : "not verified"),
                             df && df->notes ? "; " : "", df && df->notes ? df->notes : "",
                             failure ? "; " : "", failure ? failure : "") < 0)
                        return -ENOMEM;
                SymbolMapping sm = {
                        .pid = m->pid,
                        .start = m->start,
                        .end = m->end,
                        .path = m->path ? m->path : "(unknown path)",
                        .method = method,
                        .verdict = verdict,
                        .build_id = bid[0]          ? bid
                                    : kernel_bid[0] ? kernel_bid
                                                    : NULL,
                        .flags = (m->verified ? SYMBOL_MAPPING_VERIFIED : 0) |
                                 (helper_failed ? SYMBOL_MAPPING_HELPER_FAILED : 0),
                };
                int r = symbol_table_builder_add_mapping(b, &sm);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_answer(SymbolTableBuilder *b, SymbolizeStats *st, const WorkItem *it, const HelperAddressSymbols *s) {
        if (s->status == HELPER_ADDRESS_NO_SYMBOL)
                return add_unresolved(b, st, it->addr, "no symbol covers this address");
        if (s->status != HELPER_ADDRESS_OK)
                return add_unresolved(b, st, it->addr, "address outside the mapped file's segments");
        SymbolFrame frames[HELPER_MAX_FRAMES];
        for (size_t k = 0; k < s->n_frames; k++) {
                const HelperFrame *f = &s->frames[k];
                frames[k] = (SymbolFrame) {
                        .function = f->name,
                        .file = f->file,
                        .line = f->line,
                        .flags = f->flags & HELPER_FRAME_INLINED ? SYMBOL_FRAME_INLINED : 0,
                        .offset = f->offset,
                };
        }
        st->resolved++;
        return symbol_table_builder_add_range(b, it->addr->pid, it->addr->address, it->addr->address + 1, frames,
                                              s->n_frames);
}

/* Why the work is cut short, or NULL while it is not. */
static const char *cut_short_why(const SymbolizeOptions *o) {
        return o->cut ? o->cut->why : NULL;
}

/* No helper at all any more. */
static bool cut_now(const SymbolizeOptions *o) {
        return o->cut && o->cut->now;
}

/* What a cut-short address says. */
static const char *cut_short_reason(const SymbolizeOptions *o) {
        const char *why = cut_short_why(o);
        return why ? why : "cut short";
}

/* One file's addresses left unnamed because the work was cut short; its
 * mappings keep their build-id (id's, else the kernel's) for `periscope
 * symbolize`. */
static int cut_file(const SymbolizeOptions *o, const WorkItem *items, size_t n, const HelperIdentity *id,
                    SymbolTableBuilder *b, SymbolizeStats *st) {
        const char *why = cut_short_reason(o);
        for (size_t i = 0; i < n; i++) {
                int r = add_unresolved(b, st, items[i].addr, why);
                if (r < 0)
                        return r;
                st->cut_short++;
                maybe_yield(o, i);
        }
        return add_provenance(b, items, n, id, NULL, why, false);
}

/* One file: identify, find debug file, symbolize its distinct offsets. */
static int symbolize_file(HelperClient *c, const SymbolizeOptions *o, const WorkItem *items, size_t n,
                          SymbolTableBuilder *b, SymbolizeStats *st) {
        const SymbolizeMapping *m0 = items[0].map;
        int fd = m0->fd;
        if (!c || cut_now(o))
                return cut_file(o, items, n, NULL, b, st);
        st->files++;
        HelperIdentity id;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_identify(c, fd, 0, &id, &why);
        if (r < 0 && cut_short_why(o))
                return cut_file(o, items, n, NULL, b, st); /* the helper's wait was cut */
        if (r < 0) {
                bool helper_failed = r == HELPER_CLIENT_FAILED;
                if (helper_failed)
                        st->helper_failures++;
                _cleanup_free_ char *reason = NULL;
                if (asprintf(&reason, "%s%s", r == HELPER_CLIENT_FAILED ? "" : "not a readable ELF file: ",
                             why ? why : strerror(-r)) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        if ((r = add_unresolved(b, st, items[i].addr, reason)) < 0)
                                return r;
                        maybe_yield(o, i);
                }
                return add_provenance(b, items, n, NULL, NULL, reason, helper_failed);
        }

        /* the kernel saw a build-id at mmap time: the pinned file must carry it */
        for (size_t i = 0; i < n; i++) {
                const SymbolizeMapping *m = items[i].map;
                if (m->build_id_size == 0 ||
                    (m->build_id_size == id.build_id_size && memcmp(m->build_id, id.build_id, id.build_id_size) == 0))
                        continue;
                const char *reason = "binary changed since it was mapped (build-id differs)";
                for (size_t k = 0; k < n; k++) {
                        if ((r = add_unresolved(b, st, items[k].addr, reason)) < 0)
                                return r;
                        maybe_yield(o, k);
                }
                return add_provenance(b, items, n, &id, NULL, reason, false);
        }
        if (cut_short_why(o))
                return cut_file(o, items, n, &id, b, st); /* hurry: identified, not named */

        DebugFile df = { .fd = -1 };
        bool needs_debug = !(id.contents & HELPER_HAS_DWARF);
        if (needs_debug) {
                /* the container's or app's own debug files first: those of the
                 * first process mapping this file that is in one */
                DebugFileTree trees[SYMBOLIZE_MAX_DEBUG_TREES];
                size_t n_trees = 0;
                const char *binary_path = NULL;
                int32_t tried[4];
                size_t n_tried = 0;
                for (size_t i = 0; o->debug_trees && i < n && n_trees == 0 && n_tried < ELEMENTSOF(tried); i++) {
                        const SymbolizeMapping *m = items[i].map;
                        bool seen = false;
                        for (size_t k = 0; k < n_tried; k++)
                                seen = seen || tried[k] == m->pid;
                        if (seen)
                                continue;
                        tried[n_tried++] = m->pid;
                        n_trees = o->debug_trees(o->debug_trees_userdata, m->pid, trees, ELEMENTSOF(trees));
                        binary_path = m->path;
                }
                _cleanup_free_ char *clean = binary_path ? strdup(binary_path) : NULL;
                size_t cl = clean ? strlen(clean) : 0;
                if (cl > 10 && strcmp(clean + cl - 10, " (deleted)") == 0)
                        clean[cl - 10] = 0;
                DebugFileOptions debug = o->debug;
                debug.pid = m0->pid; /* the binary's directory is in its root */
                r = debug_file_find_in_trees(c, &debug, fd, m0->path, &id, trees, n_trees, clean, &df);
                if (r == HELPER_CLIENT_FAILED)
                        st->helper_failures++;
                if (df.fd >= 0)
                        st->debug_files++;
        }

        /* distinct offsets (items are sorted by offset) */
        _cleanup_free_ uint64_t *offsets = malloc(n * sizeof(uint64_t));
        _cleanup_free_ size_t *index_of = malloc(n * sizeof(size_t));
        if (!offsets || !index_of) {
                debug_file_clear(&df);
                return -ENOMEM;
        }
        size_t n_offsets = 0;
        for (size_t i = 0; i < n; i++) {
                if (n_offsets == 0 || offsets[n_offsets - 1] != items[i].file_offset)
                        offsets[n_offsets++] = items[i].file_offset;
                index_of[i] = n_offsets - 1;
        }
        _cleanup_(helper_symbols_freep) HelperSymbols *syms = NULL;
        free(why);
        why = NULL;
        r = helper_client_symbolize(c, fd, df.fd, offsets, n_offsets, &syms, &why);
        if (r < 0 && df.fd >= 0 && r != HELPER_CLIENT_FAILED) {
                /* a debug file the helper cannot use: try the file alone */
                free(why);
                why = NULL;
                r = helper_client_symbolize(c, fd, -1, offsets, n_offsets, &syms, &why);
        }
        if (r < 0 && cut_short_why(o)) {
                debug_file_clear(&df);
                return cut_file(o, items, n, &id, b, st); /* the helper's wait was cut */
        }
        if (r < 0) {
                bool helper_failed = r == HELPER_CLIENT_FAILED;
                if (helper_failed)
                        st->helper_failures++;
                for (size_t i = 0; i < n && r != -ENOMEM; i++) {
                        if (add_unresolved(b, st, items[i].addr, why ? why : strerror(-r)) < 0) {
                                debug_file_clear(&df);
                                return -ENOMEM;
                        }
                        maybe_yield(o, i);
                }
                r = add_provenance(b, items, n, &id, &df, why ? why : strerror(-r), helper_failed);
                debug_file_clear(&df);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                r = add_answer(b, st, &items[i], &syms->addresses[index_of[i]]);
                if (r < 0) {
                        debug_file_clear(&df);
                        return r;
                }
                maybe_yield(o, i);
        }
        r = add_provenance(b, items, n, &id, &df, NULL, false);
        debug_file_clear(&df);
        return r;
}

static int compare_addrs(const void *a, const void *b) {
        const SymbolizeAddress *x = a, *y = b;
        if (x->kernel != y->kernel)
                return x->kernel ? 1 : -1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->address < y->address ? -1 : x->address > y->address;
}

static int symbolize_kernel(const SymbolizeOptions *o, const SymbolizeAddress *addrs, size_t n,
                            SymbolTableBuilder *b, SymbolizeStats *st) {
        if (n == 0)
                return 0;
        Kallsyms *k = NULL;
        const char *why = NULL;
        if (!o->kernel_symbols)
                why = "kernel addresses are not shown to this caller";
        else {
                int r = kallsyms_load_in_slices(o->kallsyms_path, o->yield, o->yield_userdata, &k);
                if (r == -EPERM)
                        why = "kernel symbols are hidden (kptr_restrict)";
                else if (r < 0)
                        why = "kernel symbols unavailable (/proc/kallsyms unreadable)";
        }
        int r = 0;
        uint64_t covered = 0; /* end of the last entry added: entries never overlap */
        for (size_t i = 0; i < n && r >= 0; i++) {
                const SymbolizeAddress *a = &addrs[i];
                maybe_yield(o, i);
                if (a->pid >= 0 && (r = symbol_table_builder_add_pid(b, a->pid)) < 0)
                        break;
                uint64_t start, end;
                uint64_t look = a->return_address ? a->address - 1 : a->address;
                const char *name = k ? kallsyms_lookup(k, look, &start, &end) : NULL;
                if (!name) {
                        st->unresolved++;
                        r = symbol_table_builder_add_unresolved(b, SYMBOLS_PID_ANY, a->address, a->address + 1,
                                                                why ? why : "no kernel symbol covers this address");
                        covered = a->address + 1;
                        continue;
                }
                st->resolved++;
                SymbolFrame f = { .function = name, .flags = SYMBOL_FRAME_KERNEL, .offset = look - start };
                if (a->address >= end) {
                        /* Just past the caller's end (a noreturn call): this address alone. */
                        start = a->address;
                        end = a->address + 1;
                }
                if (end <= covered)
                        continue; /* this symbol's range is in already */
                if (start < covered)
                        start = covered; /* the rest of a symbol whose first byte named its caller */
                r = symbol_table_builder_add_range(b, SYMBOLS_PID_ANY, start, end, &f, 1);
                covered = end;
        }
        kallsyms_free(k);
        return r;
}

int symbolize_addresses(const SymbolizeOptions *o, const SymbolizeMapping *maps, size_t n_maps,
                        const SymbolizeAddress *addrs_in, size_t n_addrs, SymbolTableBuilder *b,
                        SymbolizeStats *stats) {
        SymbolizeStats st = {};
        int r = 0;
        /* distinct addresses, user first, kernel last */
        _cleanup_free_ SymbolizeAddress *addrs = malloc((n_addrs ? n_addrs : 1) * sizeof *addrs);
        _cleanup_free_ const SymbolizeMapping **sorted = malloc((n_maps ? n_maps : 1) * sizeof *sorted);
        _cleanup_free_ WorkItem *work = malloc((n_addrs ? n_addrs : 1) * sizeof *work);
        _cleanup_free_ SymbolizeJitAddress *jit = malloc((n_addrs ? n_addrs : 1) * sizeof *jit);
        size_t n_jit = 0;
        if (!addrs || !sorted || !work || !jit)
                return -ENOMEM;
        memcpy(addrs, addrs_in, n_addrs * sizeof *addrs);
        sort_in_slices(addrs, n_addrs, sizeof *addrs, compare_addrs, o->yield, o->yield_userdata);
        size_t n = 0;
        for (size_t i = 0; i < n_addrs; i++, maybe_yield(o, i))
                if (n == 0 || compare_addrs(&addrs[n - 1], &addrs[i]) != 0)
                        addrs[n++] = addrs[i];
                else
                        addrs[n - 1].return_address |= addrs[i].return_address;
        n_addrs = n;
        st.addresses = n_addrs;
        for (size_t i = 0; i < n_maps; i++)
                sorted[i] = &maps[i];
        sort_in_slices(sorted, n_maps, sizeof *sorted, compare_maps, o->yield, o->yield_userdata);

        size_t n_user = 0;
        while (n_user < n_addrs && !addrs[n_user].kernel)
                n_user++;
        uint64_t done = 0;
        if (o->progress)
                o->progress(0, n_addrs, o->userdata);

        /* user addresses: mapping, then file identity (dev, ino) of the pinned fd */
        size_t n_work = 0;
        const SymbolizeMapping *stat_of = NULL;
        struct stat sb;
        bool stat_ok = false;
        for (size_t i = 0; i < n_user; i++) {
                const SymbolizeAddress *a = &addrs[i];
                maybe_yield(o, i);
                const SymbolizeMapping *m = find_mapping(sorted, n_maps, a->pid, a->address);
                const char *why = !m ? "no mapping contains this address"
                                  : m->fd < 0 ? (m->why_unavailable ? m->why_unavailable : "mapped file not available")
                                              : NULL;
                if (why && symbolize_jit_has_source(o, a->pid)) {
                        /* JIT code: named from the process's perf map or jitdump below */
                        jit[n_jit++] = (SymbolizeJitAddress) { .addr = a, .map = m, .why = why };
                        continue;
                }
                if (!why && m != stat_of) {
                        /* once per mapping: addresses come sorted by pid and address */
                        stat_of = m;
                        stat_ok = fstat(m->fd, &sb) >= 0 && S_ISREG(sb.st_mode);
                }
                if (why)
                        r = add_unresolved(b, &st, a, why);
                else if (!stat_ok)
                        r = add_unresolved(b, &st, a, "mapped file not readable");
                else {
                        /* A return address may lie past its caller's last
                         * instruction (a call to a noreturn function): the
                         * call itself is the byte before. */
                        uint64_t back = a->return_address && a->address > m->start ? 1 : 0;
                        work[n_work++] = (WorkItem) {
                                .dev = sb.st_dev, .ino = sb.st_ino,
                                .file_offset = a->address - back - m->start + m->pgoff,
                                .addr = a, .map = m,
                        };
                        continue;
                }
                if (r < 0)
                        return r;
                done++;
        }
        sort_in_slices(work, n_work, sizeof *work, compare_work, o->yield, o->yield_userdata);

        _cleanup_(helper_client_freep) HelperClient *c = NULL;
        if ((n_work > 0 || n_jit > 0) && !cut_now(o)) {
                r = helper_client_new(&o->helper, &c);
                if (r < 0) {
                        /* no helper at all: every user address says why, and
                         * every file (and JIT process) counts as failed on */
                        char why[256];
                        snprintf(why, sizeof why, "helper failed: cannot find periscope-helper (%s)", strerror(-r));
                        for (size_t i = 0; i < n_work; i++)
                                if (i == 0 || work[i].dev != work[i - 1].dev || work[i].ino != work[i - 1].ino)
                                        st.helper_failures++;
                        for (size_t i = 0; i < n_jit; i++)
                                if (i == 0 || jit[i].addr->pid != jit[i - 1].addr->pid)
                                        st.helper_failures++;
                        for (size_t i = 0; i < n_work; i++)
                                if ((r = add_unresolved(b, &st, work[i].addr, why)) < 0)
                                        return r;
                        for (size_t i = 0; i < n_jit; i++)
                                if ((r = add_unresolved(b, &st, jit[i].addr, why)) < 0)
                                        return r;
                        n_work = n_jit = 0;
                }
        }
        for (size_t i = 0; i < n_work;) {
                size_t j = i + 1;
                while (j < n_work && work[j].dev == work[i].dev && work[j].ino == work[i].ino)
                        j++;
                r = symbolize_file(c, o, work + i, j - i, b, &st);
                if (r < 0)
                        return r;
                if (o->yield)
                        o->yield(o->yield_userdata);
                done += j - i;
                if (o->progress)
                        o->progress(done, n_addrs, o->userdata);
                i = j;
        }

        if (cut_short_why(o) || !c) {
                /* JIT names need the helper (perf maps, jitdumps) */
                for (size_t i = 0; i < n_jit; i++, st.cut_short++)
                        if ((r = add_unresolved(b, &st, jit[i].addr, cut_short_reason(o))) < 0)
                                return r;
        } else
                r = symbolize_jit(c, o, jit, n_jit, b, &st);
        if (r < 0)
                return r;
        done += n_jit;
        if (o->progress)
                o->progress(done, n_addrs, o->userdata);

        if (c) {
                st.helper_ms = helper_client_get_busy_ms(c);
                st.helper_budget_spent = helper_client_budget_spent(c);
        }
        st.user_addresses = n_user;
        st.user_resolved = st.resolved; /* the kernel's come next */
        r = symbolize_kernel(o, addrs + n_user, n_addrs - n_user, b, &st);
        if (r < 0)
                return r;
        if (o->progress)
                o->progress(n_addrs, n_addrs, o->userdata);
        if (stats)
                *stats = st;
        return 0;
}
