/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* id-args.h: the --pid and --tid lists of the offline commands. */
#pragma once

#include <glib.h>

/* "--pid 1,2 --pid 3" (or --tid) → the int32_t ids in [min_id, INT32_MAX]
 * appended to out; FALSE after "periscope COMMAND: OPTION: 'x' is not a
 * process (thread) id" on stderr for anything else. */
gboolean cli_parse_ids(const char *command, const char *option, char **args, guint64 min_id, GArray *out);
