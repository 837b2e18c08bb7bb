/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-symbolize.c: `periscope symbolize`'s work on a capture with a
 * Periscope symbol table (capture-symbolize.h): the unnamed ranges of
 * verified mappings looked up by build-id through the sandboxed helper,
 * both tables rebuilt, and the capture rewritten around them. */
#include "capture-symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr-key.h"
#include "capture-autoptr.h"
#include "basic.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HelperClient, helper_client_free)

/* A MAP frame. */
typedef struct MapRecord {
        int32_t pid;
        uint64_t start, end, offset;
} MapRecord;

/* One unnamed range to look up, and its answer. */
typedef struct Target {
        const SymbolRange *range;
        uint64_t file_offset;
        uint64_t map_offset; /* address - mapping start, for a debug file alone */
        HelperFrame *frames; /* owned by the module's HelperSymbols */
        size_t n_frames;
} Target;

/* The file (by build-id) behind some targets. */
typedef struct Module {
        char *build_id;
        char *path;      /* as recorded */
        GArray *targets; /* indices into the target array */
        HelperSymbols *syms;
        char *used; /* "binary …; debug file …" once named */
} Module;

static void module_free(gpointer p) {
        Module *m = p;
        g_free(m->build_id);
        g_free(m->path);
        g_array_unref(m->targets);
        helper_symbols_free(m->syms);
        g_free(m->used);
        g_free(m);
}

/* Notes which sampled addresses are return addresses (not the innermost
 * user address of a stack): their call instruction is the byte before. */
static void note_sample(GHashTable *returns, GHashTable *pids, const CaptureFrame *f) {
        g_hash_table_add(pids, GINT_TO_POINTER(f->pid));
        gboolean first = TRUE, kernel = FALSE;
        for (uint16_t i = 0; i < f->sample.n_addrs; i++) {
                uint64_t a = f->sample.addrs[i];
                if (capture_address_is_context(a)) {
                        first = a == CAPTURE_CONTEXT_USER;
                        kernel = a == CAPTURE_CONTEXT_KERNEL;
                        continue;
                }
                if (kernel && capture_address_is_user_half(a))
                        first = TRUE, kernel = FALSE; /* Sysprof 48's lost user marker (capture-types.h) */
                if (!first) {
                        AddrKey *k = g_new(AddrKey, 1);
                        *k = (AddrKey) { f->pid, a };
                        g_hash_table_add(returns, k);
                }
                first = FALSE;
        }
}

static const MapRecord *find_map(GArray *maps, int32_t pid, uint64_t addr) {
        /* the latest MAP wins, as a process's later mappings replace earlier ones */
        for (guint i = maps->len; i > 0; i--) {
                const MapRecord *m = &g_array_index(maps, MapRecord, i - 1);
                if (m->pid == pid && addr >= m->start && addr < m->end)
                        return m;
        }
        return NULL;
}

/* Opens path when it is a regular file whose build-id is build_id. */
static int open_matching(HelperClient *c, const char *path, const char *build_id, HelperIdentity *id) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -ENOENT;
        }
        g_autofree char *why = NULL;
        if (helper_client_identify(c, fd, 0, id, &why) < 0) {
                close(fd);
                return -ENOEXEC;
        }
        g_autofree char *hex = g_malloc(2 * id->build_id_size + 1);
        for (uint32_t i = 0; i < id->build_id_size; i++)
                sprintf(hex + 2 * i, "%02x", id->build_id[i]);
        hex[2 * id->build_id_size] = 0;
        if (strcmp(hex, build_id) != 0) {
                close(fd);
                return -ESTALE;
        }
        return fd;
}

/* The binary with the module's build-id: DIR/.build-id/xx/rest, DIR/<path>,
 * then <path> on this machine. */
static int find_binary(HelperClient *c, char *const *dirs, const Module *m, HelperIdentity *id, char **ret_path) {
        g_autoptr(GPtrArray) cands = g_ptr_array_new_with_free_func(g_free);
        for (char *const *d = dirs; d && *d; d++) {
                g_ptr_array_add(cands, g_strdup_printf("%s/.build-id/%.2s/%s", *d, m->build_id, m->build_id + 2));
                if (m->path[0] == '/')
                        g_ptr_array_add(cands, g_build_filename(*d, m->path, NULL));
        }
        if (m->path[0] == '/')
                g_ptr_array_add(cands, g_strdup(m->path));
        for (guint i = 0; i < cands->len; i++) {
                int fd = open_matching(c, cands->pdata[i], m->build_id, id);
                if (fd >= 0) {
                        *ret_path = g_strdup(cands->pdata[i]);
                        return fd;
                }
        }
        return -ENOENT;
}

/* Without any copy of the binary: its debug file alone, by build-id under
 * each DIR and the host's /usr/lib/debug. */
