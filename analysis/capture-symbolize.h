/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-symbolize.h: `periscope symbolize`'s work: names, after the fact
 * and on any machine, the frames a capture's Periscope symbol table left
 * unnamed. Each unnamed address of a verified mapping is looked up by the
 * mapped file's build-id: the binary at DIR/.build-id/xx/rest, DIR/<path>
 * or <path> (accepted only with the same build-id), its debug file at
 * DIR/.build-id/xx/rest.debug (or its .gnu_debuglink, the host's
 * /usr/lib/debug, debuginfod), or with no copy of the binary at all, that
 * debug file alone. Every file is read by the sandboxed helper, never here.
 * Both embedded symbol tables are rebuilt, so Sysprof sees the new names
 * too; the rest of the capture is copied frame by frame. (A capture whose
 * daemon died before writing any table: analysis/crash-symbols.h.) */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "helper-client.h"

typedef struct CaptureSymbolizeOptions {
        const char *name;                              /* the capture, as messages name it */
        char *const *debug_dirs;                       /* trees of debug files or binaries (NULL-terminated, or NULL) */
        bool debuginfod;                               /* also ask the servers in $DEBUGINFOD_URLS */
        void (*say)(const char *line, void *userdata); /* one line per file looked up */
        void *userdata;
} CaptureSymbolizeOptions;

typedef struct CaptureSymbolizeStats {
        guint unnamed; /* unnamed ranges in the table */
        guint no_id;   /* of them, without a verified mapping with a build-id */
        guint named;   /* named now */
} CaptureSymbolizeStats;

/* Fills b with the capture's symbol tables rebuilt from table (its
 * Periscope table, loaded from reader) with the names found. 0, or a
 * negative errno with *ret_why saying it (the capture unreadable, the
 * helper not started, out of memory). */
int capture_symbolize_build(CaptureReader *reader, const SymbolTable *table, const CaptureSymbolizeOptions *o,
                            SymbolTableBuilder *b, CaptureSymbolizeStats *ret_stats, char **ret_why);

/* Writes to fd (seekable, empty) the capture reader reads from data: every
 * frame but its symbol tables, then b's, the end time, and the recording's
 * own wall-clock start. cut_off: a capture that ends in a partly written
 * frame (a recorder that died) is copied up to its last whole frame, and
 * say() says so. 0 or a negative errno. */
int capture_symbolize_write(CaptureReader *reader, const uint8_t *data, SymbolTableBuilder *b, int fd, bool cut_off,
                            void (*say)(const char *line, void *userdata), void *userdata);
