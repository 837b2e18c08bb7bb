/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* minidebuginfo.h: decompression of .gnu_debugdata (MiniDebugInfo). */
#pragma once

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* The decompressed ELF: real ones hold a .symtab of a few MiB; an xz bomb
 * of 91 KiB holds gigabytes. The decoder stops at the limit. */
#define MINIDEBUGINFO_MAX_OUTPUT (64u * 1024u * 1024u)
#define MINIDEBUGINFO_MAX_OUTPUT_TEXT "64 MiB"
#define MINIDEBUGINFO_MEMLIMIT   (128u * 1024u * 1024u) /* xz decoder memory */

/* Finds .gnu_debugdata in `elf` and xz-decompresses it into a new buffer
 * (*ret, *ret_size), refusing outputs above MINIDEBUGINFO_MAX_OUTPUT.
 * Returns 1 when found and decompressed, 0 when the section is absent,
 * or -errno (-EBADMSG for corrupt data, -EFBIG for an oversized output). */
int minidebuginfo_decompress(Elf *elf, uint8_t **ret, size_t *ret_size);
