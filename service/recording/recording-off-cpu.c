/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-off-cpu.c: the part of option `off-cpu` (docs/off-cpu.md): a
 * context-switches event beside each sampling one, started once the
 * snapshot is written, kept bounded by its governor after every drain,
 * the waits still open at the end closed, and its statistics (in
 * periscope.stats, and per thread in periscope.offcpu.stats frames). The
 * intervals themselves are written by the pump's sink. */
#include "recording-private.h"

#include <stdio.h>
#include <string.h>

#include "basic.h"

typedef struct OffCpu {
        OffCpuGovernor governor; /* pauses its events under a switch storm */
        bool switches_paused;    /* at the end: the waits still open are of unknown length */
} OffCpu;

static int off_cpu_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        if (!rec->options.off_cpu)
                return 0;
        /* its samples told apart by their id */
        cfg->off_cpu = true;
        cfg->sample_type |= PERF_SAMPLE_IDENTIFIER;
        /* a tick of switch records (OFF_CPU_BUDGET_RECORDS_PER_S, and more
         * before the governor looks) fits a ring */
        if (cfg->ring_pages < 512)
                cfg->ring_pages = 512;
        return 1;
}

/* The events were armed paused (recording_arm_perf()): the switch
 * records start now, the stacks when the governor sees no storm. */
static int off_cpu_begin(void *part, Recording *rec, const char **ret_name, char **ret_why) {
        OffCpu *oc = part;
        int r = perf_events_pause_switches(rec->perf, PERF_EVENTS_SWITCH_RECORDS, false);
        if (r < 0)
                return recording_perf_error(rec, ret_name, ret_why, r, "the off-CPU events");
        uint64_t now = (uint64_t) now_monotonic_ns();
        sample_pump_off_cpu_resumed(rec->pump, now);
        off_cpu_governor_start(&oc->governor, rec->options.system, now);
        return 0;
}

static void off_cpu_drain(void *part, Recording *rec, bool last) {
        OffCpu *oc = part;
        if (!rec->perf || last || rec->error)
                return;
        int r = off_cpu_governor_check(&oc->governor, rec->perf, rec->pump, rec->options.frequency,
                                       (uint64_t) now_monotonic_ns());
        if (r < 0)
                recording_fail(rec, r, "pausing the off-CPU events failed: %m");
}

static void off_cpu_stop(void *part, Recording *rec) {
        OffCpu *oc = part;
        oc->switches_paused = oc->governor.records.paused;
        off_cpu_governor_end(&oc->governor, (uint64_t) rec->sampling_end_time);
}

static void off_cpu_drained(void *part, Recording *rec) {
        OffCpu *oc = part;
        if (!rec->pump || oc->switches_paused || rec->error)
                return;
        int r = sample_pump_end_off_cpu(rec->pump, (uint64_t) rec->sampling_end_time);
        if (r < 0)
                recording_fail(rec, r, "writing the waits still open at the end failed: %m");
}

/* What was written, counted only, and how switches were sampled. */
static void off_cpu_write_stats(void *part, Recording *rec, CaptureStatsBuffer *out) {
        OffCpu *oc = part;
        const OffCpuTracker *t = rec->pump ? sample_pump_get_off_cpu(rec->pump) : NULL;
        const OffCpuGovernor *g = &oc->governor;
        if (!t)
                return;
        const struct {
                CaptureStat key;
                uint64_t value;
        } values[] = {
                { CAPTURE_STAT_OFF_CPU_MIN_NS, t->min_ns },
                { CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLE_HZ, rec->options.frequency },
                { CAPTURE_STAT_OFF_CPU_BLOCKED, t->total.blocked },
                { CAPTURE_STAT_OFF_CPU_BLOCKED_NS, t->total.blocked_ns },
                { CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT, t->total.blocked_short },
                { CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT_NS, t->total.blocked_short_ns },
                { CAPTURE_STAT_OFF_CPU_RUNNABLE, t->total.runnable },
                { CAPTURE_STAT_OFF_CPU_RUNNABLE_NS, t->total.runnable_ns },
                { CAPTURE_STAT_OFF_CPU_STACKS, t->total.stacks },
                { CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLES, t->switch_samples },
                { CAPTURE_STAT_OFF_CPU_HELD_DROPPED, t->held_dropped },
                { CAPTURE_STAT_OFF_CPU_UNPAIRED, t->unpaired },
                { CAPTURE_STAT_OFF_CPU_SPANNED_PAUSE, t->spanned_pause },
                { CAPTURE_STAT_OFF_CPU_IN_PROGRESS, t->in_progress },
                { CAPTURE_STAT_OFF_CPU_PAUSES, g->records.pauses },
                { CAPTURE_STAT_OFF_CPU_PAUSED_NS, g->records.paused_ns },
                { CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_RECORDS_PER_S, g->records.peak_per_s },
                { CAPTURE_STAT_OFF_CPU_STACK_PAUSES, g->stacks.pauses },
                { CAPTURE_STAT_OFF_CPU_STACKS_PAUSED_NS, g->stacks.paused_ns },
                { CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_SAMPLES_PER_S, g->stacks.peak_per_s },
                { CAPTURE_STAT_OFF_CPU_MAX_STACK_PERIOD, g->max_stack_period },
        };
        (void) capture_stats_add_bool(out, CAPTURE_STAT_OFF_CPU, true);
        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                (void) capture_stats_add_u64(out, values[i].key, values[i].value);
}

