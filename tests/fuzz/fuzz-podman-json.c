/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-podman-json.c: libFuzzer target for the parser of Podman's storage
 * JSON (containers.json, layers.json, images.json), written by whoever owns
 * the storage (a rootless user for theirs). Through container-parsers.h. */
#include <stddef.h>
#include <stdint.h>

#include "container-parsers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) fuzz_parse_podman_json(data, size);
        return 0;
}
