/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thread-table.c: thread names by tid, a sorted array (binary search; a
 * new thread is an insertion, a rename a copy). */
#include "thread-table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

#define THREAD_NAME_BYTES 16 /* TASK_COMM_LEN with its NUL: 15 characters */

typedef struct ThreadEntry {
        int32_t tid;
        char name[THREAD_NAME_BYTES + 1];
} ThreadEntry;

struct ThreadTable {
        ThreadEntry *entries; /* by tid */
        size_t n, allocated;
};

int thread_table_new(ThreadTable **ret) {
        ThreadTable *t = calloc(1, sizeof(ThreadTable));
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

ThreadTable *thread_table_free(ThreadTable *t) {
        if (t) {
                free(t->entries);
                free(t);
        }
        return NULL;
}

static size_t find(const ThreadTable *t, int32_t tid) {
        return bsearch_first_at_least_i32(t->entries, t->n, sizeof(ThreadEntry), offsetof(ThreadEntry, tid), tid);
}

int thread_table_set(ThreadTable *t, int32_t tid, const char *name) {
        size_t i = find(t, tid);
        if (i == t->n || t->entries[i].tid != tid) {
                int r = grow_array((void **) &t->entries, &t->allocated, t->n + 1, sizeof(ThreadEntry), 64);
                if (r < 0)
                        return r;
                memmove(t->entries + i + 1, t->entries + i, (t->n - i) * sizeof(ThreadEntry));
                t->n++;
                t->entries[i].tid = tid;
        }
        size_t l = strnlen(name, THREAD_NAME_BYTES);
        memcpy(t->entries[i].name, name, l);
        t->entries[i].name[l] = 0;
        return 0;
}

const char *thread_table_get(const ThreadTable *t, int32_t tid) {
        size_t i = find(t, tid);
        return i < t->n && t->entries[i].tid == tid ? t->entries[i].name : NULL;
}

void thread_table_remove(ThreadTable *t, int32_t tid) {
        size_t i = find(t, tid);
        if (i == t->n || t->entries[i].tid != tid)
                return;
        memmove(t->entries + i, t->entries + i + 1, (t->n - i - 1) * sizeof(ThreadEntry));
        t->n--;
}
