/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* addr-key.h: a sampled address with its process, as a GHashTable key
 * (symbolize's rewrite and the crashed-capture naming share it). */
#pragma once

#include <glib.h>
#include <stdint.h>

typedef struct AddrKey {
        int32_t pid;
        uint64_t addr;
} AddrKey;

static inline guint addr_key_hash(gconstpointer v) {
        const AddrKey *k = v;
        return (guint) (k->addr ^ (k->addr >> 31)) ^ (guint) k->pid * 40503u;
}

static inline gboolean addr_key_equal(gconstpointer a, gconstpointer b) {
        const AddrKey *x = a, *y = b;
        return x->pid == y->pid && x->addr == y->addr;
}
