/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-sources.h: the symbolize stage's view of a recording's JIT files:
 * which perf maps (pinned by service/process/jit-files.c) and jitdumps
 * (mapped by the processes, pinned like any mapped file) name whose code,
 * and the JITMAP frames written for the addresses they named. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "process.h"
#include "symbolize-addresses.h"

typedef struct JitSources {
        SymbolizeJitSource *sources; /* sorted by pid; perf map before jitdumps */
        size_t n, allocated;
        char **strings;              /* the method texts, owned */
        size_t n_strings, allocated_strings;
        CaptureJitmapEntry *named;   /* JITMAP entries, names owned, by pid */
        int32_t *named_pids;         /* the pid of each entry */
        size_t n_named, allocated_named, allocated_pids;
} JitSources;

/* Collects the JIT files of every pid of maps (jit_files may be NULL). */
int jit_sources_collect(JitSources *s, const ProcessMaps *maps, const JitFiles *jit_files);

/* A SymbolizeOptions.jit_named callback: keeps the name for a JITMAP entry. */
void jit_sources_named(void *userdata, int32_t pid, uint64_t address, const char *name);

/* Writes the kept names as JITMAP frames, one or more per process, each
 * within the frame size limit. */
int jit_sources_write_jitmaps(const JitSources *s, CaptureWriter *w, int64_t time);

/* Frees everything; the struct can be collected into again. */
void jit_sources_done(JitSources *s);

/* True when the file name's last component is "jit-<digits>.dump". */
bool jit_sources_is_jitdump_name(const char *filename);
