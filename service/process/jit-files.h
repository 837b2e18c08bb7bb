/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-files.h: the perf map (/tmp/perf-PID.map, PID as the process knows
 * itself in its own pid namespace) of every recorded process, opened
 * through that process's own root, so it is found inside containers and
 * Flatpak sandboxes, and pinned at first sight: the fd reads every line
 * the program appends later, and stays readable after the process exited
 * or removed the file. The daemon only opens the file (no symlinks, a
 * regular file owned by the process's uid, and by the recording's owner
 * when that is not root); the sandboxed helper parses it (JIT_NAMES).
 * (jitdump files need no pinning here: the program maps them, so they are
 * pinned like any mapped file.) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "process-maps.h"

typedef struct Resolver Resolver; /* resolver/resolver.h */

typedef struct JitFile {
        pid_t pid;
        int fd;              /* O_RDONLY|O_CLOEXEC, a regular file; -1 until found */
        char *path;          /* as the process sees it, "/tmp/perf-NSPID.map" */
        char *shown;         /* the host path it was opened through */
} JitFile;

typedef struct JitFiles JitFiles;

/* max_files bounds the fds held. */
int jit_files_new(size_t max_files, JitFiles **ret);

/* Closes every fd; NULL is a no-op. */
JitFiles *jit_files_free(JitFiles *j);

/* Containers whose root the service cannot enter (rootless Podman) are
 * looked into through the resolver (borrowed; may stay unset). */
void jit_files_set_resolver(JitFiles *j, Resolver *r);

/* A caller who is not root records: their files only (file owner uid). */
void jit_files_set_owner(JitFiles *j, uid_t owner_uid);

/* Looks for pid's perf map unless pinned already, or tried less than a
 * back-off interval ago (100 ms, doubling to 1.6 s), or pid exited. A
 * pid seen for the first time is watched from now on. now_ms: monotonic.
 * jit_code: pid just mapped anonymous executable memory (JIT code): then
 * the interval is 100 ms whatever the back-off, since such a process
 * is the one that writes a perf map. Returns 1 when pinned now, 0
 * otherwise, -ENOMEM. */
int jit_files_look(JitFiles *j, pid_t pid, int64_t now_ms, bool jit_code);

/* Looks again for every pid whose interval is up (force: all), every pid
 * of maps (the /proc snapshot's too) watched from now on. -ENOMEM. */
int jit_files_look_all(JitFiles *j, const ProcessMaps *maps, int64_t now_ms, bool force);

/* pid exited: it is no longer looked for (its number may be reused).
 * -ENOMEM. */
int jit_files_exited(JitFiles *j, pid_t pid);

/* pid is a new process (FORK) or runs a new program (exec): unless its
 * perf map is pinned, it is looked for again from now on, at the shortest
 * interval, even if a process of that number exited before. */
int jit_files_new_process(JitFiles *j, pid_t pid, int64_t now_ms);

/* The pinned perf map of pid, or NULL. */
const JitFile *jit_files_get(const JitFiles *j, pid_t pid);

/* Why pid's perf map was refused (e.g. "/tmp/perf-12.map is owned by uid
 * 1001, not by the process's uid 1000"), or NULL. */
const char *jit_files_get_refusal(const JitFiles *j, pid_t pid);

/* Number of perf maps pinned. */
size_t jit_files_get_n_pinned(const JitFiles *j);
