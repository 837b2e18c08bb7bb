/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-sources.c: perf maps and jitdumps per process for the symbolize
 * stage, and the JITMAP frames that repeat the names they gave. */
#include "jit-sources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

/* Fixed part of a JITMAP frame, and room left for entries in one frame. */
#define JITMAP_FRAME_BUDGET (CAPTURE_FRAME_MAX - CAPTURE_JITMAP_SIZE - 8)

bool jit_sources_is_jitdump_name(const char *filename) {
        if (!filename)
                return false;
        const char *base = strrchr(filename, '/');
        base = base ? base + 1 : filename;
        if (strncmp(base, "jit-", 4) != 0)
                return false;
        const char *p = base + 4;
        size_t digits = strspn(p, "0123456789");
        return digits > 0 && strcmp(p + digits, ".dump") == 0;
}

static int keep_string(JitSources *s, char *str) {
        if (!str)
                return -ENOMEM;
        if (GROW_ARRAY(s->strings, s->allocated_strings, s->n_strings + 1, 16) < 0) {
                free(str);
                return -ENOMEM;
        }
        s->strings[s->n_strings++] = str;
        return 0;
}

static int add_source(JitSources *s, const SymbolizeJitSource *src) {
        if (GROW_ARRAY(s->sources, s->allocated, s->n + 1, 16) < 0)
                return -ENOMEM;
        s->sources[s->n++] = *src;
        return 0;
}

/* The jitdumps pid mapped (before and after its execs), each file once. */
static int add_jitdumps(JitSources *s, int32_t pid, const ProcessMapping *m, size_t n, size_t first) {
        for (size_t i = 0; i < n; i++) {
                if (!m[i].pinned || !jit_sources_is_jitdump_name(m[i].filename))
                        continue;
                bool seen = false;
                for (size_t k = first; k < s->n && !seen; k++)
                        seen = s->sources[k].fd == m[i].pinned->fd;
                if (seen)
                        continue;
                int r = keep_string(s, strdup_printf("jitdump mapped by the process, pinned through %s",
                                                     pinned_file_how_to_string(m[i].pinned->how)));
                if (r < 0)
                        return r;
                r = add_source(s, &(SymbolizeJitSource) {
                        .pid = pid,
                        .fd = m[i].pinned->fd,
                        .format = HELPER_JIT_DUMP,
                        .path = m[i].filename,
                        .method = s->strings[s->n_strings - 1],
                });
                if (r < 0)
                        return r;
        }
        return 0;
}

int jit_sources_collect(JitSources *s, const ProcessMaps *maps, const JitFiles *jit_files) {
        size_t n_pids = 0;
        const int32_t *pids = maps ? process_maps_get_pids(maps, &n_pids) : NULL;
        for (size_t i = 0; i < n_pids; i++) {
                size_t first = s->n, n = 0, n_retired = 0;
                const JitFile *jf = jit_files ? jit_files_get(jit_files, pids[i]) : NULL;
                if (jf) {
                        int r = keep_string(s, strdup_printf("perf map, pinned through %s", jf->shown));
                        if (r < 0)
                                return r;
                        r = add_source(s, &(SymbolizeJitSource) {
                                .pid = pids[i],
                                .fd = jf->fd,
                                .format = HELPER_JIT_PERF_MAP,
                                .path = jf->path,
                                .method = s->strings[s->n_strings - 1],
                        });
                        if (r < 0)
                                return r;
                }
                const ProcessMapping *m = process_maps_get(maps, pids[i], &n);
                const ProcessMapping *old = process_maps_get_retired(maps, pids[i], &n_retired);
                int r = add_jitdumps(s, pids[i], m, n, first);
                if (r >= 0)
                        r = add_jitdumps(s, pids[i], old, n_retired, first);
                if (r < 0)
                        return r;
        }
        return 0;
}

void jit_sources_named(void *userdata, int32_t pid, uint64_t address, const char *name) {
        JitSources *s = userdata;
        if (GROW_ARRAY(s->named, s->allocated_named, s->n_named + 1, 64) < 0 ||
            GROW_ARRAY(s->named_pids, s->allocated_pids, s->n_named + 1, 64) < 0)
                return; /* the JITMAP lacks it; the symbol tables have it */
        char *copy = strdup(name);
        if (!copy)
                return;
        s->named[s->n_named] = (CaptureJitmapEntry) { .address = address, .name = copy };
        s->named_pids[s->n_named++] = pid;
}

int jit_sources_write_jitmaps(const JitSources *s, CaptureWriter *w, int64_t time) {
        for (size_t i = 0; i < s->n_named;) {
                size_t j = i, bytes = 0;
                while (j < s->n_named && s->named_pids[j] == s->named_pids[i]) {
                        size_t entry = 8 + strlen(s->named[j].name) + 1;
                        if (j > i && bytes + entry > JITMAP_FRAME_BUDGET)
                                break;
                        bytes += entry;
                        j++;
                }
                int r = capture_writer_add_jitmap(w, time, -1, s->named_pids[i], s->named + i, j - i);
                if (r < 0)
                        return r;
                i = j;
        }
        return 0;
}

void jit_sources_done(JitSources *s) {
        for (size_t i = 0; i < s->n_strings; i++)
                free(s->strings[i]);
        for (size_t i = 0; i < s->n_named; i++)
                free((char *) s->named[i].name);
        free(s->strings);
        free(s->sources);
        free(s->named);
        free(s->named_pids);
        *s = (JitSources) {};
}
