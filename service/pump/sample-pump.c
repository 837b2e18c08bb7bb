/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-pump.c: perf rings -> spill -> stacks -> a sink (see sample-pump.h). */
#include "sample-pump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "basic.h"
#include "capture.h"

struct SamplePump {
        SamplePumpSetup setup;
        SamplePumpSink sink;
        SampleUnwinder unwinder; /* the queue of samples waiting for a table */
        PerfSpill spill;         /* records moved out of the rings while the daemon waited */
        sd_event_source *slice;  /* defer, idle priority: the next slice */
        bool draining;           /* the rings' readers or the spill are in use */
        bool replaying;          /* reading the spill right now */
        bool sliced;             /* the last drain left work for a slice */
        bool wake_missed;        /* tables came during a drain */
        uint64_t lost_samples, bad_records, slices;
        size_t max_addrs;
        OffCpuTracker off_cpu;
        uint64_t *switch_ids; /* the off-CPU events' ids, copied at each drain */
        size_t n_switch_ids;
        uint64_t addrs[CAPTURE_SAMPLE_MAX_ADDRS];
};

static bool pump_is_switch_id(const SamplePump *p, uint64_t id) {
        for (size_t i = 0; i < p->n_switch_ids; i++)
                if (p->switch_ids[i] == id)
                        return true;
        return false;
}

/* The ids of the off-CPU events opened so far (processes join later). */
static int pump_sync_switch_ids(SamplePump *p, const PerfEvents *perf) {
        size_t n;
        const uint64_t *ids = perf_events_get_switch_ids(perf, &n);
        if (n == p->n_switch_ids)
                return 0;
        uint64_t *copy = reallocarray(p->switch_ids, n ? n : 1, sizeof(uint64_t));
        if (!copy)
                return -ENOMEM;
        if (n)
                memcpy(copy, ids, n * sizeof(uint64_t));
        p->switch_ids = copy;
        p->n_switch_ids = n;
        return 0;
}

static int pump_emit(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        SamplePump *p = userdata;
        return p->sink.sample(s, addrs, n, p->setup.userdata);
}

/* Builds a parsed sample's stack and hands it on (or queues it). */
static int pump_build_sample(SamplePump *p, PerfSample *sp) {
        PerfSample s = *sp;
        bool dwarf = p->setup.unwind != RECORD_UNWIND_FP && p->setup.tables;
        if (p->sink.filter && !p->sink.filter(&s, &dwarf, p->setup.userdata))
                return 0;
        bool deferred = false;
        /* fp waits in the unwinder's queue only with .tables below */
        SampleStackContext ctx = {
                .kernel = p->setup.kernel,
                .unwind = dwarf ? p->setup.unwind : RECORD_UNWIND_FP,
                .maps = p->setup.maps,
                .unwinder = &p->unwinder,
                .deferred = &deferred,
                /* fp on aarch64: the registers the fix-up reads are there */
                .tables =
                        !dwarf && p->setup.layout.sample_regs_user == SAMPLE_UNWIND_REGS_MASK ? p->setup.tables : NULL,
                .owner = p->setup.owner,
        };
        size_t n = sample_stack_build(&ctx, &s, p->addrs, p->max_addrs);
        if (n == 0)
                return 0; /* nothing to keep, or queued until its table came */
        return pump_emit(&s, p->addrs, n, p);
}

static int pump_handle_sample(SamplePump *p, const struct perf_event_header *h, size_t size) {
        PerfSample s;
        if (perf_record_parse_sample(&p->setup.layout, h, size, &s) < 0) {
                p->bad_records++;
                return 0;
        }
        /* taken at a switch-out: held until the switch-in says whether
         * the thread blocked long enough */
        if (p->setup.off_cpu && pump_is_switch_id(p, s.id))
                return off_cpu_tracker_hold(&p->off_cpu, h, size, &s);
        return pump_build_sample(p, &s);
}

static int pump_emit_interval(SamplePump *p, const OffCpuInterval *iv, const struct perf_event_header *held,
                              size_t held_size);

