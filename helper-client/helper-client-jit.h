/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client-jit.h: the JIT_NAMES request: names of addresses in JIT
 * code from a perf map or jitdump, through the helper, validated
 * (helper-client-jit.c). Part of helper-client.h, which other folders
 * include. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "basic.h"

typedef struct HelperClient HelperClient;

/* The name of one address in JIT code (JIT_NAMES). */
typedef struct HelperJitName {
        uint8_t status;       /* HelperJitStatus */
        uint64_t start, size; /* the code that holds the address (named only) */
        char *name;           /* valid UTF-8, never empty when named; else NULL */
        char *file;           /* source file (jitdump DEBUG_INFO) or NULL */
        uint32_t line;        /* 0 when unknown */
} HelperJitName;

typedef struct HelperJitNames {
        uint32_t entries; /* code entries the helper read from the file (largest over the batches) */
        uint32_t refused; /* malformed entries it skipped */
        size_t n;
        HelperJitName *names; /* in request order */
} HelperJitNames;

/* JIT_NAMES: names of n strictly ascending addresses from the perf map or
 * jitdump (format) open at fd. Batches as needed. Returns 0 with *ret, or
 * < 0 with *ret_why as above (-EINVAL for addresses out of order). */
int helper_client_jit_names(HelperClient *c, int fd, HelperJitFormat format, const uint64_t *addresses, size_t n,
                            HelperJitNames **ret, char **ret_why);

/* Validates and decodes one JIT_NAMES reply for `count` addresses into
 * out[0..count); raises *entries and *refused to its counts. -EBADMSG
 * when anything is out of spec (out is then cleared). Public for the fuzz
 * target. */
int helper_jit_names_reply_decode(const uint8_t *payload, size_t size, const uint64_t *addresses, size_t count,
                                  HelperJitName *out, uint32_t *entries, uint32_t *refused);

/* Frees a HelperJitNames. Returns NULL. */
HelperJitNames *helper_jit_names_free(HelperJitNames *j);

DEFINE_TRIVIAL_CLEANUP_FUNC(HelperJitNames *, helper_jit_names_free);
