/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* commands.h: the `periscope` subcommands; each lives in its own cmd-*.c and
 * returns the process exit status. */
#pragma once

typedef struct PeriscopeCommand {
        const char *name;
        const char *summary;
        int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} PeriscopeCommand;

int cmd_record(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