static void name_from_debug_file(HelperClient *c, char *const *dirs, Module *m, GArray *targets) {
        g_autoptr(GPtrArray) cands = g_ptr_array_new_with_free_func(g_free);
        for (char *const *d = dirs; d && *d; d++)
                g_ptr_array_add(cands, g_strdup_printf("%s/.build-id/%.2s/%s.debug", *d, m->build_id, m->build_id + 2));
        g_ptr_array_add(cands, g_strdup_printf("/usr/lib/debug/.build-id/%.2s/%s.debug", m->build_id, m->build_id + 2));
        for (guint i = 0; i < cands->len; i++) {
                HelperIdentity id;
                int fd = open_matching(c, cands->pdata[i], m->build_id, &id);
                if (fd < 0)
                        continue;
                g_autofree uint64_t *offsets = g_new(uint64_t, MAX(m->targets->len, 1));
                for (guint k = 0; k < m->targets->len; k++)
                        offsets[k] = g_array_index(targets, Target, g_array_index(m->targets, guint, k)).map_offset;
                g_autofree char *why = NULL;
                int r = helper_client_symbolize_segment(c, fd, offsets, m->targets->len, &m->syms, &why);
                close(fd);
                m->used = r < 0 ? g_strdup_printf("the helper could not read %s: %s", (char *) cands->pdata[i],
                                                  why ? why : g_strerror(-r))
                                : g_strdup_printf("debug file %s alone", (char *) cands->pdata[i]);
                return;
        }
        m->used = g_strdup_printf("no file with build-id %s found (looked in %s)", m->build_id,
                                  dirs && dirs[0] ? "the --debug-dir trees, at its path and in /usr/lib/debug"
                                                  : "its path and /usr/lib/debug");
}

/* Looks the module's targets up; on success m->syms answers them. */
static void name_module(HelperClient *c, char *const *dirs, bool debuginfod, Module *m, GArray *targets) {
        HelperIdentity id;
        g_autofree char *binary = NULL;
        int fd = find_binary(c, dirs, m, &id, &binary);
        if (fd < 0) {
                name_from_debug_file(c, dirs, m, targets);
                return;
        }
        DebugFile df = { .fd = -1 };
        if (!(id.contents & HELPER_HAS_DWARF)) {
                for (char *const *d = dirs; d && *d && df.fd < 0; d++) {
                        DebugFileOptions o = { .debug_root = *d };
                        debug_file_clear(&df);
                        debug_file_find(c, &o, fd, binary, &id, &df);
                }
                if (df.fd < 0) {
                        DebugFileOptions o = { .debuginfod = debuginfod };
                        debug_file_clear(&df);
                        debug_file_find(c, &o, fd, binary, &id, &df);
                }
        }
        g_autofree uint64_t *offsets = g_new(uint64_t, MAX(m->targets->len, 1));
        for (guint i = 0; i < m->targets->len; i++)
                offsets[i] = g_array_index(targets, Target, g_array_index(m->targets, guint, i)).file_offset;
        g_autofree char *why = NULL;
        int r = helper_client_symbolize(c, fd, df.fd, offsets, m->targets->len, &m->syms, &why);
        if (r < 0)
                m->used = g_strdup_printf("the helper could not read %s: %s", binary, why ? why : g_strerror(-r));
        else
                m->used =
                        g_strdup_printf("%s%s%s", binary, df.fd >= 0 ? ", debug file " : "", df.fd >= 0 ? df.path : "");
        debug_file_clear(&df);
        close(fd);
}

/* Frames of a range in the rebuilt table: the helper's answer or the old ones. */
static int add_range(SymbolTableBuilder *b, const SymbolRange *rg, const Target *t) {
        if (!t || !t->n_frames)
                return symbol_table_builder_add_range(b, rg->pid, rg->begin, rg->end, rg->frames, rg->n_frames);
        SymbolFrame frames[HELPER_MAX_FRAMES];
        for (size_t k = 0; k < t->n_frames; k++)
                frames[k] = (SymbolFrame) {
                        .function = t->frames[k].name,
                        .file = t->frames[k].file,
                        .line = t->frames[k].line,
                        .flags = t->frames[k].flags & HELPER_FRAME_INLINED ? SYMBOL_FRAME_INLINED : 0,
                        .offset = t->frames[k].offset,
                };
        return symbol_table_builder_add_range(b, rg->pid, rg->begin, rg->end, frames, t->n_frames);
}

/* What one pass over the frames and the table gives: the MAP frames, the
 * return addresses, the sampled pids, and the unnamed ranges of verified
 * mappings (targets), grouped by build-id (modules). */
