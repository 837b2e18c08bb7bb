/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-flatpak-info.c: libFuzzer target for the parser of /.flatpak-info
 * (read through a sandboxed process's root, so written by whoever controls
 * that sandbox). Through container-parsers.h. */
#include <stddef.h>
#include <stdint.h>

#include "container-parsers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) fuzz_parse_flatpak_info(data, size);
        return 0;
}
