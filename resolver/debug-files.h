/* debug-files.h: finds the separate debug file of an ELF file, the way gdb
 * and elfutils do, and accepts a candidate only when its identity matches
 * (build-id, or the .gnu_debuglink CRC). Candidates are identified by the
 * sandboxed helper; this code never parses ELF itself. */
#pragma once

#include <stdbool.h>

#include "helper-client.h"

typedef enum DebugFileKind {
        DEBUG_FILE_NONE,
        DEBUG_FILE_BUILD_ID,    /* <root>/.build-id/xx/rest.debug */
        DEBUG_FILE_DEBUGLINK,   /* .gnu_debuglink in the dir, dir/.debug, <root>/dir */
        DEBUG_FILE_DEBUGINFOD,  /* fetched by libdebuginfod */
} DebugFileKind;

typedef struct DebugFileOptions {
        const char *debug_root;    /* NULL: /usr/lib/debug */
        bool debuginfod;           /* ask the servers in $DEBUGINFOD_URLS */
        unsigned debuginfod_timeout_s; /* 0: 30 */
} DebugFileOptions;

typedef struct DebugFile {
        int fd;             /* the accepted debug file, or -1 */
        DebugFileKind kind;
        char *path;         /* where it was found (debuginfod: its cache path) */
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

/* Closes and frees what a DebugFile holds. */
void debug_file_clear(DebugFile *f);

/* "build-id", "debuglink", "debuginfod" or "none". */
const char *debug_file_kind_to_string(DebugFileKind k);
