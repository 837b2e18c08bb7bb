/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* crash-symbols.h: names a capture whose recording never wrote its symbol
 * tables (periscoped died before the end). What the recording wrote as
 * mappings appeared is enough: the MAP frames say which file and offset each
 * sampled address lies in, the `periscope.file` frames how to recognise that
 * file (capture/file-identities.h). Each file is opened at its recorded path
 * on this machine and used only when it is the one that was mapped (inode
 * and device, size and mtime where recorded, build-id where the kernel gave
 * one); another file there leaves its frames
 * "[unresolved: binary changed since it was mapped]". Every file is read by
 * the sandboxed helper. `periscope symbolize` writes the result as the
 * capture's two symbol tables. */
#pragma once

#include <glib.h>

#include "capture.h"
#include "helper-client.h"

/* Whether the capture holds file-identity frames (a recording by a
 * periscoped that writes them as mappings appear). */
gboolean crash_symbols_available(CaptureReader *reader);

typedef struct CrashSymbolsStats {
        guint addresses; /* distinct user-space addresses in mapped files */
        guint named;
} CrashSymbolsStats;

/* Fills b with a range for every sampled user-space address in a mapped
 * file, a mapping record for every mapping they lie in, and every sampled
 * pid; say(line, userdata) gets one line per file (what was named, or why
 * not). c is the helper's client. 0, or negative errno (the
 * capture unreadable, out of memory) with *error set. */
int crash_symbols_build(CaptureReader *reader, HelperClient *c, SymbolTableBuilder *b,
                        void (*say)(const char *line, void *userdata), void *userdata, CrashSymbolsStats *ret_stats,
                        GError **error);
