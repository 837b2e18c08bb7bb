/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counters.h: system counters of one recording (option `counters`, default
 * cpu and memory; option `counter-interval-ms`, default 250), sampled on an
 * sd-event timer and written as CTRDEF/CTRSET frames. A source the machine
 * does not have (no cpufreq, no RAPL, no battery) is left out and said so in
 * the capture as a LOG frame; counters_source_available() feeds the
 * Capabilities property. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "capture.h"
#include "basic.h"
#include "counter-ids.h"

#define COUNTERS_DEFAULT_INTERVAL_MS 250
#define COUNTERS_MIN_INTERVAL_MS 10
#define COUNTERS_MAX_INTERVAL_MS 60000

typedef struct Counters Counters;

/* The names the `counters` option accepts, NULL-terminated:
 * cpu, memory, disk, net, cpufreq, energy, battery. */
const char *const *counters_known_sources(void);

/* The sources used when the option is absent: cpu, memory. */
const char *const *counters_default_sources(void);

/* True if this machine has something to read for source name (for
 * Capabilities; an unknown name is false). */
bool counters_source_available(const char *name);

/* The first of sources whose files the kernel gives root alone (energy:
 * RAPL, CVE-2020-8694), or NULL; the defaults have none. Such a source is
 * recorded only for root and polkit's org.periscope.profile-system
 * (service/bus/authorization.c; the sysprofd drop-in's RAPL profiler too). */
const char *counters_root_only_source(char *const *sources);

/* Checks the option values: every name known, interval within bounds.
 * Returns 0 or -EINVAL with a malloc'ed message in *ret_why (may be NULL)
 * saying what to pass. */
int counters_validate(char *const *sources, uint32_t interval_ms, char **ret_why);

/* Starts sampling sources (NULL: the defaults) every interval_ms (0: the
 * default) into writer, with ids from ids; definitions are written at once.
 * Both writer and ids must outlive the result. */
int counters_new(sd_event *event, CaptureWriter *writer, CounterIdAllocator *ids, char *const *sources,
                 uint32_t interval_ms, Counters **ret, char **ret_why);

/* Takes one sample now (e.g. on Stop, so the last interval is not lost). */
int counters_sample(Counters *c);

/* Stops the timer and frees everything. NULL is a no-op. */
Counters *counters_free(Counters *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Counters *, counters_free);

/* Counters being written, and sources left out because the machine lacks them. */
unsigned counters_get_n_counters(const Counters *c);
unsigned counters_get_n_missing(const Counters *c);
