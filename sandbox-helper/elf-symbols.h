/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf-symbols.h: the ELF_SYMBOLS request: where a few named symbols of an
 * ELF file are, and the executable segment that places them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

/* Reads the request (pgoff, names) from rd, looks the names up in the ELF
 * file open at fd (never by path) and appends the reply to w. Returns 0, or
 * -EBADMSG (malformed request), -ENOEXEC (not ELF), -ENOENT (no executable
 * PT_LOAD holds pgoff); *what names the failure. */
int elf_symbols_run(HelperReader *rd, int fd, HelperWriter *w, const char **what);
