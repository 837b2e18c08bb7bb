/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* periscope.c: entry point of the `periscope` command; dispatches to the
 * subcommands listed in commands.h. */
#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "build-features.h"
#include "commands.h"

static const PeriscopeCommand commands[] = {
        { "record", "Record CPU stacks of a command, processes or the system", cmd_record },
        { "list", "List what you may record: processes, containers, Flatpak apps", cmd_list },
        { "info", "Summarize a capture file", cmd_info },
        { "dump", "Print every frame of a capture, as text or JSON", cmd_dump },
        { "report", "Show where the time went: hottest functions, call tree, flame graph", cmd_report },
        { "export", "Convert a capture to pprof, speedscope, perf-script or folded stacks", cmd_export },
        { "symbolize", "Name the frames a capture could not name, from debug files found by build-id", cmd_symbolize },
};

static void usage(FILE *out) {
        fprintf(out, "Usage: periscope COMMAND [OPTIONS…]\n\nCommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(out, "\nRun `periscope COMMAND --help` for the options of one command.\n");
}

int main(int argc, char **argv) {
        setlocale(LC_ALL, "");
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("periscope %s\n%s\n", PERISCOPE_VERSION, PERISCOPE_FEATURES);
                return 0;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[1], commands[i].name) == 0) {
                        /* Usage lines read "Usage: periscope record …" */
                        g_autofree char *prgname = g_strdup_printf("periscope %s", commands[i].name);
                        g_set_prgname(prgname);
                        return commands[i].run(argc - 1, argv + 1);
                }
        fprintf(stderr, "periscope: unknown command '%s'\n\n", argv[1]);
        usage(stderr);
        return 2;
}
