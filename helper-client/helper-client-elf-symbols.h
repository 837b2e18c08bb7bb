/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client-elf-symbols.h: the ELF_SYMBOLS request: where a few named
 * symbols of a mapped ELF file are in the process that mapped it, through
 * the helper, validated (helper-client-elf-symbols.c). Part of
 * helper-client.h, which other folders include. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

typedef struct HelperClient HelperClient;

typedef struct HelperElfSymbol {
        bool found;
        uint64_t address; /* st_value placed in the process (st_value + bias) */
        uint64_t size;    /* st_size */
} HelperElfSymbol;

/* The n (1..HELPER_MAX_ELF_SYMBOLS) symbols names[] of the ELF file fd,
 * mapped executable at start from file offset pgoff: ret[i] for names[i],
 * placed with the bias of that mapping. Returns 0; -ENOENT when no
 * executable segment holds pgoff; -ERANGE when a symbol cannot be placed;
 * otherwise as helper_client_identify(). */
int helper_client_elf_symbols(HelperClient *c, int fd, uint64_t start, uint64_t pgoff, const char *const *names,
                              size_t n, HelperElfSymbol *ret, char **ret_why);

/* Validates and decodes an ELF_SYMBOLS reply for n names into ret (placed
 * as above); -EBADMSG when anything is out of spec, -ERANGE when a symbol
 * cannot be placed. Public for tests. */
int helper_elf_symbols_reply_decode(const uint8_t *payload, size_t size, uint64_t start, uint64_t pgoff, size_t n,
                                    HelperElfSymbol *ret);