static int pump_handle_switch(SamplePump *p, const struct perf_event_header *h, size_t size) {
        PerfSwitch sw;
        if (!p->setup.off_cpu)
                return 0;
        if (perf_record_parse_switch(&p->setup.layout, h, size, &sw) < 0) {
                p->bad_records++;
                return 0;
        }
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        int r = off_cpu_tracker_switch(&p->off_cpu, &sw, &iv, &held, &held_size);
        if (r <= 0)
                return r;
        return pump_emit_interval(p, &iv, held, held_size);
}

/* An interval the tracker ended: its held stack as a sample, or the
 * interval alone. */
static int pump_emit_interval(SamplePump *p, const OffCpuInterval *iv, const struct perf_event_header *held,
                              size_t held_size) {
        if (held) {
                PerfSample s;
                /* the held copy was a valid record; cut, it must parse again */
                if (perf_record_parse_sample(&p->setup.layout, held, held_size, &s) == 0 && s.tid == iv->tid) {
                        s.off_cpu_ns = iv->duration_ns;
                        s.off_cpu_state = iv->state;
                        return pump_build_sample(p, &s);
                }
                p->bad_records++;
        }
        return p->sink.off_cpu ? p->sink.off_cpu(iv, p->setup.userdata) : 0;
}

int sample_pump_end_off_cpu(SamplePump *p, uint64_t end_time) {
        if (!p->setup.off_cpu)
                return 0;
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size, cursor = 0;
        while (off_cpu_tracker_end_next(&p->off_cpu, end_time, &cursor, &iv, &held, &held_size) > 0) {
                int r = pump_emit_interval(p, &iv, held, held_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int pump_handle_mmap2(SamplePump *p, const struct perf_event_header *h, size_t size) {
        PerfMmap2 m;
        if (perf_record_parse_mmap2(&p->setup.layout, h, size, &m) < 0) {
                p->bad_records++;
                return 0;
        }
        int r = p->sink.mmap2(&m, p->setup.userdata);
        if (r < 0)
                return r;
        /* its unwind table compiles before its first sample needs it */
        if (p->setup.prepare_tables && p->setup.tables && (m.prot & PROT_EXEC) && m.len > 0)
                sample_unwinder_prepare(&p->unwinder, p->setup.maps, (int32_t) m.pid, m.addr);
        return 0;
}

static int pump_handle_comm(SamplePump *p, const struct perf_event_header *h, size_t size) {
        PerfComm c;
        if (perf_record_parse_comm(&p->setup.layout, h, size, &c) < 0) {
                p->bad_records++;
                return 0;
        }
        return p->sink.comm(&c, p->setup.userdata);
}

static int pump_handle_task(SamplePump *p, const struct perf_event_header *h, size_t size) {
        PerfTask t;
        if (perf_record_parse_task(&p->setup.layout, h, size, &t) < 0) {
                p->bad_records++;
                return 0;
        }
        if (p->setup.off_cpu && h->type == PERF_RECORD_EXIT)
                off_cpu_tracker_exit(&p->off_cpu, t.tid);
        return p->sink.task(&t, h->type == PERF_RECORD_FORK, p->setup.userdata);
}

int sample_pump_record(const struct perf_event_header *h, size_t size, void *userdata) {
        SamplePump *p = userdata;
        uint64_t lost;

        switch (h->type) {
        case PERF_RECORD_SAMPLE:
                /* The unwinder's queue is full (tables compile slower than
                 * samples come): the sample waits in the spill, behind the
                 * ones already there. Never compile here. */
                if (!p->replaying && (p->spill.size > 0 || sample_unwinder_queue_full(&p->unwinder)))
                        return perf_spill_add(h, size, &p->spill);
                if (p->replaying && sample_unwinder_queue_full(&p->unwinder))
                        return -EAGAIN; /* stays in the spill */
                return pump_handle_sample(p, h, size);
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE:
                if (!p->setup.off_cpu)
                        return 0;
                /* in order with the samples: they may unwind a held one */
                if (!p->replaying && (p->spill.size > 0 || sample_unwinder_queue_full(&p->unwinder)))
                        return perf_spill_add(h, size, &p->spill);
                if (p->replaying && sample_unwinder_queue_full(&p->unwinder))
                        return -EAGAIN;
                return pump_handle_switch(p, h, size);
        case PERF_RECORD_MMAP2:
                return pump_handle_mmap2(p, h, size);
        case PERF_RECORD_COMM:
                return pump_handle_comm(p, h, size);
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
                return pump_handle_task(p, h, size);
        case PERF_RECORD_LOST:
        case PERF_RECORD_LOST_SAMPLES:
                if (perf_record_parse_lost(h, size, &lost) == 0)
                        p->lost_samples += lost;
                else
                        p->bad_records++;
                return 0;
        default:
                return 0; /* THROTTLE, ITRACE_START, ... carry nothing kept */
        }
}

/* At most max records of the spill; true when it stopped at max with
 * records left. */
static int pump_replay(SamplePump *p, size_t max, bool *ret_more) {
        p->replaying = true;
        int r = perf_spill_replay(&p->spill, max, sample_pump_record, p);
        p->replaying = false;
        if (r >= 0 && (size_t) r == max && p->spill.size > 0)
                *ret_more = true;
        return r < 0 ? r : 0;
}

/* The queued samples whose tables came; with `last` every one, and the
 * spill's replay, which stops at a full queue, again until both are empty. */
static int pump_flush(SamplePump *p, bool last, bool *ret_more) {
        for (;;) {
                if (p->unwinder.n_pending > 0) {
                        int r = sample_unwinder_flush(&p->unwinder, p->setup.maps, p->setup.kernel, p->addrs,
                                                      p->max_addrs, last, last ? SIZE_MAX : SAMPLE_UNWIND_FLUSH_BATCH,
                                                      pump_emit, p);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                *ret_more = true;
                }
                if (!last || p->spill.size == 0)
                        return 0;
                int r = pump_replay(p, SIZE_MAX, ret_more);
                if (r < 0)
                        return r;
        }
}

/* Asks the event loop for the next slice, after what is pending there now. */
static int pump_slice_later(SamplePump *p) {
        if (!p->slice)
                return 0;
        return sd_event_source_set_enabled(p->slice, SD_EVENT_ONESHOT);
}

int sample_pump_drain(SamplePump *p, PerfEvents *perf, bool last) {
        if (p->draining)
                return 0;
        bool more = false;
        int r = 0;
        p->draining = true;
        p->wake_missed = false;
        /* what waited in the spill comes first, a slice at most and as far
         * as the unwinder's queue takes it; the rings are read either way
         * (their samples join the spill while it is not empty) */
        if (p->spill.size > 0)
                r = pump_replay(p, last ? SIZE_MAX : SAMPLE_UNWIND_FLUSH_BATCH, &more);
        if (r >= 0 && perf && p->setup.off_cpu)
                r = pump_sync_switch_ids(p, perf);
        if (r >= 0 && perf) {
                r = perf_events_drain(perf, sample_pump_record, p);
                if (r > 0)
                        r = 0;
        }
        /* the spill's drops are lost samples, counted once */
        p->lost_samples += p->spill.dropped_samples;
        p->spill.dropped_samples = 0;
        /* after the drain handled every COMM/MMAP/FORK record in time */
        if (r >= 0)
                r = pump_flush(p, last, &more);
        p->draining = false;
        if (r < 0)
                return r;
        if (last)
                more = false;
        p->sliced = more;
        if (more || (p->wake_missed && p->unwinder.n_pending > 0)) {
                r = pump_slice_later(p);
                if (r < 0)
                        return r;
        }
        return more;
}

int sample_pump_spill_record(const struct perf_event_header *h, size_t size, void *userdata) {
        SamplePump *p = userdata;
        return perf_spill_add(h, size, &p->spill);
}

void sample_pump_spill_rings(SamplePump *p, PerfEvents *perf) {
        if (p->draining || !perf)
                return;
        p->draining = true;
        if (p->setup.off_cpu)
                (void) pump_sync_switch_ids(p, perf);
        (void) perf_events_drain(perf, sample_pump_spill_record, p);
        p->draining = false;
}

void sample_pump_prepare_all(SamplePump *p) {
        if (p->setup.prepare_tables && p->setup.tables)
                sample_unwinder_prepare_all(&p->unwinder, p->setup.maps);
}

const OffCpuTracker *sample_pump_get_off_cpu(const SamplePump *p) {
        return p->setup.off_cpu ? &p->off_cpu : NULL;
}

void sample_pump_off_cpu_resumed(SamplePump *p, uint64_t time) {
        p->off_cpu.resumed_at = time;
}

void sample_pump_get_stats(const SamplePump *p, SamplePumpStats *ret) {
        *ret = (SamplePumpStats){
                .lost_samples = p->lost_samples + p->spill.dropped_samples,
                .bad_records = p->bad_records,
                .spilled_records = p->spill.spilled_records,
                .slices = p->slices,
                .queued = p->unwinder.n_pending,
                .waiting = p->spill.size > 0 || p->unwinder.n_pending > 0,
                .sliced = p->sliced,
                .unwind = p->unwinder.stats,
        };
}

static void pump_wake(SamplePump *p) {
        if (p->sink.wake)
                p->sink.wake(p->setup.userdata);
}

/* The next slice of what waited (spilled or queued). */
static int pump_on_slice(sd_event_source *s, void *userdata) {
        SamplePump *p = userdata;
        p->slices++;
        if (!p->draining)
                pump_wake(p);
        return 0;
}

/* The unwind tables decided files: the samples that waited may go on. */
static void pump_on_tables_ready(void *userdata) {
        SamplePump *p = userdata;
        if (p->unwinder.n_pending == 0)
                return;
        if (p->draining)
                p->wake_missed = true; /* the drain's end asks for a slice */
        else
                pump_wake(p);
}

int sample_pump_new(const SamplePumpSetup *setup, SamplePump **ret) {
        if (!setup || !setup->sink || !setup->sink->sample || !setup->sink->mmap2 || !setup->sink->comm ||
            !setup->sink->task || !ret)
                return -EINVAL;
        SamplePump *p = calloc(1, sizeof(SamplePump));
        if (!p)
                return -ENOMEM;
        p->setup = *setup;
        p->sink = *setup->sink;
        p->setup.sink = &p->sink;
        p->max_addrs =
                setup->max_addrs && setup->max_addrs < ELEMENTSOF(p->addrs) ? setup->max_addrs : ELEMENTSOF(p->addrs);
        p->spill.layout = setup->layout;
        p->spill.max_bytes = setup->max_spill_bytes;
        p->unwinder.tables = setup->tables;
        p->unwinder.owner = setup->owner;
        p->off_cpu.min_ns = setup->off_cpu_min_ns;
        p->off_cpu.layout = setup->layout;
        int r = 0;
        if (setup->event) {
                r = sd_event_add_defer(setup->event, &p->slice, pump_on_slice, p);
                /* after everything else pending, however long the backlog */
                if (r >= 0)
                        r = sd_event_source_set_priority(p->slice, SD_EVENT_PRIORITY_IDLE);
                if (r >= 0)
                        r = sd_event_source_set_enabled(p->slice, SD_EVENT_OFF);
        }
        if (r >= 0 && setup->tables)
                r = unwind_tables_add_listener(setup->tables, pump_on_tables_ready, p);
        if (r < 0) {
                sample_pump_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

SamplePump *sample_pump_free(SamplePump *p) {
        if (!p)
                return NULL;
        unwind_tables_remove_listener(p->setup.tables, pump_on_tables_ready, p);
        sd_event_source_disable_unref(p->slice);
        sample_unwinder_done(&p->unwinder);
        perf_spill_done(&p->spill);
        off_cpu_tracker_done(&p->off_cpu);
        free(p->switch_ids);
        free(p);
        return NULL;
}
