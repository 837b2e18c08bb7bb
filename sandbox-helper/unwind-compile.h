/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-compile.h: compiles a file's call frame information (.eh_frame, and
 * .debug_frame for addresses .eh_frame does not cover) into the compact
 * unwind table of capture/unwind-table.h. Runs in the sandbox helper only:
 * it parses ELF and DWARF from untrusted files. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct UnwindCompileStats {
        uint32_t fdes_eh_frame;      /* FDEs read from .eh_frame */
        uint32_t fdes_debug_frame;   /* FDEs read from .debug_frame and used */
        uint32_t rows;               /* rows in the table */
        uint32_t rows_unsupported;   /* rows marked "cannot express" */
        uint32_t rows_plt;           /* PLT expression rows */
        uint32_t rows_signal;        /* signal trampoline rows */
} UnwindCompileStats;

/* Compiles the ELF file open as fd (read from offset 0; the fd is not
 * closed). Returns 0 with a malloc'd table blob in *ret_blob / *ret_size, or a
 * negative errno: -ENOEXEC not an ELF file, -EPROTONOSUPPORT neither x86-64 nor
 * aarch64 (64-bit little-endian),
 * -ENODATA no call frame information at all. stats may be NULL. */
int unwind_compile_fd(int fd, void **ret_blob, size_t *ret_size, UnwindCompileStats *stats);

/* Same for an ELF image held in memory, such as the vdso copied out of a
 * process: the image is read, never modified. */
int unwind_compile_memory(const void *image, size_t size, void **ret_blob, size_t *ret_size, UnwindCompileStats *stats);
