/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-addresses.h: the symbolization stage at the end of a recording: every
 * (pid, address) seen is mapped to its mapping, the mapped file (a pinned fd)
 * and its debug file go to the sandboxed helper, and the answers fill the
 * capture's symbol tables (capture/symbols.h) together with each mapping's
 * provenance. Kernel addresses are named from /proc/kallsyms when allowed.
 * Plain C, synchronous with per-request timeouts; the service runs it on a
 * fiber whose helper waits and yields go back to its event loop. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helper-client.h"
#include "capture.h"

/* One mapping of one process, as recorded. */
/* The work cut short (the service is stopping). Addresses not named are
 * "[unresolved: why]" and their mappings keep a build-id (the helper's,
 * else the kernel's from MMAP2), so `periscope symbolize` names them later. */
typedef struct SymbolizeCut {
        const char *why; /* set: hurry: files not reached are only identified (a short helper
                          * request each, for their build-id), not named */
        bool now;        /* no helper at all any more (its waits fail at once) */
} SymbolizeCut;

typedef struct SymbolizeMapping {
        int32_t pid;
        uint64_t start, end;  /* [start, end) in the process */
        uint64_t pgoff;       /* file offset of start */
        int fd;               /* the pinned mapped file, or -1 when it could not be pinned */
        const char *path;     /* host path of the file (for .gnu_debuglink), or NULL */
        const char *method;   /* how the file was found, e.g. "pinned map_files" */
        const char *verdict;  /* resolver's identity verdict, e.g. "inode match" */
        bool verified;        /* the file is the one that was mapped */
        const char *why_unavailable; /* when fd < 0: why (shown as unresolved reason) */
        const uint8_t *build_id;     /* the kernel's build-id for the mapping (MMAP2), or NULL */
        size_t build_id_size;
} SymbolizeMapping;

typedef struct SymbolizeAddress {
        int32_t pid;
        uint64_t address;
        bool kernel;          /* from the kernel part of a callchain */
        bool return_address;  /* a caller's return address: named by the byte before it */
} SymbolizeAddress;

/* A JIT file of one process (docs/jit.md): its perf map, pinned through
 * the process's root, or a jitdump the process mapped. */
typedef struct SymbolizeJitSource {
        int32_t pid;
        int fd;                 /* borrowed; a regular file */
        HelperJitFormat format;
        const char *path;       /* as the process names it: "/tmp/perf-1.map", "/tmp/jit-1.dump" */
        const char *method;     /* how it was opened: "perf map, pinned through /proc/P/root/…" */
} SymbolizeJitSource;

typedef struct SymbolizeOptions {
        HelperClientConfig helper;
        DebugFileOptions debug;      /* .debuginfod from the recording's option */
        bool kernel_symbols;         /* the caller may see kernel addresses */
        const char *kallsyms_path;   /* NULL: /proc/kallsyms */
        /* The trees of pid's container or app where its debug files may be
         * (the service builds them with resolver/debug-trees.h); NULL: the
         * host's only. Returns how many were stored (<= max); they stay valid
         * until the next call. */
        size_t (*debug_trees)(void *userdata, int32_t pid, DebugFileTree *trees, size_t max);
        void *debug_trees_userdata;
        /* JIT files, sorted by pid: user addresses outside every mapped file
         * are named from their process's (perf map first, then jitdumps). */
        const SymbolizeJitSource *jit_sources;
        size_t n_jit_sources;
        /* called for every address named from a JIT file (JITMAP frames) */
        void (*jit_named)(void *userdata, int32_t pid, uint64_t address, const char *name);
        void *jit_userdata;
        /* called as work progresses (done <= total, both in addresses) */
        void (*progress)(uint64_t done, uint64_t total, void *userdata);
        void *userdata;
        /* called often between pieces of work, so a caller running this on
         * a fiber can let its event loop run (fiber.h); NULL: none */
        void (*yield)(void *yield_userdata);
        void *yield_userdata;
        /* NULL: never cut short. Else read as the work goes on (the
         * service stopping changes it from its event loop). */
        const struct SymbolizeCut *cut;
} SymbolizeOptions;

typedef struct SymbolizeStats {
        uint64_t addresses;   /* distinct addresses looked at */
        uint64_t resolved;    /* got a name */
        uint64_t unresolved;  /* marked "[unresolved: …]" */
        uint64_t files;       /* distinct files sent to the helper */
        uint64_t debug_files; /* separate debug files used */
        uint64_t helper_failures; /* files (and JIT processes) the helper failed on, or could not start for */
        uint64_t user_addresses;  /* distinct user-space addresses looked at */
        uint64_t user_resolved;   /* ... of them named */
        uint64_t jit_named;   /* named from a perf map or jitdump */
        uint64_t helper_ms;   /* the helper's time answering (HelperClientConfig.time_budget_ms) */
        bool helper_budget_spent;
        uint64_t cut_short; /* addresses left unnamed because the work was cut short */
} SymbolizeStats;

/* Symbolizes `addrs` against `maps` and adds ranges, unresolved ranges and
 * mapping provenance to `b`. Never fails because of a file or the helper
 * (those become unresolved addresses); returns < 0 only for out of memory
 * or when the builder refuses data. */
int symbolize_addresses(const SymbolizeOptions *o, const SymbolizeMapping *maps, size_t n_maps,
                        const SymbolizeAddress *addrs, size_t n_addrs, SymbolTableBuilder *b,
                        SymbolizeStats *stats);
