/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-module.h: one ELF file opened for symbolization (its libdwfl
 * session, DWARF, MiniDebugInfo and sorted symbol indexes), and the cache
 * that keeps the last one between SYMBOLIZE requests. The service names a
 * file's addresses in batches of a few hundred; opening the file, reading
 * its DWARF aranges and sorting its symbol table once per file instead of
 * once per batch is what makes the cost follow the addresses asked rather
 * than the file's size (node: 185,000 symbols). Runs inside the sandbox only. */
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "dwarf-functions.h"
#include "symbol-index.h"

/* What a request's fds are: the same (dev, inode, size, times) means the
 * same bytes, so a cached module answers exactly as a fresh one would. */
typedef struct SymbolizeFileKey {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;
} SymbolizeFileKey;

typedef struct SymbolizeModule {
        SymbolizeFileKey file, debug_file;
        bool has_debug_file;
        int debug_fd;            /* handed to libdwfl once, when it asks */
        bool debug_fd_used;
        Dwfl *dwfl;
        Dwfl_Module *mod;
        Elf *main_elf;
        GElf_Addr bias;
        Dwarf *dw;               /* NULL: no DWARF */
        uint8_t dwarf_source;    /* HELPER_SOURCE_DWARF or _DEBUG_FILE */
        Dwfl *mini;              /* MiniDebugInfo, when there is no debug file */
        uint8_t *mini_data;
        Dwfl_Module *mini_mod;
        GElf_Addr mini_bias;
        SymbolIndex syms, mini_syms;
        DwarfFunctionIndex functions; /* of dw's units, built as addresses come */
} SymbolizeModule;

/* The module of the file last asked about; owned by the request loop. */
typedef struct SymbolizeCache {
        SymbolizeModule *last;
} SymbolizeCache;

/* The module for the ELF file at fd (with its separate debug file at
 * debug_fd when >= 0): the cached one when both are the same files, else a
 * freshly opened one that replaces it. Returns 0 and *ret (owned by the
 * cache), -ENOEXEC when fd is not a usable ELF file, -EFBIG when it or its
 * debug file would decompress past the helper's limits
 * (decompress-limits.h; *why then says which, for the ERROR reply), or
 * -errno. */
int symbolize_cache_get(SymbolizeCache *cache, int fd, int debug_fd, SymbolizeModule **ret, const char **why);

/* Frees the cached module (at the end of the loop). */
void symbolize_cache_clear(SymbolizeCache *cache);
