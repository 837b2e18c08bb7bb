/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* crash-symbols.c: one pass gathers the identity frames, the MAP and FORK
 * frames and the user-space addresses of samples, allocations and off-CPU
 * waits; then each file with sampled addresses is opened at its path,
 * checked, and symbolized by the helper. A capture cut off in the middle of
 * a frame is read up to that frame. */
#include "crash-symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "addr-key.h"
#include "basic.h"

#define FORK_DEPTH_MAX 64

typedef struct MapRec {
        int32_t pid;
        uint64_t start, end, offset, inode;
        char *filename;
} MapRec;

/* A sampled address of a file, and the mapping it lies in. */
typedef struct Item {
        int32_t pid;
        uint64_t addr;
        uint64_t file_offset;
        guint map;
} Item;

typedef struct FileEntry {
        CaptureFileIdentity id; /* id.path is path */
        char *path;
        GArray *items;
} FileEntry;

typedef struct Pass {
        GArray *maps;            /* MapRec */
        GHashTable *maps_of;     /* pid -> GArray of guint (indices into maps, in file order) */
        GHashTable *parents;     /* child pid -> parent pid */
        GPtrArray *files;        /* FileEntry */
        GHashTable *file_by_key; /* "inode:path" -> FileEntry */
        GHashTable *addrs;       /* (pid, addr) -> is a return address */
        GHashTable *pids;
} Pass;

static void map_rec_clear(gpointer p) {
        g_free(((MapRec *) p)->filename);
}

static void file_entry_free(gpointer p) {
        FileEntry *e = p;
        g_free(e->path);
        g_array_unref(e->items);
        g_free(e);
}

static void pass_clear(Pass *p) {
        g_clear_pointer(&p->maps, g_array_unref);
        g_clear_pointer(&p->maps_of, g_hash_table_unref);
        g_clear_pointer(&p->parents, g_hash_table_unref);
        g_clear_pointer(&p->file_by_key, g_hash_table_unref);
        g_clear_pointer(&p->files, g_ptr_array_unref);
        g_clear_pointer(&p->addrs, g_hash_table_unref);
        g_clear_pointer(&p->pids, g_hash_table_unref);
}

gboolean crash_symbols_available(CaptureReader *reader) {
        CaptureFrame f;
        CaptureFileIdentity id;
        capture_reader_rewind(reader);
        while (capture_reader_next(reader, &f) > 0)
                if (capture_frame_get_file_identity(&f, &id) > 0)
                        return TRUE;
        return FALSE;
}

static void add_identity(Pass *p, const CaptureFileIdentity *id) {
        g_autofree char *key = g_strdup_printf("%" PRIu64 ":%s", id->inode, id->path);
        FileEntry *e = g_hash_table_lookup(p->file_by_key, key);
        if (e) {
                /* a later frame of the same file may add the kernel's build-id */
                if (!e->id.build_id_size && id->build_id_size) {
                        e->id.build_id_size = id->build_id_size;
                        memcpy(e->id.build_id, id->build_id, id->build_id_size);
                }
                return;
        }
        e = g_new0(FileEntry, 1);
        e->id = *id;
        e->path = g_strdup(id->path);
        e->id.path = e->path;
        e->items = g_array_new(FALSE, FALSE, sizeof(Item));
        g_ptr_array_add(p->files, e);
        g_hash_table_insert(p->file_by_key, g_steal_pointer(&key), e);
}

static void add_map(Pass *p, const CaptureFrame *f) {
        MapRec m = { f->pid, f->map.start, f->map.end, f->map.offset, f->map.inode, g_strdup(f->map.filename) };
        guint i = p->maps->len;
        g_array_append_val(p->maps, m);
        GArray *of = g_hash_table_lookup(p->maps_of, GINT_TO_POINTER(f->pid));
        if (!of) {
                of = g_array_new(FALSE, FALSE, sizeof(guint));
                g_hash_table_insert(p->maps_of, GINT_TO_POINTER(f->pid), of);
        }
        g_array_append_val(of, i);
}

