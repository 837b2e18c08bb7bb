/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-info.c: `periscope info FILE`: a summary of a capture — duration,
 * frames by type, processes, samples and lost samples, counters, marks,
 * embedded files and whether symbols are embedded (analysis/capture-info.h).
 * On a malformed capture it prints what was readable, then the error, and
 * exits non-zero. */
#include <errno.h>
#include <stdio.h>

#include <glib.h>

#include "analysis.h"
#include "commands.h"

int cmd_info(int argc, char **argv) {
        gboolean full = FALSE;
        const GOptionEntry entries[] = {
                { "full", 0, 0, G_OPTION_ARG_NONE, &full,
                  "Print command lines whole (else cut at " G_STRINGIFY(CAPTURE_INFO_CMDLINE_SHOWN) " characters)",
                  NULL },
                {},
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("FILE — summarize a Sysprof/Periscope capture");
        g_autoptr(GError) gerr = NULL;
        g_option_context_add_main_entries(ctx, entries, NULL);
        if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
                fprintf(stderr, "periscope info: %s\n", gerr->message);
                return 2;
        }
        if (argc != 2) {
                fprintf(stderr, "periscope info: expected exactly one capture file (periscope info FILE)\n");
                return 2;
        }
        const char *path = argv[1];

        g_autoptr(CaptureReader) reader = NULL;
        int r = cli_capture_open("info", path, &reader);
        if (r < 0)
                return 1;

        g_autoptr(CaptureInfo) info = NULL;
        if (capture_info_load(reader, &info) < 0) {
                fprintf(stderr, "periscope info: %s\n", g_strerror(ENOMEM));
                return 1;
        }
        capture_info_print(stdout, info, path, reader, full);
        fflush(stdout);
        r = capture_info_get_read_error(info);
        if (r < 0) {
                fprintf(stderr, "periscope info: %s: %s (the summary above covers the frames before it)\n", path,
                        cli_capture_read_error(reader, r));
                return 1;
        }
        return 0;
}
