/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* address-set.c: an insertion-ordered array indexed by an open-addressing
 * hash table (linear probing, power-of-two size, at most half full). */
#include "address-set.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"

struct AddressSet {
        AddressSetEntry *entries;
        size_t n_entries, allocated;
        uint32_t *slots;           /* index + 1 into entries, 0 = empty */
        size_t n_slots;
        size_t limit;              /* 0: none */
        uint64_t over_limit;
};

static uint64_t address_hash(int32_t pid, uint64_t address) {
        uint64_t h = address ^ ((uint64_t) (uint32_t) pid * 0x9E3779B97F4A7C15ull);
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        return h;
}

int address_set_new(AddressSet **ret) {
        _cleanup_free_ AddressSet *s = calloc(1, sizeof(AddressSet));
        if (!s)
                return -ENOMEM;
        s->n_slots = 1024;
        s->slots = calloc(s->n_slots, sizeof(uint32_t));
        if (!s->slots)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

AddressSet *address_set_free(AddressSet *s) {
        if (!s)
                return NULL;
        free(s->entries);
        free(s->slots);
        free(s);
        return NULL;
}

static size_t address_set_find_slot(const uint32_t *slots, size_t n_slots, const AddressSetEntry *entries,
                                    int32_t pid, uint64_t address) {
        size_t i = address_hash(pid, address) & (n_slots - 1);
        while (slots[i] != 0) {
                const AddressSetEntry *e = &entries[slots[i] - 1];
                if (e->pid == pid && e->address == address)
                        return i;
                i = (i + 1) & (n_slots - 1);
        }
        return i;
}

static int address_set_grow(AddressSet *s) {
        size_t n = s->n_slots * 2;
        uint32_t *slots = calloc(n, sizeof(uint32_t));
        if (!slots)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_entries; k++) {
                size_t i = address_set_find_slot(slots, n, s->entries, s->entries[k].pid, s->entries[k].address);
                slots[i] = (uint32_t) (k + 1);
        }
        free(s->slots);
        s->slots = slots;
        s->n_slots = n;
        return 0;
}

int address_set_add(AddressSet *s, int32_t pid, uint64_t address, bool return_address) {
        size_t i = address_set_find_slot(s->slots, s->n_slots, s->entries, pid, address);
        if (s->slots[i] != 0) {
                s->entries[s->slots[i] - 1].return_address |= return_address;
                return 0;
        }
        if (s->limit > 0 && s->n_entries >= s->limit) {
                s->over_limit++;
                return 0;
        }
        if (s->n_entries >= UINT32_MAX - 1)
                return -ENOMEM;
        if (GROW_ARRAY(s->entries, s->allocated, s->n_entries + 1, 256) < 0)
                return -ENOMEM;
        s->entries[s->n_entries] = (AddressSetEntry) { pid, address, return_address };
        s->slots[i] = (uint32_t) (++s->n_entries);
        if (s->n_entries * 2 > s->n_slots) {
                int r = address_set_grow(s);
                if (r < 0)
                        return r;
        }
        return 1;
}

void address_set_set_limit(AddressSet *s, size_t max) {
        s->limit = max;
}

uint64_t address_set_get_over_limit(const AddressSet *s) {
        return s->over_limit;
}

int address_set_contains(const AddressSet *s, int32_t pid, uint64_t address) {
        size_t i = address_set_find_slot(s->slots, s->n_slots, s->entries, pid, address);
        return s->slots[i] != 0;
}

const AddressSetEntry *address_set_get_entries(const AddressSet *s, size_t *ret_n) {
        *ret_n = s->n_entries;
        return s->entries;
}
