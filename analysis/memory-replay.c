/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory-replay.c: see memory-replay.h. */
#include "memory-replay.h"

typedef struct Event {
        int64_t time;
        uint64_t seq; /* file order, to keep the sort stable */
        uint64_t addr;
        int64_t size; /* 0: free */
        int32_t pid;
        int32_t tid;
        gpointer stack; /* allocations only */
} Event;

/* A block by (pid, address), or a thread by (pid, tid). */
typedef struct BlockKey {
        int32_t pid;
        uint64_t addr;
} BlockKey;

typedef struct Live {
        BlockKey key;
        int64_t size;
        gpointer stack;
} Live;

struct MemoryReplay {
        GArray *events;
};

static guint key_hash(gconstpointer p) {
        const BlockKey *k = p;
        uint64_t v = k->addr ^ ((uint64_t) (uint32_t) k->pid * 0x9e3779b97f4a7c15ull);
        return (guint) (v ^ (v >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b) {
        const BlockKey *x = a, *y = b;
        return x->pid == y->pid && x->addr == y->addr;
}

MemoryReplay *memory_replay_new(void) {
        MemoryReplay *m = g_new0(MemoryReplay, 1);
        m->events = g_array_new(FALSE, FALSE, sizeof(Event));
        return m;
}

void memory_replay_free(MemoryReplay *m) {
        if (!m)
                return;
        g_array_unref(m->events);
        g_free(m);
}

void memory_replay_add(MemoryReplay *m, const ReportEvent *a, gpointer stack) {
        if (!a->allocation || a->size < 0)
                return;
        Event e = { .time = a->time,
                    .seq = m->events->len,
                    .addr = a->block,
                    .size = a->size,
                    .pid = a->pid,
                    .tid = a->tid,
                    .stack = a->size > 0 ? stack : NULL };
        g_array_append_val(m->events, e);
}

guint memory_replay_count(const MemoryReplay *m) {
        return m->events->len;
}

static int event_cmp(gconstpointer a, gconstpointer b) {
        const Event *x = a, *y = b;
        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void memory_replay_run(MemoryReplay *m, MemoryFateFunc fn, gpointer userdata, MemoryReplayStats *ret_stats) {
        MemoryReplayStats st = {};
        g_array_sort(m->events, event_cmp);
        g_autoptr(GHashTable) live = g_hash_table_new_full(key_hash, key_equal, NULL, g_free);
        /* Per thread, its latest allocation while nothing else was allocated
         * since: freeing it then makes it a temporary. */
        g_autoptr(GHashTable) latest = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
        uint64_t cur = 0;
        for (guint i = 0; i < m->events->len; i++) {
                const Event *e = &g_array_index(m->events, Event, i);
                BlockKey key = { e->pid, e->addr };
                BlockKey thread = { e->pid, (uint64_t) (uint32_t) e->tid };
                Live *l = g_hash_table_lookup(live, &key);
                if (e->size > 0) {
                        if (l) { /* its free was lost: the old block went away */
                                fn(l->stack, (uint64_t) l->size, MEMORY_FATE_FREED, userdata);
                                cur -= (uint64_t) l->size;
                                g_hash_table_remove(live, &key);
                        }
                        l = g_new(Live, 1);
                        *l = (Live){ key, e->size, e->stack };
                        g_hash_table_insert(live, &l->key, l);
                        g_hash_table_replace(latest, g_memdup2(&thread, sizeof thread), g_memdup2(&key, sizeof key));
                        st.n_allocs++;
                        st.total_bytes += (uint64_t) e->size;
                        cur += (uint64_t) e->size;
                        if (cur > st.peak_bytes) {
                                st.peak_bytes = cur;
                                st.peak_time = e->time;
                        }
                        continue;
                }
                st.n_frees++;
                if (!l) {
                        st.unmatched_frees++;
                        continue;
                }
                const BlockKey *block = g_hash_table_lookup(latest, &thread);
                MemoryFate fate = MEMORY_FATE_FREED;
                if (block && key_equal(block, &key)) {
                        fate = MEMORY_FATE_TEMPORARY;
                        g_hash_table_remove(latest, &thread);
                }
                fn(l->stack, (uint64_t) l->size, fate, userdata);
                cur -= (uint64_t) l->size;
                g_hash_table_remove(live, &key);
        }
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, live);
        while (g_hash_table_iter_next(&it, NULL, &v)) {
                const Live *l = v;
                fn(l->stack, (uint64_t) l->size, MEMORY_FATE_LEAKED, userdata);
                st.live_count++;
                st.live_bytes += (uint64_t) l->size;
        }
        if (ret_stats)
                *ret_stats = st;
}
