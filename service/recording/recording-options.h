/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-options.h: what a recording records and how, as Record()'s
 * a{sv} options said (decoded and checked by bus/record-options.c: each
 * option is a row of its table and a field here). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind.h"

#define RECORD_OPTIONS_MAX_PIDS 1024
#define RECORD_OPTIONS_MAX_DURATION_MS (24u * 3600u * 1000u)
#define RECORD_OPTIONS_DEFAULT_FREQUENCY 999u
#define RECORD_OPTIONS_DEFAULT_STACK_SIZE 16384u  /* bytes of user stack copied per sample (dwarf) */
#define RECORD_OPTIONS_DEFAULT_OFF_CPU_MIN_NS 100000ull /* 100 us */
#define RECORD_OPTIONS_MAX_OFF_CPU_MIN_NS (3600ull * 1000000000ull)
#define RECORD_OPTIONS_MAX_STACK_SIZE 65528u      /* perf's limit: a u16 record size, 8-aligned */

typedef struct RecordOptions {
        int32_t *pids;             /* "pids" ai, then the processes of "container" */
        size_t n_pids;
        size_t n_given_pids;       /* how many of pids were given as "pids" */
        bool system;               /* "system" b */
        int32_t command_pid;       /* "command-pid" i; 0 = none */
        uint32_t frequency;        /* "frequency" u, Hz */
        int kernel;                /* "kernel" b; -1 = not given (kernel stacks if allowed) */
        uint32_t duration_ms;      /* "duration-ms" u; 0 = until Stop */
        RecordUnwind unwind;       /* "unwind" s */
        uint32_t stack_size;       /* "stack-size" u: bytes copied per sample for dwarf */
        bool symbolize;            /* "symbolize" b */
        bool debuginfod;           /* "debuginfod" b: fetch missing debug files from $DEBUGINFOD_URLS */
        char *container;           /* "container" s: Podman name/id or Flatpak app id; its
                                    * processes are added to pids (forks followed by inherit,
                                    * processes joining later by container-follow.h) */
        bool container_waiting;    /* "container" names one that does not run yet: no pids,
                                    * its processes are added when they start */
        char **counters;           /* "counters" as (counters.h); NULL = the defaults, cpu and memory */
        uint32_t counter_interval_ms; /* "counter-interval-ms" u; 0 = 250 */
        bool off_cpu;                 /* "off-cpu" b: off-CPU intervals and their stacks (docs/off-cpu.md) */
        uint64_t off_cpu_min_ns;      /* "off-cpu-min-ns" t: shorter blocked intervals are counted only */
        bool python_frames;           /* "python-frames" b: CPython threads' frames in their samples (docs/python.md) */
        /* Options of other components go here, with a row in the table. */
} RecordOptions;

/* Frees what the options own and leaves them empty. */
void record_options_done(RecordOptions *o);
