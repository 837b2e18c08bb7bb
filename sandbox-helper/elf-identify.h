/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf-identify.h: the IDENTIFY request: what an ELF file is and where its
 * debug information might be. */
#pragma once

#include <stdint.h>

#include "protocol.h"

/* Reads the ELF file open at `fd` (never by path) and fills *ret. With
 * HELPER_IDENTIFY_WANT_FILE_CRC in flags, also the whole file's CRC32.
 * Returns 0, -ENOEXEC when it is not an ELF file, or -errno. */
int elf_identify_fd(int fd, uint32_t flags, HelperIdentity *ret);

/* Appends the IDENTIFY reply payload for *id to w. */
void elf_identity_encode(HelperWriter *w, const HelperIdentity *id);
