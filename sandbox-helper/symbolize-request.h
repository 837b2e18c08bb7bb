/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-request.h: the SYMBOLIZE request: file offsets to inline chains. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "symbolize-module.h"

/* Symbolizes `n` file offsets of the ELF file open at `fd` (never by path),
 * using the separate debug file `debug_fd` when >= 0, else the file's own
 * DWARF/.symtab/.dynsym and its MiniDebugInfo. With segment_offsets, the
 * offsets count from the executable PT_LOAD instead (a debug file alone).
 * Appends the SYMBOLIZE reply payload to w. The opened file stays in cache
 * for the next request (the next batch of the same file). Returns 0,
 * -ENOEXEC when `fd` is not a usable ELF file, -EFBIG when it would
 * decompress past the helper's limits (*why says which), or -errno. */
int symbolize_request_run(SymbolizeCache *cache, int fd, int debug_fd, bool segment_offsets, const uint64_t *offsets,
                          size_t n, HelperWriter *w, const char **why);