typedef struct Symbolize {
        GArray *maps;           /* MapRecord */
        GHashTable *returns;    /* AddrKey of return addresses */
        GHashTable *pids;       /* sampled pids */
        GArray *targets;        /* Target */
        gint *target_of;        /* range index → target index, or -1 */
        GHashTable *modules;    /* build-id → Module */
        GPtrArray *module_list; /* Module, in the table's order */
} Symbolize;

static void symbolize_clear(Symbolize *s) {
        g_clear_pointer(&s->maps, g_array_unref);
        g_clear_pointer(&s->returns, g_hash_table_unref);
        g_clear_pointer(&s->pids, g_hash_table_unref);
        g_clear_pointer(&s->targets, g_array_unref);
        g_clear_pointer(&s->target_of, g_free);
        g_clear_pointer(&s->module_list, g_ptr_array_unref);
        g_clear_pointer(&s->modules, g_hash_table_unref);
}

/* One pass: MAP frames, return addresses, sampled pids. */
static int symbolize_scan(Symbolize *s, CaptureReader *reader) {
        CaptureFrame f;
        int r;
        capture_reader_rewind(reader);
        while ((r = capture_reader_next(reader, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_MAP) {
                        MapRecord m = { f.pid, f.map.start, f.map.end, f.map.offset };
                        g_array_append_val(s->maps, m);
                } else if (f.type == CAPTURE_FRAME_SAMPLE)
                        note_sample(s->returns, s->pids, &f);
        }
        return r;
}

static Module *symbolize_module(Symbolize *s, const SymbolMapping *sm) {
        Module *m = g_hash_table_lookup(s->modules, sm->build_id);
        if (!m) {
                m = g_new0(Module, 1);
                m->build_id = g_strdup(sm->build_id);
                m->path = g_strdup(sm->path);
                m->targets = g_array_new(FALSE, FALSE, sizeof(guint));
                g_hash_table_insert(s->modules, m->build_id, m);
                g_ptr_array_add(s->module_list, m);
        }
        return m;
}

/* The unnamed ranges of verified mappings, grouped by build-id. */
static void symbolize_gather(Symbolize *s, const SymbolTable *table, CaptureSymbolizeStats *st) {
        size_t n_ranges = symbol_table_get_n_ranges(table);
        s->target_of = g_new(gint, MAX(n_ranges, 1));
        for (size_t i = 0; i < n_ranges; i++) {
                const SymbolRange *rg = symbol_table_get_range(table, i);
                s->target_of[i] = -1;
                if (rg->pid == SYMBOLS_PID_ANY || rg->n_frames != 1 || !(rg->frames[0].flags & SYMBOL_FRAME_UNRESOLVED))
                        continue;
                st->unnamed++;
                const SymbolMapping *sm = symbol_table_lookup_mapping(table, rg->pid, rg->begin);
                const MapRecord *mr = find_map(s->maps, rg->pid, rg->begin);
                if (!sm || !mr || !sm->build_id || !(sm->flags & SYMBOL_MAPPING_VERIFIED)) {
                        st->no_id++;
                        continue;
                }
                AddrKey key = { rg->pid, rg->begin };
                uint64_t back = g_hash_table_contains(s->returns, &key) && rg->begin > mr->start ? 1 : 0;
                Target t = { .range = rg,
                             .file_offset = rg->begin - back - mr->start + mr->offset,
                             .map_offset = rg->begin - back - mr->start };
                Module *m = symbolize_module(s, sm);
                s->target_of[i] = (gint) s->targets->len;
                guint ti = s->targets->len;
                g_array_append_val(s->targets, t);
                g_array_append_val(m->targets, ti);
        }
}

/* Each module looked up by the helper; one line said per module. */
static int symbolize_name(Symbolize *s, const CaptureSymbolizeOptions *o, CaptureSymbolizeStats *st, char **ret_why) {
        g_autoptr(HelperClient) c = NULL;
        int r;
        if (s->module_list->len > 0 && (r = helper_client_new(&(HelperClientConfig) {}, &c)) < 0) {
                *ret_why = g_strdup_printf("cannot start periscope-helper: %s", g_strerror(-r));
                return r;
        }
        for (guint i = 0; i < s->module_list->len; i++) {
                Module *m = s->module_list->pdata[i];
                name_module(c, o->debug_dirs, o->debuginfod, m, s->targets);
                guint here = 0;
                for (guint j = 0; m->syms && j < m->targets->len; j++) {
                        const HelperAddressSymbols *a = &m->syms->addresses[j];
                        Target *t = &g_array_index(s->targets, Target, g_array_index(m->targets, guint, j));
                        if (a->status == HELPER_ADDRESS_OK && a->n_frames > 0) {
                                t->frames = a->frames;
                                t->n_frames = a->n_frames;
                                here++;
                        }
                }
                st->named += here;
                g_autofree char *base = g_path_get_basename(m->path);
                g_autofree char *line = g_strdup_printf("%s (build-id %s): %u of %u addresses named; %s", base,
                                                        m->build_id, here, m->targets->len, m->used);
                if (o->say)
                        o->say(line, o->userdata);
        }
        return 0;
}

/* Both tables again, with the new names. */
static int symbolize_rebuild(const Symbolize *s, const SymbolTable *table, SymbolTableBuilder *b) {
        int r = 0;
        for (size_t i = 0; i < symbol_table_get_n_ranges(table) && r >= 0; i++) {
                const SymbolRange *rg = symbol_table_get_range(table, i);
                r = add_range(b, rg, s->target_of[i] >= 0 ? &g_array_index(s->targets, Target, s->target_of[i]) : NULL);
        }
        for (size_t i = 0; i < symbol_table_get_n_mappings(table) && r >= 0; i++) {
                SymbolMapping sm = *symbol_table_get_mapping(table, i);
                Module *m = sm.build_id ? g_hash_table_lookup(s->modules, sm.build_id) : NULL;
                g_autofree char *method = NULL;
                if (m && m->syms) {
                        method = g_strdup_printf("%s; named later by periscope symbolize from %s", sm.method, m->used);
                        sm.method = method;
                }
                r = symbol_table_builder_add_mapping(b, &sm);
        }
        GHashTableIter it;
        gpointer pid;
        g_hash_table_iter_init(&it, s->pids);
        while (r >= 0 && g_hash_table_iter_next(&it, &pid, NULL))
                r = symbol_table_builder_add_pid(b, GPOINTER_TO_INT(pid));
        return r;
}

int capture_symbolize_build(CaptureReader *reader, const SymbolTable *table, const CaptureSymbolizeOptions *o,
                            SymbolTableBuilder *b, CaptureSymbolizeStats *ret_stats, char **ret_why) {
        Symbolize s = {
                .maps = g_array_new(FALSE, FALSE, sizeof(MapRecord)),
                .returns = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, NULL),
                .pids = g_hash_table_new(NULL, NULL),
                .targets = g_array_new(FALSE, TRUE, sizeof(Target)),
                .modules = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, module_free),
                .module_list = g_ptr_array_new(),
        };
        CaptureSymbolizeStats st = {};
        int r = symbolize_scan(&s, reader);
        if (r < 0)
                *ret_why = g_strdup_printf("%s: %s (nothing written)", o->name, capture_reader_error(reader));
        if (r >= 0) {
                symbolize_gather(&s, table, &st);
                r = symbolize_name(&s, o, &st, ret_why);
        }
        if (r >= 0 && (r = symbolize_rebuild(&s, table, b)) < 0)
                *ret_why = g_strdup_printf("cannot build the symbol tables: %s", g_strerror(-r));
        symbolize_clear(&s);
        *ret_stats = st;
        return r < 0 ? r : 0;
}

