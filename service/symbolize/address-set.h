/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* address-set.h: the unique (pid, address) pairs seen in samples. At Stop
 * this is the input of symbolization: every code address that some SAMPLE
 * frame of the capture holds, user and kernel. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kernel addresses are stored with this pid: they mean the same in every process. */
#define ADDRESS_SET_KERNEL_PID (-1)

typedef struct AddressSetEntry {
        int32_t pid;               /* ADDRESS_SET_KERNEL_PID for kernel addresses */
        uint64_t address;          /* as in the SAMPLE (return addresses not adjusted) */
        bool return_address;       /* seen as a caller's return address at least once */
} AddressSetEntry;

typedef struct AddressSet AddressSet;

int address_set_new(AddressSet **ret);
AddressSet *address_set_free(AddressSet *s);

/* At most max distinct pairs (0: no limit): a recording's budget of
 * addresses to symbolize; pairs beyond it are counted, not kept. */
void address_set_set_limit(AddressSet *s, size_t max);

/* How many times a pair was not added because the set was full (each
 * occurrence, so a pair seen twice counts twice). */
uint64_t address_set_get_over_limit(const AddressSet *s);

/* Adds a pair: 1 if it was new, 0 if already present or over the limit, -ENOMEM.
 * return_address: the address is a caller frame's return address (it
 * points after a call, which may be the last instruction of its function,
 * so the symbolizer looks at the byte before it); once set for a pair it
 * stays set. */
int address_set_add(AddressSet *s, int32_t pid, uint64_t address, bool return_address);

/* True if the pair is present. */
int address_set_contains(const AddressSet *s, int32_t pid, uint64_t address);

/* All pairs in the order they were first seen. */
const AddressSetEntry *address_set_get_entries(const AddressSet *s, size_t *ret_n);
