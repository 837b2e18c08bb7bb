/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-module.c: see symbolize-module.h. Runs inside the sandbox only. */
#include "symbolize-module.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "decompress-limits.h"
#include "minidebuginfo.h"
#include "protocol.h"

/* libdwfl asks for the separate debug file: hand it the passed fd, never a
 * path lookup. */
static int find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                             const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                             char **debuginfo_file_name) {
        SymbolizeModule *m = *userdata;
        if (!m || m->debug_fd < 0 || m->debug_fd_used)
                return -1;
        m->debug_fd_used = true;
        return fcntl(m->debug_fd, F_DUPFD_CLOEXEC, 3);
}

/* No other lookups: modules are reported with their fds. */
static int find_elf_cb(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                       char **file_name, Elf **elfp) {
        return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
        .find_elf = find_elf_cb,
        .find_debuginfo = find_debuginfo_cb,
        .section_address = dwfl_offline_section_address,
};

static int file_key(int fd, SymbolizeFileKey *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret = (SymbolizeFileKey) { .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
                                    .mtime = st.st_mtim, .ctime = st.st_ctim };
        return 0;
}

static bool file_key_equal(const SymbolizeFileKey *a, const SymbolizeFileKey *b) {
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
               a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
               a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static SymbolizeModule *module_free(SymbolizeModule *m) {
        if (!m)
                return NULL;
        symbol_index_clear(&m->syms);
        symbol_index_clear(&m->mini_syms);
        dwarf_functions_clear(&m->functions);
        if (m->mini)
                dwfl_end(m->mini);
        free(m->mini_data); /* after the Dwfl that reads it */
        if (m->dwfl)
                dwfl_end(m->dwfl);
        free(m);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(SymbolizeModule *, module_free);

/* MiniDebugInfo (.gnu_debugdata) as a module of its own; absent or
 * corrupt is fine, past the decompression limit refuses the file. */
static int open_minidebuginfo(SymbolizeModule *m, const char **why) {
        size_t size = 0;
        int r = minidebuginfo_decompress(m->main_elf, &m->mini_data, &size);
        if (r == -EFBIG) {
                *why = "refused: its MiniDebugInfo (.gnu_debugdata) decompresses to more than "
                       MINIDEBUGINFO_MAX_OUTPUT_TEXT;
                return r;
        }
        if (r <= 0)
                return 0;
        m->mini = dwfl_begin(&dwfl_callbacks);
        if (m->mini)
                m->mini_mod = dwfl_report_offline_memory(m->mini, "minidebuginfo", "minidebuginfo",
                                                         (char *) m->mini_data, size);
        if (m->mini_mod && (dwfl_report_end(m->mini, NULL, NULL) != 0 || !dwfl_module_getelf(m->mini_mod, &m->mini_bias)))
                m->mini_mod = NULL;
        return 0;
}

/* The separate debug file's compressed sections, before libdw opens it. */
static int check_debug_file(int debug_fd, const char **why) {
        static const char debug_too_large[] = "refused: the debug file's compressed sections decompress to more than "
                                              HELPER_MAX_DECOMPRESSED_SECTIONS_TEXT;
        Elf *elf = elf_begin(debug_fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                return 0; /* libdw will not use it either */
        int r = decompress_limits_check(elf, why);
        elf_end(elf);
        if (r < 0)
                *why = debug_too_large;
        return r;
}

static int module_open(int fd, int debug_fd, const SymbolizeFileKey *key, const SymbolizeFileKey *debug_key,
                       SymbolizeModule **ret, const char **why) {
        _cleanup_(module_freep) SymbolizeModule *m = calloc(1, sizeof *m);
        if (!m)
                return -ENOMEM;
        m->file = *key;
        m->has_debug_file = debug_fd >= 0;
        if (debug_key)
                m->debug_file = *debug_key;
        m->debug_fd = debug_fd;
        m->dwfl = dwfl_begin(&dwfl_callbacks);
        if (!m->dwfl)
                return -ENOMEM;
        int mainfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (mainfd < 0)
                return -errno;
        m->mod = dwfl_report_offline(m->dwfl, "file", "file", mainfd); /* takes mainfd */
        if (!m->mod || dwfl_report_end(m->dwfl, NULL, NULL) != 0)
                return -ENOEXEC;
        void **userdata = NULL;
        dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
        if (userdata)
                *userdata = m;

        m->main_elf = dwfl_module_getelf(m->mod, &m->bias);
        if (!m->main_elf)
                return -ENOEXEC;
        /* Nothing decompressed past the limits (libdw decompresses every
         * debug section as it opens a file): a bomb is refused, not read. */
        int r = decompress_limits_check(m->main_elf, why);
        if (r == 0 && debug_fd >= 0)
                r = check_debug_file(debug_fd, why);
        if (r < 0)
                return r;
        /* DWARF: from the separate debug file when one is passed */
        Dwarf_Addr dwbias = 0;
        m->dw = dwfl_module_getdwarf(m->mod, &dwbias);
        m->dwarf_source = m->dw && dwarf_getelf(m->dw) != m->main_elf ? HELPER_SOURCE_DEBUG_FILE : HELPER_SOURCE_DWARF;
        /* MiniDebugInfo only when there is no separate debug file */
        if (debug_fd < 0 && (r = open_minidebuginfo(m, why)) < 0)
                return r;
        /* one sorted pass over each symbol table, then a search per address */
        if (symbol_index_build(m->mod, &m->syms) < 0 || (m->mini_mod && symbol_index_build(m->mini_mod, &m->mini_syms) < 0))
                return -ENOMEM;
        /* libdwfl has taken what it wanted of the debug file; the request's
         * fd closes after it */
        m->debug_fd = -1;
        *ret = TAKE_PTR(m);
        return 0;
}

int symbolize_cache_get(SymbolizeCache *cache, int fd, int debug_fd, SymbolizeModule **ret, const char **why) {
        SymbolizeFileKey key, debug_key;
        int r = file_key(fd, &key);
        if (r < 0)
                return r;
        if (debug_fd >= 0 && (r = file_key(debug_fd, &debug_key)) < 0)
                return r;
        SymbolizeModule *last = cache->last;
        if (last && file_key_equal(&last->file, &key) && last->has_debug_file == (debug_fd >= 0) &&
            (debug_fd < 0 || file_key_equal(&last->debug_file, &debug_key))) {
                *ret = last;
                return 0;
        }
        symbolize_cache_clear(cache);
        r = module_open(fd, debug_fd, &key, debug_fd >= 0 ? &debug_key : NULL, &cache->last, why);
        if (r < 0)
                return r;
        *ret = cache->last;
        return 0;
}

void symbolize_cache_clear(SymbolizeCache *cache) {
        cache->last = module_free(cache->last);
}
