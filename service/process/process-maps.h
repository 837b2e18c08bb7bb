/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-maps.h: what each process of a recording had mapped, fed by the
 * /proc snapshot at start and by MMAP2 records after, so that a (pid,
 * address) from a sample can be traced to a file, its offset and identity.
 * The DWARF unwinder and the symbolizer look addresses up here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pinned-files.h"

typedef struct ProcessMapping {
        uint64_t start, end;       /* [start, end) */
        uint64_t pgoff;            /* file offset of start */
        uint32_t dev_major, dev_minor;
        uint64_t inode;
        uint8_t build_id_size;     /* 0: the kernel gave none */
        uint8_t build_id[20];
        char *filename;            /* as the kernel names it ("[vdso]", "/usr/lib/… (deleted)") */
        PinnedFile *pinned;        /* owned by the recording's PinnedFiles; NULL if not pinned */
        int64_t time;              /* when it was mapped (0: found in the /proc snapshot) */
} ProcessMapping;

typedef struct ProcessMaps ProcessMaps;

/* Whether a mapping's name says no file backs it: "" and "//anon" (perf's
 * name for anonymous memory, where JIT compilers put their code),
 * "[anon:NAME]" (prctl PR_SET_VMA_ANON_NAME). */
bool process_mapping_name_is_anonymous(const char *filename);

int process_maps_new(ProcessMaps **ret);
ProcessMaps *process_maps_free(ProcessMaps *m);

/* Adds a mapping to pid (copying filename), cutting away whatever part of
 * older mappings it covers, as mmap() does. A mapping timed before pid's
 * last exec belonged to the old image and is dropped (records come from
 * per-CPU rings, so they arrive out of time order). */
int process_maps_add(ProcessMaps *m, int32_t pid, const ProcessMapping *mapping);

/* The mapping of pid that contains address, or NULL. */
const ProcessMapping *process_maps_lookup(const ProcessMaps *m, int32_t pid, uint64_t address);

/* The mapping of pid that contained address at `time`: for a time before
 * pid's last exec, the old image's (the newest retired mapping that covers
 * it); else as process_maps_lookup(). A sample taken while a process
 * exec'd is often unwound after the new image's mappings came in. */
const ProcessMapping *process_maps_lookup_at(const ProcessMaps *m, int32_t pid, uint64_t address, int64_t time);

/* The child starts with a copy of the parent's mappings (fork at time);
 * nothing is copied if the child's exec after the fork was seen already. */
int process_maps_fork(ProcessMaps *m, int32_t parent, int32_t child, int64_t time);

/* pid exec'd at time: the mappings made before are retired (see
 * process_maps_get_retired), later ones kept. */
int process_maps_exec(ProcessMaps *m, int32_t pid, int64_t time);

/* The mappings pid had before its execs, oldest image first, unsorted and
 * possibly overlapping each other or the current ones: for naming samples
 * taken before an exec (NULL/0 when none). */
const ProcessMapping *process_maps_get_retired(const ProcessMaps *m, int32_t pid, size_t *ret_n);

/* When pid last exec'd (record time), 0 when no exec of it was seen. */
int64_t process_maps_get_exec_time(const ProcessMaps *m, int32_t pid);

/* All mappings of pid, sorted by start (NULL/0 for an unknown pid). */
const ProcessMapping *process_maps_get(const ProcessMaps *m, int32_t pid, size_t *ret_n);

/* As process_maps_get(), to change what the mappings hold (their pins). */
ProcessMapping *process_maps_get_writable(ProcessMaps *m, int32_t pid, size_t *ret_n);

/* Pids with a table, ascending; pointer valid until the next change. */
const int32_t *process_maps_get_pids(const ProcessMaps *m, size_t *ret_n);
