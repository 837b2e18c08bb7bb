/* unwind-tables.h: the daemon's unwind tables, one per file identity, for
 * the life of the daemon. A file's table is compiled by the sandboxed helper
 * (COMPILE_UNWIND on the pinned fd; the vdso from its bytes in
 * /proc/PID/mem) the first time a sample needs it, validated once, and kept
 * in an UnwindTableCache. A failed compile is remembered: that file's code is
 * then unwound through the frame-pointer fallback. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "helper-client.h"
#include "process.h"
#include "protocol.h"

typedef struct UnwindTables UnwindTables;

typedef struct UnwindTablesStats {
        uint64_t compiled;         /* tables compiled and validated */
        uint64_t failed;           /* files without a table (no CFI, helper failure, invalid answer) */
        uint64_t helper_failures;  /* of those, the helper failed (crashed, hung, could not start) */
        uint64_t bytes;            /* bytes of tables held */
} UnwindTablesStats;

/* Creates the set; helper (may be NULL: defaults) configures the helper the
 * set spawns on first use. */
int unwind_tables_new(const HelperClientConfig *helper, UnwindTables **ret);

/* Frees every table and stops the helper. NULL is a no-op. */
UnwindTables *unwind_tables_free(UnwindTables *t);

/* The validated table of the file mapped by m in pid, compiling it on first
 * sight; NULL when the file has none (anonymous/JIT code, no CFI, failure). */
const UnwindTable *unwind_tables_get(UnwindTables *t, int32_t pid, const ProcessMapping *m);

/* Like unwind_tables_get() but never compiles: *known says whether the
 * file's fate is decided (table or none); when false the result is NULL. */
const UnwindTable *unwind_tables_peek(UnwindTables *t, const ProcessMapping *m, bool *known);

/* Counters for statistics and logs. */
UnwindTablesStats unwind_tables_get_stats(const UnwindTables *t);
