/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-tables.h: the daemon's unwind tables, one per file identity, for
 * the life of the daemon. A file's table is compiled by the sandboxed helper
 * (COMPILE_UNWIND on the pinned fd; the vdso from its bytes in
 * /proc/PID/mem), validated once, and kept in an UnwindTableCache. A failed
 * compile is remembered: that file's code is then unwound through the
 * frame-pointer fallback.
 *
 * Compiles never block the event loop: a request copies what it needs (the
 * cache key, a dup of the pinned fd, the vdso's bytes read while the process
 * lives) into a queue that a fiber (fiber.h) serves one request at a time,
 * waiting for the helper from the loop. Whenever a file's fate is decided
 * (a table, or none), every listener hears of it from the loop, and flushes
 * the samples that waited for it. Requests for samples that wait go before
 * requests made ahead of need (a new executable mapping). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "helper-client.h"
#include "process.h"
#include "protocol.h"

typedef struct UnwindTables UnwindTables;

typedef struct UnwindTablesStats {
        uint64_t compiled;         /* tables compiled and validated */
        uint64_t failed;           /* files without a table (no CFI, helper failure, invalid answer) */
        uint64_t helper_failures;  /* of those, the helper failed (crashed, hung, could not start) */
        uint64_t bytes;            /* bytes of tables held */
        uint64_t queued;           /* requests waiting or compiling now */
} UnwindTablesStats;

/* Requests made ahead of need queued at most: past them, a file waits for
 * its first sample (each request holds an fd). */
#define UNWIND_TABLES_MAX_AHEAD 64

/* Creates the set; helper (may be NULL: defaults) configures the helper the
 * set spawns on first use. With an event loop, compiles run on a fiber in
 * it; with e NULL (tools and tests without a loop) unwind_tables_request()
 * compiles before it returns. */
int unwind_tables_new(sd_event *e, const HelperClientConfig *helper, UnwindTables **ret);

/* Cancels the compile under way, drops the queue, frees every table and
 * stops the helper. NULL is a no-op. */
UnwindTables *unwind_tables_free(UnwindTables *t);

/* Asks for the table of the file mapped by m in pid: `needed` when a
 * sample waits for it (served first), else ahead of need (dropped past
 * UNWIND_TABLES_MAX_AHEAD). `owner` is whose samples wait (the uid that
 * asked for the recording): needed compiles are served by turns among
 * owners, so one user's many files do not hold back another user's table. Returns 1 when the file's fate is decided
 * already (unwind_tables_peek() says it), 0 when it is queued or compiling
 * (listeners hear when it is decided), or a negative errno when it cannot
 * be asked for now (a vdso without a pin: its image is taken from the pin,
 * never read out of pid again; out of memory): the caller goes on without
 * a table for this sample. */
int unwind_tables_request(UnwindTables *t, uint32_t owner, int32_t pid, const ProcessMapping *m, bool needed);

/* The validated table of the file m maps, never compiling: *known says
 * whether the file's fate is decided (table or none); when false the
 * result is NULL. */
const UnwindTable *unwind_tables_peek(UnwindTables *t, const ProcessMapping *m, bool *known);

/* Called from the event loop after one or more files' fates were decided. */
typedef void (*UnwindTablesNotify)(void *userdata);

/* Listeners: recordings and live-unwind sessions with samples waiting. A
 * listener may remove itself (or others) from inside its call. */
int unwind_tables_add_listener(UnwindTables *t, UnwindTablesNotify notify, void *userdata);
void unwind_tables_remove_listener(UnwindTables *t, UnwindTablesNotify notify, void *userdata);

/* Each owner's compiles go to a helper of that owner's own (started on
 * its first compile, HelperClientConfig.owner set): what one user's files
 * did to a helper never reaches another user's. A helper is stopped when
 * its owner asked for nothing for 30 s, or here: the owner has no
 * recording left (not while it compiles). */
void unwind_tables_release_owner(UnwindTables *t, uint32_t owner);

/* The pid of owner's helper's bwrap, 0 when none runs (tests, logs). */
int unwind_tables_get_helper_pid(const UnwindTables *t, uint32_t owner);

/* Counters for statistics and logs. */
UnwindTablesStats unwind_tables_get_stats(const UnwindTables *t);
