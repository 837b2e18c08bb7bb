/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jitdump.h: reading a jitdump file (jit-PID.dump), perf's binary JIT
 * interface (tools/perf/Documentation/jitdump-specification.txt in the
 * Linux tree): a header, then JIT_CODE_LOAD (code placed, with its name),
 * JIT_CODE_MOVE (code moved to a new address), JIT_CODE_DEBUG_INFO (source
 * lines of the next load), JIT_CODE_CLOSE (the end) and
 * JIT_CODE_UNWINDING_INFO records, in either byte order. */
#pragma once

#include "jit-entries.h"

/* Reads the jitdump open at fd into out: one entry per LOAD and per MOVE
 * (named after its LOAD), in file order, within HELPER_JIT_MAX_FILE_BYTES
 * and HELPER_JIT_MAX_ENTRIES. Malformed records are counted in
 * out->refused and skipped; a truncated last record (a file still being
 * written) ends the file. -EINVAL when the header is not a jitdump's
 * (version 1, either byte order), else 0 or -errno. */
int jitdump_read(int fd, JitEntries *out);

/* The source position of address (inside e's code) from e's line entries:
 * the last entry at or below it. 1 with *ret_file (malloc'ed, valid UTF-8)
 * and *ret_line set, 0 when e has none that applies, or -errno. */
int jitdump_source_line(int fd, const JitEntries *entries, const JitEntry *e, uint64_t address, char **ret_file,
                        uint32_t *ret_line);
