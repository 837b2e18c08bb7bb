/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-maps.c: per pid, a sorted array of non-overlapping mappings; the
 * pids themselves in a sorted array (binary search for both). */
#include "process-maps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

typedef struct ProcessTable {
        ProcessMapping *maps;
        size_t n_maps, allocated;
        int64_t exec_time;         /* latest exec seen (0: none) */
        ProcessMapping *retired;   /* the images before its execs (unsorted) */
        size_t n_retired;
} ProcessTable;

/* Bounds what a process that execs again and again keeps of its past. */
#define PROCESS_MAPS_MAX_RETIRED 1024

struct ProcessMaps {
        int32_t *pids;             /* sorted */
        ProcessTable *tables;      /* parallel to pids */
        size_t n_pids, allocated;
};

int process_maps_new(ProcessMaps **ret) {
        ProcessMaps *m = calloc(1, sizeof(ProcessMaps));
        if (!m)
                return -ENOMEM;
        *ret = m;
        return 0;
}

static void process_table_clear(ProcessTable *t) {
        for (size_t i = 0; i < t->n_maps; i++)
                free(t->maps[i].filename);
        free(t->maps);
        for (size_t i = 0; i < t->n_retired; i++)
                free(t->retired[i].filename);
        free(t->retired);
        *t = (ProcessTable) {};
}

ProcessMaps *process_maps_free(ProcessMaps *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_pids; i++)
                process_table_clear(&m->tables[i]);
        free(m->tables);
        free(m->pids);
        free(m);
        return NULL;
}

static size_t pid_index(const ProcessMaps *m, int32_t pid) {
        return bsearch_first_at_least_i32(m->pids, m->n_pids, sizeof(int32_t), 0, pid);
}

static ProcessTable *process_maps_find(const ProcessMaps *m, int32_t pid) {
        size_t i = pid_index(m, pid);
        return i < m->n_pids && m->pids[i] == pid ? &m->tables[i] : NULL;
}

static int process_maps_ensure(ProcessMaps *m, int32_t pid, ProcessTable **ret) {
        size_t i = pid_index(m, pid);
        if (i < m->n_pids && m->pids[i] == pid) {
                *ret = &m->tables[i];
                return 0;
        }
        if (m->n_pids == m->allocated) {
                size_t n = m->allocated ? m->allocated * 2 : 32;
                int32_t *pids = reallocarray(m->pids, n, sizeof(int32_t));
                if (!pids)
                        return -ENOMEM;
                m->pids = pids;
                ProcessTable *tables = reallocarray(m->tables, n, sizeof(ProcessTable));
                if (!tables)
                        return -ENOMEM;
                m->tables = tables;
                m->allocated = n;
        }
        memmove(m->pids + i + 1, m->pids + i, (m->n_pids - i) * sizeof(int32_t));
        memmove(m->tables + i + 1, m->tables + i, (m->n_pids - i) * sizeof(ProcessTable));
        m->pids[i] = pid;
        m->tables[i] = (ProcessTable) {};
        m->n_pids++;
        *ret = &m->tables[i];
        return 0;
}

static int process_table_reserve(ProcessTable *t, size_t extra) {
        if (t->n_maps + extra <= t->allocated)
                return 0;
        size_t n = t->allocated ? t->allocated * 2 : 16;
        while (n < t->n_maps + extra)
                n *= 2;
        ProcessMapping *a = reallocarray(t->maps, n, sizeof(ProcessMapping));
        if (!a)
                return -ENOMEM;
        t->maps = a;
        t->allocated = n;
        return 0;
}

/* Index of the first mapping whose end is above address. */
static size_t process_table_first_ending_after(const ProcessTable *t, uint64_t address) {
        return FIRST_ABOVE(t->maps, t->n_maps, end, address);
}

int process_maps_add(ProcessMaps *m, int32_t pid, const ProcessMapping *mapping) {
        if (mapping->end <= mapping->start)
                return -EINVAL;
        ProcessTable *t;
        int r = process_maps_ensure(m, pid, &t);
        if (r < 0)
                return r;
        if (mapping->time != 0 && mapping->time < t->exec_time)
                return 0; /* the old image's, seen after the exec */
        /* At most one old mapping gets split in two, plus the new one. */
        r = process_table_reserve(t, 2);
        if (r < 0)
                return r;
        _cleanup_free_ char *name = strdup(mapping->filename ? mapping->filename : "");
        if (!name)
                return -ENOMEM;

        size_t i = process_table_first_ending_after(t, mapping->start);
        size_t j = i; /* first mapping entirely after the new one */
        while (j < t->n_maps && t->maps[j].start < mapping->end)
                j++;

        /* Pieces of old mappings that stick out on the left and the right. */
        ProcessMapping left = {}, right = {};
        bool has_left = false, has_right = false;
        if (i < j && t->maps[i].start < mapping->start) {
                left = t->maps[i];
                left.end = mapping->start;
                left.filename = strdup(t->maps[i].filename);
                if (!left.filename)
                        return -ENOMEM;
                has_left = true;
        }
        if (i < j && t->maps[j - 1].end > mapping->end) {
                right = t->maps[j - 1];
                right.pgoff += mapping->end - right.start;
                right.start = mapping->end;
                right.filename = strdup(t->maps[j - 1].filename);
                if (!right.filename) {
                        free(left.filename);
                        return -ENOMEM;
                }
                has_right = true;
        }
        for (size_t k = i; k < j; k++)
                free(t->maps[k].filename);

        size_t n_new = (size_t) has_left + 1 + (size_t) has_right;
        size_t tail = t->n_maps - j;
        memmove(t->maps + i + n_new, t->maps + j, tail * sizeof(ProcessMapping));
        size_t k = i;
        if (has_left)
                t->maps[k++] = left;
        t->maps[k] = *mapping;
        t->maps[k++].filename = TAKE_PTR(name);
        if (has_right)
                t->maps[k++] = right;
        t->n_maps = i + n_new + tail;
        return 0;
}

