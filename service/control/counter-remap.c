/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-remap.c: open-addressing hash from (pid, program id) to capture id. */
#include "counter-remap.h"

#include <errno.h>
#include <stdlib.h>

typedef struct Slot {
        uint64_t key;   /* pid << 32 | id; 0 marks an empty slot (ids are never 0) */
        uint32_t value;
} Slot;

struct CounterRemap {
        Slot *slots;
        size_t n_slots; /* power of two, at least twice max_entries */
        size_t n_used;
        size_t max_entries;
};

static uint64_t make_key(int32_t pid, uint32_t id) {
        return (uint64_t) (uint32_t) pid << 32 | id;
}

static size_t hash_key(uint64_t k) {
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdull;
        k ^= k >> 33;
        return (size_t) k;
}

int counter_remap_new(size_t max_entries, CounterRemap **ret) {
        if (max_entries == 0 || max_entries > (1u << 24))
                return -EINVAL;
        CounterRemap *m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        size_t n = 16;
        while (n < max_entries * 2)
                n <<= 1;
        m->slots = calloc(n, sizeof(Slot));
        if (!m->slots) {
                free(m);
                return -ENOMEM;
        }
        m->n_slots = n;
        m->max_entries = max_entries;
        *ret = m;
        return 0;
}

CounterRemap *counter_remap_free(CounterRemap *m) {
        if (!m)
                return NULL;
        free(m->slots);
        free(m);
        return NULL;
}

/* The slot holding key, or the empty slot where it would go. */
static Slot *find_slot(const CounterRemap *m, uint64_t key) {
        size_t mask = m->n_slots - 1;
        for (size_t i = hash_key(key) & mask;; i = (i + 1) & mask)
                if (m->slots[i].key == key || m->slots[i].key == 0)
                        return &m->slots[i];
}

int64_t counter_remap_define(CounterRemap *m, CounterIdAllocator *ids, int32_t pid, uint32_t id) {
        if (id == 0)
                return -EINVAL;
        uint64_t key = make_key(pid, id);
        Slot *s = find_slot(m, key);
        if (s->key == key)
                return s->value;
        if (m->n_used >= m->max_entries)
                return -ENOSPC;
        uint32_t v = counter_ids_allocate(ids, 1);
        if (v == 0)
                return -ENOSPC;
        s->key = key;
        s->value = v;
        m->n_used++;
        return v;
}

uint32_t counter_remap_lookup(const CounterRemap *m, int32_t pid, uint32_t id) {
        if (id == 0)
                return 0;
        uint64_t key = make_key(pid, id);
        const Slot *s = find_slot(m, key);
        return s->key == key ? s->value : 0;
}

size_t counter_remap_size(const CounterRemap *m) {
        return m->n_used;
}