/* The user-space addresses of a stack; return addresses (all but the
 * innermost) are marked, their call is the byte before. */
static void add_stack(Pass *p, int32_t pid, const uint64_t *addrs, size_t n) {
        g_hash_table_add(p->pids, GINT_TO_POINTER(pid));
        gboolean user = TRUE, first = TRUE;
        for (size_t i = 0; i < n; i++) {
                uint64_t a = addrs[i];
                if (capture_address_is_context(a)) {
                        user = first = a == CAPTURE_CONTEXT_USER;
                        continue;
                }
                if (!user && capture_address_is_user_half(a))
                        user = first = TRUE; /* Sysprof 48's lost user marker (capture-types.h) */
                if (!user || a == 0)
                        continue;
                AddrKey k = { pid, a };
                gboolean ret = !first;
                first = FALSE;
                gpointer old;
                if (g_hash_table_lookup_extended(p->addrs, &k, NULL, &old)) {
                        if (ret && !GPOINTER_TO_INT(old))
                                g_hash_table_replace(p->addrs, g_memdup2(&k, sizeof k), GINT_TO_POINTER(1));
                        continue;
                }
                g_hash_table_insert(p->addrs, g_memdup2(&k, sizeof k), GINT_TO_POINTER(ret));
        }
}

/* The latest MAP of pid (or of the process it was forked from) holding addr. */
static gint find_map(const Pass *p, int32_t pid, uint64_t addr) {
        for (int depth = 0; depth < FORK_DEPTH_MAX; depth++) {
                GArray *of = g_hash_table_lookup(p->maps_of, GINT_TO_POINTER(pid));
                for (guint i = of ? of->len : 0; i > 0; i--) {
                        guint k = g_array_index(of, guint, i - 1);
                        const MapRec *m = &g_array_index(p->maps, MapRec, k);
                        if (addr >= m->start && addr < m->end)
                                return (gint) k;
                }
                gpointer parent;
                if (!g_hash_table_lookup_extended(p->parents, GINT_TO_POINTER(pid), NULL, &parent))
                        return -1;
                pid = GPOINTER_TO_INT(parent);
        }
        return -1;
}

static void hex(char *out, const uint8_t *b, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", b[i]);
        out[2 * n] = 0;
}

static char *describe(uint64_t ino, gboolean has_stat, uint64_t size, int64_t sec, uint32_t nsec) {
        if (!has_stat)
                return g_strdup_printf("inode %" PRIu64, ino);
        return g_strdup_printf("inode %" PRIu64 ", %" PRIu64 " bytes, mtime %" PRId64 ".%09u", ino, size, sec, nsec);
}

/* Opens the file at e's path if it is the one that was mapped: the fd, with
 * *verdict saying what matched; else -1 with *verdict saying why not and
 * *unresolved the text its frames get. */
