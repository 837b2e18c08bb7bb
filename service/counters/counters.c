/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counters.c: the sampling timer and the CTRDEF/CTRSET writing for the
 * system counter sources of counter-sources.c. */
#include "counters.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counter-sources.h"
#include "basic.h"

struct Counters {
        sd_event_source *timer;
        CaptureWriter *writer;
        uint64_t interval_usec;
        int64_t last_sample;          /* CLOCK_MONOTONIC ns */
        CounterSource *sources;
        size_t n_sources;
        unsigned n_missing;
        int write_error;
        CaptureCounterSetValue values[COUNTER_SOURCE_MAX_COUNTERS * 7];
};

static const char *const known[] = { "cpu", "memory", "disk", "net", "cpufreq", "energy", "battery", NULL };
static const char *const defaults[] = { "cpu", "memory", NULL };

const char *const *counters_known_sources(void) {
        return known;
}

const char *const *counters_default_sources(void) {
        return defaults;
}

bool counters_source_available(const char *name) {
        const CounterSourceOps *ops = counter_source_lookup(name);
        if (!ops)
                return false;
        CounterSource *s = calloc(1, sizeof(*s));
        if (!s)
                return false;
        s->ops = ops;
        bool ok = ops->open(s) >= 0 && s->n > 0;
        if (ops->close)
                ops->close(s);
        free(s);
        return ok;
}

const char *counters_root_only_source(char *const *sources) {
        for (size_t i = 0; sources && sources[i]; i++) {
                const CounterSourceOps *ops = counter_source_lookup(sources[i]);
                if (ops && ops->root_only)
                        return ops->name;
        }
        return NULL;
}

int counters_validate(char *const *sources, uint32_t interval_ms, char **ret_why) {
        if (interval_ms != 0 && (interval_ms < COUNTERS_MIN_INTERVAL_MS || interval_ms > COUNTERS_MAX_INTERVAL_MS))
                return why_setf(ret_why, -EINVAL, "counter-interval-ms must be between %d and %d, not %u",
                                COUNTERS_MIN_INTERVAL_MS, COUNTERS_MAX_INTERVAL_MS, interval_ms);
        for (size_t i = 0; sources && sources[i]; i++)
                if (!counter_source_lookup(sources[i]))
                        return why_setf(
                                ret_why, -EINVAL,
                                "unknown counter source '%s': use cpu, memory, disk, net, cpufreq, energy or battery",
                                sources[i]);
        return 0;
}

static void note(Counters *c, int r) {
        if (r < 0 && c->write_error == 0)
                c->write_error = r;
}

int counters_sample(Counters *c) {
        int64_t now = now_monotonic_ns();
        int64_t dt = c->last_sample ? now - c->last_sample : 0;
        c->last_sample = now;
        size_t n = 0;
        for (size_t i = 0; i < c->n_sources; i++) {
                CounterSource *s = &c->sources[i];
                if (s->ops->sample(s, dt) <= 0)
                        continue; /* no value yet (rates need two reads) or a read error */
                for (size_t j = 0; j < s->n; j++) {
                        c->values[n].id = s->defs[j].id;
                        c->values[n].value = s->values[j];
                        n++;
                }
        }
        if (n > 0)
                note(c, capture_writer_add_counter_values(c->writer, now, -1, -1, c->values, n));
        return c->write_error;
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        Counters *c = userdata;
        (void) counters_sample(c);
        uint64_t next = usec + c->interval_usec;
        uint64_t now;
        if (sd_event_now(sd_event_source_get_event(source), CLOCK_MONOTONIC, &now) >= 0 && next <= now)
                next = now + c->interval_usec; /* fell behind: do not fire in a burst */
        int r = sd_event_source_set_time(source, next);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

int counters_new(sd_event *event, CaptureWriter *writer, CounterIdAllocator *ids, char *const *sources,
                 uint32_t interval_ms, Counters **ret, char **ret_why) {
        int r = counters_validate(sources, interval_ms, ret_why);
        if (r < 0)
                return r;
        if (!sources)
                sources = (char *const *) defaults;
        if (interval_ms == 0)
                interval_ms = COUNTERS_DEFAULT_INTERVAL_MS;

        _cleanup_(counters_freep) Counters *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->writer = writer;
        c->interval_usec = (uint64_t) interval_ms * 1000;
        size_t n_names = 0;
        while (sources[n_names])
                n_names++;
        c->sources = calloc(n_names ? n_names : 1, sizeof(CounterSource));
        if (!c->sources)
                return -ENOMEM;

        int64_t now = now_monotonic_ns();
        for (size_t i = 0; i < n_names; i++) {
                const CounterSourceOps *ops = counter_source_lookup(sources[i]);
                bool dup = false;
                for (size_t j = 0; j < c->n_sources; j++)
                        dup = dup || c->sources[j].ops == ops;
                if (dup)
                        continue;
                CounterSource *s = &c->sources[c->n_sources];
                memset(s, 0, sizeof(*s));
                s->ops = ops;
                r = ops->open(s);
                if (r < 0 || s->n == 0) {
                        if (ops->close)
                                ops->close(s);
                        c->n_missing++;
                        char msg[160];
                        snprintf(msg, sizeof(msg), "counter source '%s' left out: this machine has no %s", ops->name,
                                 ops->description);
                        note(c, capture_writer_add_log(writer, now, -1, -1, 64 /* G_LOG_LEVEL_INFO */, "periscope", msg));
                        continue;
                }
                uint32_t first = counter_ids_allocate(ids, (uint32_t) s->n);
                if (first == 0) {
                        if (ops->close)
                                ops->close(s);
                        return -ENOSPC;
                }
                for (size_t j = 0; j < s->n; j++)
                        s->defs[j].id = first + (uint32_t) j;
                note(c, capture_writer_add_counter_defs(writer, now, -1, -1, s->defs, s->n));
                c->n_sources++;
        }
        if (c->write_error < 0)
                return c->write_error;

        /* The first read sets the baseline of the rates. */
        (void) counters_sample(c);
        r = sd_event_add_time_relative(event, &c->timer, CLOCK_MONOTONIC, c->interval_usec, 1000, on_timer, c);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

Counters *counters_free(Counters *c) {
        if (!c)
                return NULL;
        sd_event_source_disable_unref(c->timer);
        for (size_t i = 0; i < c->n_sources; i++)
                if (c->sources[i].ops->close)
                        c->sources[i].ops->close(&c->sources[i]);
        free(c->sources);
        free(c);
        return NULL;
}

unsigned counters_get_n_counters(const Counters *c) {
        unsigned n = 0;
        for (size_t i = 0; i < c->n_sources; i++)
                n += (unsigned) c->sources[i].n;
        return n;
}

unsigned counters_get_n_missing(const Counters *c) {
        return c->n_missing;
}
