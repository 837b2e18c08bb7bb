/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-sources.h: the system counters a recording can sample (CPU,
 * memory, disk, network, cpufreq, energy, battery), each read from /proc or
 * /sys. Internal to counters.c; one CounterSource per enabled group. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"

#define COUNTER_SOURCE_MAX_COUNTERS 160 /* per source: e.g. 64 CPUs + combined */

typedef struct CounterSource CounterSource;

typedef struct CounterSourceOps {
        const char *name;           /* as the `counters` option spells it */
        const char *description;
        /* What the source reads is root's only: it is recorded for root and
         * polkit's org.periscope.profile-system alone (authorization.h). */
        bool root_only;
        /* Fills defs (ids left 0) and private state; -ENOENT when the
         * machine has nothing for this source. */
        int (*open)(CounterSource *s);
        /* Reads the current values into s->values (same order as defs).
         * dt_nsec is the time since the previous read (0 on the first,
         * when rates are not known yet: return 0 to write nothing). */
        int (*sample)(CounterSource *s, int64_t dt_nsec);
        void (*close)(CounterSource *s);
} CounterSourceOps;

struct CounterSource {
        const CounterSourceOps *ops;
        size_t n;
        CaptureCounterDef defs[COUNTER_SOURCE_MAX_COUNTERS];
        CaptureCounterValue values[COUNTER_SOURCE_MAX_COUNTERS];
        void *state;
};

/* Every source, in the order they are listed and sampled. */
extern const CounterSourceOps *const counter_source_table[];
extern const size_t counter_source_table_size;

/* The source named name, or NULL. */
const CounterSourceOps *counter_source_lookup(const char *name);

/* Adds a counter definition to s; returns its index or -ENOSPC. */
int counter_source_define(CounterSource *s, const char *category, const char *name, const char *description,
                          int type);