const ProcessMapping *process_maps_lookup(const ProcessMaps *m, int32_t pid, uint64_t address) {
        const ProcessTable *t = process_maps_find(m, pid);
        if (!t)
                return NULL;
        size_t i = process_table_first_ending_after(t, address);
        if (i < t->n_maps && t->maps[i].start <= address)
                return &t->maps[i];
        return NULL;
}

const ProcessMapping *process_maps_lookup_at(const ProcessMaps *m, int32_t pid, uint64_t address, int64_t time) {
        const ProcessTable *t = process_maps_find(m, pid);
        if (!t)
                return NULL;
        if (time > 0 && time < t->exec_time) {
                /* retired images are appended in exec order: newest last */
                for (size_t i = t->n_retired; i > 0; i--) {
                        const ProcessMapping *r = &t->retired[i - 1];
                        if (r->start <= address && address < r->end && (r->time == 0 || r->time <= time))
                                return r;
                }
                return NULL;
        }
        return process_maps_lookup(m, pid, address);
}

int process_maps_fork(ProcessMaps *m, int32_t parent, int32_t child, int64_t time) {
        if (parent == child)
                return 0;
        ProcessTable *c;
        int r = process_maps_ensure(m, child, &c);
        if (r < 0)
                return r;
        if (c->exec_time > time)
                return 0; /* the child's exec (and its new image) came first */
        process_table_clear(c);
        const ProcessTable *p = process_maps_find(m, parent); /* after ensure: tables may move */
        if (!p || p->n_maps == 0)
                return 0;
        r = process_table_reserve(c, p->n_maps);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_maps; i++) {
                c->maps[i] = p->maps[i];
                c->maps[i].filename = strdup(p->maps[i].filename);
                if (!c->maps[i].filename) {
                        c->n_maps = i;
                        return -ENOMEM;
                }
        }
        c->n_maps = p->n_maps;
        return 0;
}

int process_maps_exec(ProcessMaps *m, int32_t pid, int64_t time) {
        ProcessTable *t;
        int r = process_maps_ensure(m, pid, &t);
        if (r < 0)
                return r;
        if (time <= t->exec_time)
                return 0;
        t->exec_time = time;
        size_t n_old = 0;
        for (size_t i = 0; i < t->n_maps; i++)
                n_old += t->maps[i].time < time;
        /* The old image's mappings are retired, not forgotten: samples taken
         * before the exec are named from them. Without room, forgotten. */
        ProcessMapping *retired = NULL;
        if (n_old > 0 && t->n_retired + n_old <= PROCESS_MAPS_MAX_RETIRED) {
                retired = reallocarray(t->retired, t->n_retired + n_old, sizeof(ProcessMapping));
                if (retired)
                        t->retired = retired;
        }
        size_t kept = 0;
        for (size_t i = 0; i < t->n_maps; i++) {
                if (t->maps[i].time >= time)
                        t->maps[kept++] = t->maps[i];
                else if (retired)
                        t->retired[t->n_retired++] = t->maps[i];
                else
                        free(t->maps[i].filename);
        }
        t->n_maps = kept;
        return 0;
}

const ProcessMapping *process_maps_get(const ProcessMaps *m, int32_t pid, size_t *ret_n) {
        const ProcessTable *t = process_maps_find(m, pid);
        *ret_n = t ? t->n_maps : 0;
        return t ? t->maps : NULL;
}

ProcessMapping *process_maps_get_writable(ProcessMaps *m, int32_t pid, size_t *ret_n) {
        ProcessTable *t = process_maps_find(m, pid);
        *ret_n = t ? t->n_maps : 0;
        return t ? t->maps : NULL;
}

const ProcessMapping *process_maps_get_retired(const ProcessMaps *m, int32_t pid, size_t *ret_n) {
        const ProcessTable *t = process_maps_find(m, pid);
        *ret_n = t ? t->n_retired : 0;
        return t ? t->retired : NULL;
}

int64_t process_maps_get_exec_time(const ProcessMaps *m, int32_t pid) {
        const ProcessTable *t = process_maps_find(m, pid);
        return t ? t->exec_time : 0;
}

const int32_t *process_maps_get_pids(const ProcessMaps *m, size_t *ret_n) {
        *ret_n = m->n_pids;
        return m->pids;
}

bool process_mapping_name_is_anonymous(const char *filename) {
        return !filename || filename[0] == '\0' || strcmp(filename, "//anon") == 0 ||
               strncmp(filename, "[anon", 5) == 0;
}
