/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-symbolize.c: `periscope symbolize CAPTURE [--debug-dir DIR]…
 * [--debuginfod] [-o OUT]`: names, after the fact and on any machine, the
 * frames a capture could not name when it was recorded. The options, the
 * input and the output are here; the work is analysis/'s: the lookup by
 * build-id and the rewrite (analysis/capture-symbolize.h), and for a capture
 * whose daemon died before writing any table, the naming from the file
 * identities it recorded as mappings appeared (analysis/crash-symbols.h).
 * The result replaces OUT only once complete. */
#include <errno.h>
#include <stdio.h>

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

static void say_line(const char *line, void *userdata) {
        printf("%s\n", line);
}

/* Writes the symbolized capture to out (output-file.h: a regular file is
 * replaced only once complete, a device or pipe written through). */
static int write_capture(CaptureReader *reader, const char *data, SymbolTableBuilder *b, const char *out,
                         gboolean cut_off, GError **error) {
        OutputFile o;
        if (output_file_open(&o, out, OUTPUT_BINARY | OUTPUT_SEEKABLE | OUTPUT_PRIVATE, error) < 0) {
                output_file_finish(&o);
                return -1;
        }
        int r = capture_symbolize_write(reader, (const uint8_t *) data, b, o.fd, cut_off, say_line, NULL);
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
        if (write_capture(reader, data, b, out, TRUE, &error) < 0) {
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

        CaptureSymbolizeOptions o = {
                .name = in,
                .debug_dirs = dirs,
                .debuginfod = debuginfod,
                .say = say_line,
        };
        g_autoptr(SymbolTableBuilder) b = NULL;
        g_autofree char *why = NULL;
        CaptureSymbolizeStats st;
        if ((r = symbol_table_builder_new(&b)) < 0 ||
            (r = capture_symbolize_build(reader, table, &o, b, &st, &why)) < 0) {
                fprintf(stderr, "periscope symbolize: %s\n", why ? why : g_strerror(-r));
                return 1;
        }
        if (write_capture(reader, data, b, out_to ? out_to : out, FALSE, &error) < 0) {
                fprintf(stderr, "periscope symbolize: %s (%s is unchanged)\n", error->message, in);
                return 1;
        }
        printf("periscope: named %u of %u unnamed addresses", st.named, st.unnamed);
        if (st.no_id)
                printf(" (%u without a verified mapping with a build-id)", st.no_id);
        printf("; wrote %s\n", out_to ? "standard output" : out);
        return 0;
}