/* Per thread, what it did off the CPU (counted, short waits included):
 * `periscope.offcpu.stats` frames of one line per thread. */
static int off_cpu_write_threads(Recording *rec, const OffCpuTracker *oc, int64_t now) {
        char buf[16384];
        size_t len = 0;
        for (size_t i = 0; i <= oc->allocated; i++) {
                const OffCpuThread *th = i < oc->allocated ? &oc->threads[i] : NULL;
                char line[320];
                int l = 0;
                if (th && th->tid != 0)
                        l = snprintf(line, sizeof(line),
                                     "thread=%u pid=%u blocked=%llu blocked_ns=%llu blocked_short=%llu "
                                     "blocked_short_ns=%llu runnable=%llu runnable_ns=%llu stacks=%llu\n",
                                     th->tid, th->pid, (unsigned long long) th->counts.blocked,
                                     (unsigned long long) th->counts.blocked_ns,
                                     (unsigned long long) th->counts.blocked_short,
                                     (unsigned long long) th->counts.blocked_short_ns,
                                     (unsigned long long) th->counts.runnable,
                                     (unsigned long long) th->counts.runnable_ns,
                                     (unsigned long long) th->counts.stacks);
                if (l < 0 || (size_t) l >= sizeof(line))
                        l = 0;
                if (len > 0 && (!th || len + (size_t) l > sizeof(buf))) {
                        int r = capture_writer_add_metadata(rec->writer, now, -1, -1, CAPTURE_OFF_CPU_STATS_ID, buf,
                                                            len);
                        if (r < 0)
                                return r;
                        len = 0;
                }
                memcpy(buf + len, line, (size_t) l);
                len += (size_t) l;
        }
        return 0;
}

static void off_cpu_write_stats_frames(void *part, Recording *rec, int64_t now) {
        const OffCpuTracker *t = rec->pump ? sample_pump_get_off_cpu(rec->pump) : NULL;
        int r = t ? off_cpu_write_threads(rec, t, now) : 0;
        if (r < 0)
                recording_fail(rec, r, "writing the off-CPU statistics failed: %m");
}

static void off_cpu_get_stats(const void *part, const Recording *rec, RecordingStats *ret) {
        const OffCpu *oc = part;
        const OffCpuTracker *t = rec->pump ? sample_pump_get_off_cpu(rec->pump) : NULL;
        if (!t)
                return;
        ret->off_cpu = true;
        ret->off_cpu_waits = t->total.blocked;
        ret->off_cpu_blocked_ns = t->total.blocked_ns;
        ret->off_cpu_stacks = t->total.stacks;
        ret->off_cpu_short = t->total.blocked_short;
        ret->off_cpu_paused_ns = oc->governor.records.paused_ns;
        ret->off_cpu_stacks_paused_ns = oc->governor.stacks.paused_ns;
}

const RecordingPartVTable recording_part_off_cpu = {
        .name = "off-cpu",
        .size = sizeof(OffCpu),
        .start = off_cpu_start,
        .begin = off_cpu_begin,
        .drain = off_cpu_drain,
        .stop = off_cpu_stop,
        .drained = off_cpu_drained,
        .write_stats = off_cpu_write_stats,
        .write_stats_frames = off_cpu_write_stats_frames,
        .get_stats = off_cpu_get_stats,
};