static int open_verified(HelperClient *c, const FileEntry *e, HelperIdentity *hid, gboolean *identified, char **verdict,
                         const char **unresolved) {
        const CaptureFileIdentity *id = &e->id;
        *identified = FALSE;
        *unresolved = "file not found on this machine";
        if (g_str_has_suffix(e->path, " (deleted)")) {
                *verdict = g_strdup("deleted while it was mapped: not on this machine");
                return -1;
        }
        _cleanup_close_ int fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;
        if (fd < 0) {
                *verdict = g_strdup_printf("cannot open it on this machine: %s", g_strerror(errno));
                return -1;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                *verdict = g_strdup("not a regular file on this machine");
                return -1;
        }
        /* btrfs: maps name the superblock's device, stat() the subvolume's */
        struct statfs sfs;
        gboolean dev_ok = (uint64_t) st.st_dev == makedev(id->dev_major, id->dev_minor) ||
                          (fstatfs(fd, &sfs) >= 0 && sfs.f_type == BTRFS_SUPER_MAGIC);
        gboolean stat_ok = !id->has_stat || ((uint64_t) st.st_size == id->size && st.st_mtim.tv_sec == id->mtime_sec &&
                                             (uint32_t) st.st_mtim.tv_nsec == id->mtime_nsec);
        if ((uint64_t) st.st_ino != id->inode || !dev_ok || !stat_ok) {
                g_autofree char *was = describe(id->inode, id->has_stat, id->size, id->mtime_sec, id->mtime_nsec);
                g_autofree char *now = describe((uint64_t) st.st_ino, id->has_stat, (uint64_t) st.st_size,
                                                st.st_mtim.tv_sec, (uint32_t) st.st_mtim.tv_nsec);
                *verdict = g_strdup_printf("binary changed since it was mapped (mapped: %s%s; now: %s%s)", was,
                                           dev_ok ? "" : ", another device", now, dev_ok ? "" : " on this machine");
                *unresolved = "binary changed since it was mapped";
                return -1;
        }
        g_autofree char *why = NULL;
        int r = helper_client_identify(c, fd, 0, hid, &why);
        if (r < 0) {
                *verdict = g_strdup_printf("%s%s", r == HELPER_CLIENT_FAILED ? "" : "not a readable ELF file: ",
                                           why ? why : g_strerror(-r));
                *unresolved = r == HELPER_CLIENT_FAILED ? "helper failed" : "not a readable ELF file";
                return -1;
        }
        *identified = TRUE;
        if (id->build_id_size &&
            (hid->build_id_size != id->build_id_size || memcmp(hid->build_id, id->build_id, id->build_id_size) != 0)) {
                *verdict = g_strdup("binary changed since it was mapped (build-id differs)");
                *unresolved = "binary changed since it was mapped";
                return -1;
        }
        *verdict = g_strdup_printf("inode%s%s match", id->has_stat ? "+size+mtime" : "",
                                   id->build_id_size ? "+build-id" : "");
        return TAKE_FD(fd);
}

static int add_answer(SymbolTableBuilder *b, const Item *it, const HelperAddressSymbols *s, guint *named) {
        if (s->status == HELPER_ADDRESS_NO_SYMBOL || (s->status == HELPER_ADDRESS_OK && s->n_frames == 0))
                return symbol_table_builder_add_unresolved(b, it->pid, it->addr, it->addr + 1,
                                                           "no symbol covers this address");
        if (s->status != HELPER_ADDRESS_OK)
                return symbol_table_builder_add_unresolved(b, it->pid, it->addr, it->addr + 1,
                                                           "address outside the mapped file's segments");
        SymbolFrame frames[HELPER_MAX_FRAMES];
        for (size_t k = 0; k < s->n_frames; k++)
                frames[k] = (SymbolFrame){
                        .function = s->frames[k].name,
                        .file = s->frames[k].file,
                        .line = s->frames[k].line,
                        .flags = s->frames[k].flags & HELPER_FRAME_INLINED ? SYMBOL_FRAME_INLINED : 0,
                        .offset = s->frames[k].offset,
                };
        (*named)++;
        return symbol_table_builder_add_range(b, it->pid, it->addr, it->addr + 1, frames, s->n_frames);
}