int capture_symbolize_write(CaptureReader *reader, const uint8_t *data, SymbolTableBuilder *b, int fd, bool cut_off,
                            void (*say)(const char *line, void *userdata), void *userdata) {
        const CaptureFileHeader *h = capture_reader_get_header(reader);
        g_autoptr(CaptureWriter) w = NULL;
        int r = capture_writer_new_fd(fd, h->start_time, &w);
        int64_t last = h->start_time;
        CaptureFrame f;
        capture_reader_rewind(reader);
        while (r >= 0 && (r = capture_reader_next(reader, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_FILE_CHUNK && (strcmp(f.file_chunk.path, SYMBOLS_SYSPROF_PATH) == 0 ||
                                                           strcmp(f.file_chunk.path, SYMBOLS_SYSPROF_GZ_PATH) == 0 ||
                                                           strcmp(f.file_chunk.path, SYMBOLS_PERISCOPE_PATH) == 0))
                        continue; /* replaced below */
                last = MAX(last, f.time);
                r = capture_writer_add_raw_frame(w, data + f.offset, f.len);
        }
        if (r < 0 && cut_off && capture_reader_error(reader)) {
                /* a recorder that died: everything up to its last whole frame */
                g_autofree char *line =
                        g_strdup_printf("periscope: the capture ends in a partly written frame (%s): not copied",
                                        capture_reader_error(reader));
                if (say)
                        say(line, userdata);
                r = 0;
        }
        if (r >= 0)
                r = symbol_table_builder_write(b, w, last);
        if (r >= 0) {
                capture_writer_set_end_time(w, MAX(h->end_time, last));
                r = capture_writer_flush(w);
        }
        /* the recording's own wall-clock start, not the time of this rewrite */
        char when[64] = "";
        memcpy(when, h->capture_time, strnlen(h->capture_time, sizeof when));
        if (r >= 0 && pwrite(fd, when, sizeof when, 8) != (ssize_t) sizeof when)
                r = -errno;
        return r < 0 ? r : 0;
}
