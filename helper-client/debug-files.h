/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* debug-files.h: finds the separate debug file of an ELF file, the way gdb
 * and elfutils do, and accepts a candidate only when its identity matches
 * (build-id, or the .gnu_debuglink CRC). Candidates are identified by the
 * sandboxed helper; this code never parses ELF itself. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "basic.h"
#include "helper-client.h"

typedef enum DebugFileKind {
        DEBUG_FILE_NONE,
        DEBUG_FILE_BUILD_ID,    /* <root>/.build-id/xx/rest.debug */
        DEBUG_FILE_DEBUGLINK,   /* .gnu_debuglink in the dir, dir/.debug, <root>/dir */
        DEBUG_FILE_DEBUGINFOD,  /* fetched by periscope-debuginfod-fetch (debuginfod-fetch.h) */
} DebugFileKind;

/* Largest debug file taken from a container's or app's tree (their owner
 * writes them; the host's and debuginfod's are not limited here). */
#define DEBUG_FILE_TREE_MAX_BYTES (4ull << 30)
#define DEBUG_FILE_TREE_MAX_DIRS 2

typedef struct DebugFileOptions {
        const char *debug_root;    /* NULL: /usr/lib/debug */
        bool debuginfod;           /* ask the servers in $DEBUGINFOD_URLS */
        unsigned debuginfod_timeout_s; /* 0: 30 */
        /* How to wait for the fetcher's answer (as
         * HelperClientConfig.wait_readable: the daemon's symbolize fiber
         * goes back to the event loop); NULL: poll(). */
        int (*wait_readable)(int fd, unsigned timeout_ms, void *userdata);
        void *wait_readable_userdata;
        /* Called once per candidate refused in a container's/app's tree
         * (build-id or CRC mismatch, a link out of the tree…); NULL: not logged. */
        void (*log)(void *userdata, const char *message);
        void *log_userdata;
        /* NULL when the caller is root (or is the service itself). Else
         * every candidate is opened with the caller's rights
         * (caller-opener.h): those beside the binary inside the root of
         * process `pid` (the service's "/" when it is gone), those under the
         * host's debug root in the service's "/", symbolic links resolved
         * inside that root; any failure reads as "not there" and leaves no
         * note. Only debuginfod's files are the service's own. */
        CallerOpener *as_caller;
        pid_t pid;
} DebugFileOptions;

/* A filesystem tree besides the host's where the debug file may be: the
 * root of the container or app that mapped the file, or a Flatpak .Debug
 * extension (resolver/debug-trees.h builds them). */
typedef struct DebugFileTree {
        const char *source;        /* provenance word: "container", "flatpak", "flatpak-runtime-debug", … */
        const char *debug_dirs[DEBUG_FILE_TREE_MAX_DIRS]; /* in the tree ("/usr/lib/debug"; "/" for an extension); NULL ends */
        bool holds_binary;         /* the binary's directory is in this tree (.gnu_debuglink beside it) */
        /* Opens the regular file at path (absolute, in the tree) confined to
         * the tree: an fd, or a negative errno with *ret_why saying why (a
         * link out of the tree: -EXDEV). shown gets the host path. */
        int (*open)(void *userdata, const char *path, char *shown, size_t shown_size, char **ret_why);
        void *userdata;
} DebugFileTree;

typedef struct DebugFile {
        int fd;             /* the accepted debug file, or -1 */
        DebugFileKind kind;
        char *path;         /* where it was found ("debuginfod" for a fetched one) */
        const char *source; /* "host", "debuginfod" or the tree's source word; NULL when none */
        char *notes;        /* candidates refused and why, "; "-separated, or NULL */
} DebugFile;

/* Looks for the debug file of the ELF file open at `fd` whose path on the
 * host is `path` (may be NULL when unknown, e.g. deleted: then only
 * build-id and debuginfod lookups run) and whose IDENTIFY answer is *id.
 * Fills *ret (fd -1 when nothing acceptable was found; notes say what was
 * refused: "…: .gnu_debuglink CRC mismatch (file 0x…, expected 0x…), not used").
 * Returns 0, or < 0 when the helper failed (*ret still valid). */
int debug_file_find(HelperClient *c, const DebugFileOptions *o, int fd, const char *path,
                    const HelperIdentity *id, DebugFile *ret);

/* As debug_file_find(), looking first in the trees (in order: the
 * container's/app's own debug files come with its binaries) at the build-id
 * path under each debug dir and the .gnu_debuglink places (beside
 * binary_path, its .debug/, and under each debug dir), then on the host, then
 * debuginfod. binary_path is the binary's path as the process sees it (NULL:
 * no debuglink lookups in trees). Every candidate is accepted only on a
 * matching build-id (or debuglink CRC); refusals go to the notes and, for
 * trees, to o->log. */
int debug_file_find_in_trees(HelperClient *c, const DebugFileOptions *o, int fd, const char *path,
                             const HelperIdentity *id, const DebugFileTree *trees, size_t n_trees,
                             const char *binary_path, DebugFile *ret);

/* Closes and frees what a DebugFile holds. */
void debug_file_clear(DebugFile *f);

/* "build-id", "debuglink", "debuginfod" or "none". */
const char *debug_file_kind_to_string(DebugFileKind k);