/* One mapping record per (pid, mapping) the file's items lie in. */
static int add_records(SymbolTableBuilder *b, const Pass *p, const FileEntry *e, const char *method,
                       const char *verdict, const char *build_id, uint32_t flags) {
        g_autoptr(GHashTable) seen = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, NULL);
        for (guint i = 0; i < e->items->len; i++) {
                const Item *it = &g_array_index(e->items, Item, i);
                AddrKey k = { it->pid, it->map };
                if (g_hash_table_contains(seen, &k))
                        continue;
                g_hash_table_add(seen, g_memdup2(&k, sizeof k));
                const MapRec *m = &g_array_index(p->maps, MapRec, it->map);
                SymbolMapping sm = {
                        .pid = it->pid,
                        .start = m->start,
                        .end = m->end,
                        .path = e->path,
                        .method = method,
                        .verdict = verdict,
                        .build_id = build_id && build_id[0] ? build_id : NULL,
                        .flags = flags,
                };
                int r = symbol_table_builder_add_mapping(b, &sm);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Checks and symbolizes one file's items into b. */
static int name_file(HelperClient *c, const Pass *p, const FileEntry *e, SymbolTableBuilder *b, guint *ret_named,
                     char **ret_used) {
        HelperIdentity hid;
        gboolean identified;
        g_autofree char *verdict = NULL;
        const char *unresolved;
        char bid[2 * HELPER_MAX_BUILD_ID + 1] = "";
        int r;
        _cleanup_close_ int fd = open_verified(c, e, &hid, &identified, &verdict, &unresolved);
        if (identified && hid.build_id_size <= HELPER_MAX_BUILD_ID)
                hex(bid, hid.build_id, hid.build_id_size);
        else if (e->id.build_id_size)
                hex(bid, e->id.build_id, e->id.build_id_size);
        *ret_named = 0;
        if (fd < 0) {
                for (guint i = 0; i < e->items->len; i++) {
                        const Item *it = &g_array_index(e->items, Item, i);
                        if ((r = symbol_table_builder_add_unresolved(b, it->pid, it->addr, it->addr + 1, unresolved)) <
                            0)
                                return r;
                }
                *ret_used = g_strdup(verdict);
                return add_records(b, p, e, "recorded identity (the recording ended before naming it)", verdict, bid,
                                   0);
        }
        DebugFile df = { .fd = -1 };
        if (!(hid.contents & HELPER_HAS_DWARF))
                (void) debug_file_find(c, &(DebugFileOptions){}, fd, e->path, &hid, &df);
        g_autofree uint64_t *offsets = g_new(uint64_t, MAX(e->items->len, 1));
        for (guint i = 0; i < e->items->len; i++)
                offsets[i] = g_array_index(e->items, Item, i).file_offset;
        _cleanup_(helper_symbols_freep) HelperSymbols *syms = NULL;
        g_autofree char *why = NULL;
        r = helper_client_symbolize(c, fd, df.fd, offsets, e->items->len, &syms, &why);
        if (r < 0 && df.fd >= 0 && r != HELPER_CLIENT_FAILED) {
                g_clear_pointer(&why, g_free);
                debug_file_clear(&df);
                r = helper_client_symbolize(c, fd, -1, offsets, e->items->len, &syms, &why);
        }
        g_autofree char *method =
                g_strdup_printf("named later by periscope symbolize from %s%s%s (the recording "
                                "ended before naming it)",
                                e->path, df.fd >= 0 ? ", debug file " : "", df.fd >= 0 ? df.path : "");
        debug_file_clear(&df);
        if (r < 0 || syms->n_addresses != e->items->len) {
                uint32_t flags =
                        SYMBOL_MAPPING_VERIFIED | (r == HELPER_CLIENT_FAILED ? SYMBOL_MAPPING_HELPER_FAILED : 0);
                g_autofree char *failure = g_strdup_printf("the helper could not read it: %s",
                                                           why ? why : g_strerror(r < 0 ? -r : EBADMSG));
                for (guint i = 0; i < e->items->len; i++) {
                        const Item *it = &g_array_index(e->items, Item, i);
                        if ((r = symbol_table_builder_add_unresolved(b, it->pid, it->addr, it->addr + 1, failure)) < 0)
                                return r;
                }
                *ret_used = g_strdup(failure);
                return add_records(b, p, e, method, failure, bid, flags);
        }
        for (guint i = 0; i < e->items->len; i++)
                if ((r = add_answer(b, &g_array_index(e->items, Item, i), &syms->addresses[i], ret_named)) < 0)
                        return r;
        *ret_used = g_strdup_printf("%s: %s", e->path, verdict);
        return add_records(b, p, e, method, verdict, bid, SYMBOL_MAPPING_VERIFIED);
}

int crash_symbols_build(CaptureReader *reader, HelperClient *c, SymbolTableBuilder *b,
                        void (*say)(const char *line, void *userdata), void *userdata, CrashSymbolsStats *ret_stats,
                        GError **error) {
        Pass p = {
                .maps = g_array_new(FALSE, FALSE, sizeof(MapRec)),
                .maps_of = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify) g_array_unref),
                .parents = g_hash_table_new(NULL, NULL),
                .files = g_ptr_array_new_with_free_func(file_entry_free),
                .file_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                .addrs = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, NULL),
                .pids = g_hash_table_new(NULL, NULL),
        };
        g_array_set_clear_func(p.maps, map_rec_clear);
        CrashSymbolsStats st = {};
        g_autofree CaptureOffCpu *oc = g_new(CaptureOffCpu, 1);
        CaptureFrame f;
        CaptureFileIdentity id;
        int r;
        capture_reader_rewind(reader);
        while ((r = capture_reader_next(reader, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_MAP)
                        add_map(&p, &f);
                else if (f.type == CAPTURE_FRAME_FORK)
                        g_hash_table_replace(p.parents, GINT_TO_POINTER(f.fork.child_pid), GINT_TO_POINTER(f.pid));
                else if (f.type == CAPTURE_FRAME_SAMPLE)
                        add_stack(&p, f.pid, f.sample.addrs, f.sample.n_addrs);
                else if (f.type == CAPTURE_FRAME_ALLOCATION)
                        add_stack(&p, f.pid, f.allocation.addrs, f.allocation.n_addrs);
                else if (capture_frame_get_file_identity(&f, &id) > 0)
                        add_identity(&p, &id);
                else if (capture_frame_get_off_cpu(&f, oc) > 0)
                        add_stack(&p, f.pid, oc->addrs, oc->n_addrs); /* a wait's stack */
        }
        /* r < 0: cut off after the last flush; what came before is used */

        /* every sampled user address in a mapped file, to its file */
        guint no_identity = 0;
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init(&it, p.addrs);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const AddrKey *k = key;
                gint mi = find_map(&p, k->pid, k->addr);
                if (mi < 0)
                        continue; /* not in a mapped file: shown as an address */
                const MapRec *m = &g_array_index(p.maps, MapRec, mi);
                st.addresses++;
                g_autofree char *fkey = g_strdup_printf("%" PRIu64 ":%s", m->inode, m->filename);
                FileEntry *e = g_hash_table_lookup(p.file_by_key, fkey);
                if (!e) {
                        no_identity++;
                        r = symbol_table_builder_add_unresolved(b, k->pid, k->addr, k->addr + 1,
                                                                "no identity of this file in the capture");
                        if (r < 0)
                                goto fail;
                        continue;
                }
                uint64_t back = GPOINTER_TO_INT(value) && k->addr > m->start ? 1 : 0;
                Item item = { k->pid, k->addr, k->addr - back - m->start + m->offset, (guint) mi };
                g_array_append_val(e->items, item);
        }
        for (guint i = 0; i < p.files->len; i++) {
                const FileEntry *e = p.files->pdata[i];
                if (e->items->len == 0)
                        continue;
                guint named = 0;
                g_autofree char *used = NULL;
                if ((r = name_file(c, &p, e, b, &named, &used)) < 0)
                        goto fail;
                st.named += named;
                g_autofree char *base = g_path_get_basename(e->path);
                g_autofree char *line =
                        g_strdup_printf("%s: %u of %u addresses named; %s", base, named, e->items->len, used);
                say(line, userdata);
        }
        if (no_identity) {
                g_autofree char *line = g_strdup_printf("%u addresses in files the capture holds no identity of: "
                                                        "left unnamed",
                                                        no_identity);
                say(line, userdata);
        }
        g_hash_table_iter_init(&it, p.pids);
        while (g_hash_table_iter_next(&it, &key, NULL))
                if ((r = symbol_table_builder_add_pid(b, GPOINTER_TO_INT(key))) < 0)
                        goto fail;
        pass_clear(&p);
        *ret_stats = st;
        return 0;
fail:
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(-r), "cannot build the symbol tables: %s",
                    g_strerror(-r));
        pass_clear(&p);
        return r;
}
