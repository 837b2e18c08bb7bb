/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-jit-env.h: JIT names without flags for `periscope record --
 * COMMAND` (docs/jit.md): the command gets the environment that makes its
 * runtime write its own perf map (NODE_OPTIONS gains
 * --perf-basic-prof-only-functions for node, PYTHONPERFSUPPORT=1 for
 * CPython 3.12+), unless the user chose either already; once the recording
 * has finished, the /tmp/perf-PID.map files this caused are removed, with
 * the user's own rights, and none other. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#define RECORD_JIT_ENV_NODE_OPTION "--perf-basic-prof-only-functions"

typedef struct RecordJitEnv {
        bool node;             /* NODE_OPTIONS gets RECORD_JIT_ENV_NODE_OPTION */
        bool python;           /* PYTHONPERFSUPPORT=1 */
        struct timespec start; /* CLOCK_REALTIME before the command was forked */
} RecordJitEnv;

/* Decides from this process's environment what the command gets (nothing
 * when !enabled, --no-jit-env) and notes the time. */
void record_jit_env_init(RecordJitEnv *j, bool enabled);

/* In the forked command, before exec: sets the variables decided; not
 * NODE_OPTIONS where node could not create its map (/tmp not writable, its
 * name taken): node aborts then. Returns 0 or negative errno. */
int record_jit_env_export(const RecordJitEnv *j);

/* After the recording finished and the command exited: removes the perf
 * maps of the command's process tree (from the FORK frames of the capture
 * at capture_dir_fd/capture_name; the command alone when that is NULL) that
 * a program it turned on wrote during the recording. command_line is the
 * command's argv (for when there is no capture to read). Says on stderr
 * what it could not remove. */
void record_jit_env_clean(const RecordJitEnv *j, int capture_dir_fd, const char *capture_name, pid_t command,
                          char **command_line);
