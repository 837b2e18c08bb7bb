/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-jit.h: naming addresses in JIT code (anonymous memory, or no
 * mapping at all) from their process's perf map and jitdump files,
 * through the sandboxed helper's JIT_NAMES request. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "symbolize-addresses.h"

/* An address no mapped file holds. */
typedef struct SymbolizeJitAddress {
        const SymbolizeAddress *addr;
        const SymbolizeMapping *map; /* the anonymous mapping holding it, or NULL */
        const char *why;             /* why it is unresolved when no JIT file names it */
} SymbolizeJitAddress;

/* True when pid has a JIT file in o. */
bool symbolize_jit_has_source(const SymbolizeOptions *o, int32_t pid);

/* Names items (sorted by pid, then address) from their process's JIT
 * files: each named address becomes a one-address range whose frame is
 * flagged SYMBOL_FRAME_JIT (with the jitdump's source line when it has
 * one), is reported to o->jit_named, and its mapping gets a provenance
 * record naming the file; the rest are unresolved with their why (plus
 * what the JIT files said). A failing helper costs only that file's
 * names. Returns 0, or < 0 for out of memory / a refusing builder. */
int symbolize_jit(HelperClient *c, const SymbolizeOptions *o, const SymbolizeJitAddress *items, size_t n,
                  SymbolTableBuilder *b, SymbolizeStats *st);
