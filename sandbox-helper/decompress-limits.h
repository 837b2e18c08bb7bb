/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decompress-limits.h: how much the helper decompresses for one file. A
 * compressed section (SHF_COMPRESSED, or a GNU .zdebug_* one) declares its
 * decompressed size, and libdw decompresses every debug section when it
 * opens a file: a small file can declare gigabytes (a zlib or xz bomb).
 * Files whose compressed sections declare more than the limit, or whose
 * MiniDebugInfo (.gnu_debugdata, xz) decompresses to more than its own
 * limit, are refused before any decompression, with a message that says so. */
#pragma once

#include <libelf.h>
#include <stdint.h>

/* Sum of the decompressed sizes of one file's compressed sections. */
#define HELPER_MAX_DECOMPRESSED_SECTIONS (1024ull * 1024 * 1024)
#define HELPER_MAX_DECOMPRESSED_SECTIONS_TEXT "1 GiB"

/* Checks the declared decompressed sizes of elf's compressed sections
 * against HELPER_MAX_DECOMPRESSED_SECTIONS. Returns 0, or -EFBIG with *why
 * a static message naming the limit ("refused: its compressed sections
 * decompress to more than 1 GiB"). Reads section headers only. */
int decompress_limits_check(Elf *elf, const char **why);
