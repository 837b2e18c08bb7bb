/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-names.h: the JIT_NAMES request: addresses in JIT code to the names
 * a perf map or jitdump file gives them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

/* Names the n strictly ascending addresses from the JIT file open at fd
 * (format: HelperJitFormat) and appends the JIT_NAMES reply payload to w.
 * Where several entries cover an address the file's last one wins.
 * Returns 0, -EINVAL when the file is not of that format, or -errno. */
int jit_names_run(int fd, uint32_t format, const uint64_t *addresses, size_t n, HelperWriter *w);
