/* record-options.h: the a{sv} options of Record(), decoded and checked.
 * Each option is one row of the table in record-options.c (key, D-Bus
 * signature, parser); other components add theirs there and a field here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#define RECORD_OPTIONS_MAX_PIDS 1024
#define RECORD_OPTIONS_MAX_DURATION_MS (24u * 3600u * 1000u)
#define RECORD_OPTIONS_DEFAULT_FREQUENCY 999u
#define RECORD_OPTIONS_DEFAULT_STACK_SIZE 16384u  /* bytes of user stack copied per sample (dwarf) */
#define RECORD_OPTIONS_MAX_STACK_SIZE 65528u      /* perf's limit: a u16 record size, 8-aligned */

typedef enum RecordUnwind {
        RECORD_UNWIND_FP,          /* frame pointers: the kernel's callchain */
        RECORD_UNWIND_DWARF,       /* copied stacks and CFI tables (the unwind issue) */
        RECORD_UNWIND_AUTO,
} RecordUnwind;

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
        /* Options of other components go here, with a row in the table. */
} RecordOptions;

/* Reads the a{sv} at the message's read position into *ret (defaults for
 * what is absent) and checks every value; "container" prefers caller_uid's
 * own containers when others match too. On failure fills error with an
 * org.periscope.Error.* naming the option and why, and returns negative. */
int record_options_parse(sd_bus_message *m, uid_t caller_uid, RecordOptions *ret, sd_bus_error *error);

/* Frees what parse allocated. */
void record_options_done(RecordOptions *o);

/* The list of option keys, comma-separated (for messages and docs). */
const char *record_options_known_keys(void);

/* Name of an unwind mode ("fp"). */
const char *record_unwind_to_string(RecordUnwind u);
