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
static void off_cpu_write_stats(void *part, Recording *rec, RecordingStatsText *out) {
        OffCpu *oc = part;
        const OffCpuTracker *t = rec->pump ? sample_pump_get_off_cpu(rec->pump) : NULL;
        const OffCpuGovernor *g = &oc->governor;
        if (!t)
                return;
        recording_stats_printf(out,
                               "off_cpu=true\noff_cpu_min_ns=%llu\noff_cpu_switch_sample_hz=%u\n"
                               "off_cpu_blocked=%llu\noff_cpu_blocked_ns=%llu\noff_cpu_blocked_short=%llu\n"
                               "off_cpu_blocked_short_ns=%llu\noff_cpu_runnable=%llu\noff_cpu_runnable_ns=%llu\n"
                               "off_cpu_stacks=%llu\noff_cpu_switch_samples=%llu\noff_cpu_held_dropped=%llu\n"
                               "off_cpu_unpaired=%llu\noff_cpu_spanned_pause=%llu\noff_cpu_in_progress=%llu\n"
                               "off_cpu_pauses=%llu\n"
                               "off_cpu_paused_ns=%llu\noff_cpu_peak_switch_records_per_s=%llu\n"
                               "off_cpu_stack_pauses=%llu\noff_cpu_stacks_paused_ns=%llu\n"
                               "off_cpu_peak_switch_samples_per_s=%llu\noff_cpu_max_stack_period=%llu\n",
                               (unsigned long long) t->min_ns, rec->options.frequency,
                               (unsigned long long) t->total.blocked, (unsigned long long) t->total.blocked_ns,
                               (unsigned long long) t->total.blocked_short,
                               (unsigned long long) t->total.blocked_short_ns, (unsigned long long) t->total.runnable,
                               (unsigned long long) t->total.runnable_ns, (unsigned long long) t->total.stacks,
                               (unsigned long long) t->switch_samples, (unsigned long long) t->held_dropped,
                               (unsigned long long) t->unpaired, (unsigned long long) t->spanned_pause,
                               (unsigned long long) t->in_progress, (unsigned long long) g->records.pauses,
                               (unsigned long long) g->records.paused_ns, (unsigned long long) g->records.peak_per_s,
                               (unsigned long long) g->stacks.pauses, (unsigned long long) g->stacks.paused_ns,
                               (unsigned long long) g->stacks.peak_per_s, (unsigned long long) g->max_stack_period);
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
