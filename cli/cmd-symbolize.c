/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-symbolize.c: `periscope symbolize CAPTURE [--debug-dir DIR]…
 * [--debuginfod] [-o OUT]`: names, after the fact and on any machine, the
 * frames a capture could not name when it was recorded. Each unnamed address
 * of a verified mapping is looked up by the mapped file's build-id: the
 * binary at DIR/.build-id/xx/rest, DIR/<path> or <path> (accepted only with
 * the same build-id), its debug file at DIR/.build-id/xx/rest.debug (or its
 * .gnu_debuglink, the host's /usr/lib/debug, debuginfod), or with no copy of
 * the binary at all, that debug file alone. Every file is read
 * by the sandboxed helper, never here. Both embedded symbol tables are
 * rewritten, so Sysprof sees the new names too; the rest of the capture is
 * copied frame by frame, and the result replaces OUT only once complete.
 * A capture whose daemon died before writing any table is named from the
 * file identities it recorded as mappings appeared (analysis/crash-symbols.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib.h>

#include "analysis.h"
#include "commands.h"
#include "helper-client.h"
#include "output-file.h"
#include "basic.h"
#include "capture.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SymbolTableBuilder, symbol_table_builder_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HelperClient, helper_client_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HelperSymbols, helper_symbols_free)

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
        char *path;         /* as recorded */
        GArray *targets;    /* indices into the target array */
        HelperSymbols *syms;
        char *used;         /* "binary …; debug file …" once named */
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
static int find_binary(HelperClient *c, char **dirs, const Module *m, HelperIdentity *id, char **ret_path) {
        g_autoptr(GPtrArray) cands = g_ptr_array_new_with_free_func(g_free);
        for (char **d = dirs; d && *d; d++) {
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
static void name_from_debug_file(HelperClient *c, char **dirs, Module *m, GArray *targets) {
        g_autoptr(GPtrArray) cands = g_ptr_array_new_with_free_func(g_free);
        for (char **d = dirs; d && *d; d++)
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
static void name_module(HelperClient *c, char **dirs, gboolean debuginfod, Module *m, GArray *targets) {
        HelperIdentity id;
        g_autofree char *binary = NULL;
        int fd = find_binary(c, dirs, m, &id, &binary);
        if (fd < 0) {
                name_from_debug_file(c, dirs, m, targets);
                return;
        }
        DebugFile df = { .fd = -1 };
        if (!(id.contents & HELPER_HAS_DWARF)) {
                for (char **d = dirs; d && *d && df.fd < 0; d++) {
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
                m->used = g_strdup_printf("%s%s%s", binary, df.fd >= 0 ? ", debug file " : "",
                                          df.fd >= 0 ? df.path : "");
        debug_file_clear(&df);
        close(fd);
}

/* Writes the symbolized capture to out (output-file.h: a regular file is
 * replaced only once complete, a device or pipe written through). */
static int write_capture(CaptureReader *reader, const uint8_t *data, SymbolTableBuilder *b, const char *out,
                         gboolean cut_off, GError **error) {
        const CaptureFileHeader *h = capture_reader_get_header(reader);
        OutputFile o;
        if (output_file_open(&o, out, OUTPUT_BINARY | OUTPUT_SEEKABLE | OUTPUT_PRIVATE, error) < 0) {
                output_file_finish(&o);
                return -1;
        }
        int fd = o.fd;
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
                printf("periscope: the capture ends in a partly written frame (%s): not copied\n",
                       capture_reader_error(reader));
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
        if (r < 0) {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "cannot write %s: %s", o.name,
                            g_strerror(-r));
                output_file_finish(&o);
                return -1;
        }
        r = output_file_commit(&o, error);
        output_file_finish(&o);
        return r < 0 ? -1 : 0;
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

static void say_line(const char *line, void *userdata) {
        printf("%s\n", line);
}

/* A capture whose recording ended before its symbol tables (periscoped
 * died): named from this machine's files, each checked against the
 * identity the recording wrote when it was mapped (analysis/crash-symbols.h). */
static int symbolize_crashed(CaptureReader *reader, const char *data, const char *in, const char *out,
                             gboolean to_stdout) {
        printf("periscope: %s has no symbol tables (its recording ended before naming its frames); naming them "
               "from this machine's files, each checked against the identity recorded when it was mapped\n",
               in);
        g_autoptr(HelperClient) c = NULL;
        int r = helper_client_new(&(HelperClientConfig){}, &c);
        if (r < 0) {
                fprintf(stderr, "periscope symbolize: cannot start periscope-helper: %s\n", g_strerror(-r));
                return 1;
        }
        g_autoptr(SymbolTableBuilder) b = NULL;
        if ((r = symbol_table_builder_new(&b)) < 0) {
                fprintf(stderr, "periscope symbolize: %s\n", g_strerror(-r));
                return 1;
        }
        g_autoptr(GError) error = NULL;
        CrashSymbolsStats st;
        if (crash_symbols_build(reader, c, b, say_line, NULL, &st, &error) < 0) {
                fprintf(stderr, "periscope symbolize: %s (%s is unchanged)\n", error->message, in);
                return 1;
        }
        if (write_capture(reader, (const uint8_t *) data, b, out, TRUE, &error) < 0) {
                fprintf(stderr, "periscope symbolize: %s (%s is unchanged)\n", error->message, in);
                return 1;
        }
        printf("periscope: named %u of %u addresses in mapped files; wrote %s\n", st.named, st.addresses,
               to_stdout ? "standard output" : out);
        return 0;
}

int cmd_symbolize(int argc, char **argv) {
        g_auto(GStrv) dirs = NULL;
        gboolean debuginfod = FALSE;
        g_autofree char *out = NULL;
        GOptionEntry entries[] = {
                { "debug-dir", 'd', 0, G_OPTION_ARG_FILENAME_ARRAY, &dirs,
                  "A tree with debug files (DIR/.build-id/xx/rest.debug) or binaries (DIR/<path>); repeatable", "DIR" },
                { "debuginfod", 0, 0, G_OPTION_ARG_NONE, &debuginfod, "Also ask the servers in $DEBUGINFOD_URLS", NULL },
                { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Write the result to OUT (default: replace CAPTURE)", "OUT" },
                { NULL },
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("CAPTURE - name the frames a capture could not name");
        g_option_context_add_main_entries(ctx, entries, NULL);
        g_option_context_set_description(
                ctx, "Looks every unnamed frame of a verified mapping up by its file's build-id and\n"
                     "rewrites both embedded symbol tables (Periscope's and Sysprof's __symbols__).\n"
                     "A capture whose periscoped died has no tables: it is named from the files at\n"
                     "their recorded paths, each used only if it is the file that was mapped.");
        g_autoptr(GError) error = NULL;
        if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
                fprintf(stderr, "periscope symbolize: %s\n", error->message);
                return 2;
        }
        if (argc != 2) {
                fprintf(stderr, "periscope symbolize: expected one CAPTURE (see --help)\n");
                return 2;
        }
        const char *in = argv[1];
        if (!out)
                out = g_strdup(in);
        /* the capture to standard output: the summary goes to standard error */
        _cleanup_close_ int out_fd = -1;
        g_autofree char *out_to = NULL;
        if (output_file_move_stdout(out, &out_to, &out_fd, &error) < 0) {
                fprintf(stderr, "periscope symbolize: %s\n", error->message);
                return 1;
        }
        for (char **d = dirs; d && *d; d++)
                if (!g_file_test(*d, G_FILE_TEST_IS_DIR)) {
                        fprintf(stderr, "periscope symbolize: --debug-dir %s: not a directory\n", *d);
                        return 2;
                }

        g_autofree char *data = NULL;
        gsize size = 0;
        if (!g_file_get_contents(in, &data, &size, &error)) {
                fprintf(stderr, "periscope symbolize: %s\n", error->message);
                return 1;
        }
        g_autoptr(CaptureReader) reader = NULL;
        g_autofree char *msg = NULL;
        if (capture_reader_open_memory(data, size, &reader, &msg) < 0) {
                fprintf(stderr, "periscope symbolize: %s: %s\n", in, msg ? msg : "not a capture");
                return 1;
        }
        if (!capture_reader_get_header(reader)->little_endian) {
                fprintf(stderr, "periscope symbolize: %s is big-endian; only little-endian captures (all that "
                                "periscope writes) can be rewritten\n", in);
                return 1;
        }
        g_autoptr(SymbolTable) table = NULL;
        g_autofree char *terr = NULL;
        int r = symbol_table_load(reader, &table, &terr);
        if ((r < 0 || symbol_table_get_kind(table) != SYMBOL_TABLE_PERISCOPE) && crash_symbols_available(reader))
                return symbolize_crashed(reader, data, in, out_to ? out_to : out, out_to != NULL);
        if (r < 0) {
                fprintf(stderr,
                        "periscope symbolize: %s has no Periscope symbol table%s%s: it needs one (written by "
                        "`periscope record`), which keeps the build-ids of the mapped files\n",
                        in, terr ? ": " : "", terr ? terr : "");
                return 1;
        }
        /* Sysprof's own table (3.46's __symbols__ or 45+'s __symbols__.gz):
         * its names are kept and written in both layouts; it records no
         * build-ids, so it has no verified mapping to name more from */
        if (symbol_table_get_kind(table) != SYMBOL_TABLE_PERISCOPE)
                printf("periscope: %s has Sysprof's symbol table (%s), no build-ids: its names are kept, "
                       "in both tables\n",
                       in,
                       symbol_table_get_kind(table) == SYMBOL_TABLE_SYSPROF_GZ ? SYMBOLS_SYSPROF_GZ_PATH
                                                                               : SYMBOLS_SYSPROF_PATH);

        /* one pass: MAP frames, return addresses, sampled pids */
        g_autoptr(GArray) maps = g_array_new(FALSE, FALSE, sizeof(MapRecord));
        g_autoptr(GHashTable) returns = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, NULL);
        g_autoptr(GHashTable) pids = g_hash_table_new(NULL, NULL);
        CaptureFrame f;
        capture_reader_rewind(reader);
        while ((r = capture_reader_next(reader, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_MAP) {
                        MapRecord m = { f.pid, f.map.start, f.map.end, f.map.offset };
                        g_array_append_val(maps, m);
                } else if (f.type == CAPTURE_FRAME_SAMPLE)
                        note_sample(returns, pids, &f);
        }
        if (r < 0) {
                fprintf(stderr, "periscope symbolize: %s: %s (nothing written)\n", in, capture_reader_error(reader));
                return 1;
        }

        /* the unnamed ranges of verified mappings, grouped by build-id */
        size_t n_ranges = symbol_table_get_n_ranges(table);
        g_autoptr(GArray) targets = g_array_new(FALSE, TRUE, sizeof(Target));
        g_autofree gint *target_of = g_new(gint, MAX(n_ranges, 1));
        g_autoptr(GHashTable) modules = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, module_free);
        g_autoptr(GPtrArray) module_list = g_ptr_array_new();
        guint unnamed = 0, no_id = 0;
        for (size_t i = 0; i < n_ranges; i++) {
                const SymbolRange *rg = symbol_table_get_range(table, i);
                target_of[i] = -1;
                if (rg->pid == SYMBOLS_PID_ANY || rg->n_frames != 1 || !(rg->frames[0].flags & SYMBOL_FRAME_UNRESOLVED))
                        continue;
                unnamed++;
                const SymbolMapping *sm = symbol_table_lookup_mapping(table, rg->pid, rg->begin);
                const MapRecord *mr = find_map(maps, rg->pid, rg->begin);
                if (!sm || !mr || !sm->build_id || !(sm->flags & SYMBOL_MAPPING_VERIFIED)) {
                        no_id++;
                        continue;
                }
                AddrKey key = { rg->pid, rg->begin };
                uint64_t back = g_hash_table_contains(returns, &key) && rg->begin > mr->start ? 1 : 0;
                Target t = { .range = rg, .file_offset = rg->begin - back - mr->start + mr->offset,
                             .map_offset = rg->begin - back - mr->start };
                Module *m = g_hash_table_lookup(modules, sm->build_id);
                if (!m) {
                        m = g_new0(Module, 1);
                        m->build_id = g_strdup(sm->build_id);
                        m->path = g_strdup(sm->path);
                        m->targets = g_array_new(FALSE, FALSE, sizeof(guint));
                        g_hash_table_insert(modules, m->build_id, m);
                        g_ptr_array_add(module_list, m);
                }
                target_of[i] = (gint) targets->len;
                guint ti = targets->len;
                g_array_append_val(targets, t);
                g_array_append_val(m->targets, ti);
        }

        g_autoptr(HelperClient) c = NULL;
        if (module_list->len > 0 && (r = helper_client_new(&(HelperClientConfig){}, &c)) < 0) {
                fprintf(stderr, "periscope symbolize: cannot start periscope-helper: %s\n", g_strerror(-r));
                return 1;
        }
        guint named = 0;
        for (guint i = 0; i < module_list->len; i++) {
                Module *m = module_list->pdata[i];
                name_module(c, dirs, debuginfod, m, targets);
                guint here = 0;
                for (guint j = 0; m->syms && j < m->targets->len; j++) {
                        const HelperAddressSymbols *s = &m->syms->addresses[j];
                        Target *t = &g_array_index(targets, Target, g_array_index(m->targets, guint, j));
                        if (s->status == HELPER_ADDRESS_OK && s->n_frames > 0) {
                                t->frames = s->frames;
                                t->n_frames = s->n_frames;
                                here++;
                        }
                }
                named += here;
                g_autofree char *base = g_path_get_basename(m->path);
                printf("%s (build-id %s): %u of %u addresses named; %s\n", base, m->build_id, here, m->targets->len,
                       m->used);
        }

        /* both tables again, with the new names */
        g_autoptr(SymbolTableBuilder) b = NULL;
        if ((r = symbol_table_builder_new(&b)) < 0)
                return 1;
        for (size_t i = 0; i < n_ranges && r >= 0; i++) {
                const SymbolRange *rg = symbol_table_get_range(table, i);
                r = add_range(b, rg, target_of[i] >= 0 ? &g_array_index(targets, Target, target_of[i]) : NULL);
        }
        for (size_t i = 0; i < symbol_table_get_n_mappings(table) && r >= 0; i++) {
                SymbolMapping sm = *symbol_table_get_mapping(table, i);
                Module *m = sm.build_id ? g_hash_table_lookup(modules, sm.build_id) : NULL;
                g_autofree char *method = NULL;
                if (m && m->syms) {
                        method = g_strdup_printf("%s; named later by periscope symbolize from %s", sm.method, m->used);
                        sm.method = method;
                }
                r = symbol_table_builder_add_mapping(b, &sm);
        }
        GHashTableIter it;
        gpointer pid;
        g_hash_table_iter_init(&it, pids);
        while (r >= 0 && g_hash_table_iter_next(&it, &pid, NULL))
                r = symbol_table_builder_add_pid(b, GPOINTER_TO_INT(pid));
        if (r < 0) {
                fprintf(stderr, "periscope symbolize: cannot build the symbol tables: %s\n", g_strerror(-r));
                return 1;
        }
        if (write_capture(reader, (const uint8_t *) data, b, out_to ? out_to : out, FALSE, &error) < 0) {
                fprintf(stderr, "periscope symbolize: %s (%s is unchanged)\n", error->message, in);
                return 1;
        }
        printf("periscope: named %u of %u unnamed addresses", named, unnamed);
        if (no_id)
                printf(" (%u without a verified mapping with a build-id)", no_id);
        printf("; wrote %s\n", out_to ? "standard output" : out);
        return 0;
}
