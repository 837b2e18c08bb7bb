/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-off-cpu-tracker.c: the off-CPU tracker (service/pump/off-cpu.h)
 * with hand-made switch records and samples: a blocked wait keeps the
 * stack taken at its switch-out, a shorter one is counted and its stack
 * dropped, a preemption is runnable without a stack, a stack from another
 * switch-out is not used, a wait across a pause is dropped, exiting
 * threads ((u32) -1) and idle tasks are ignored, a cut stack copy parses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "pump.h"
#include "test-check.h"

#define MIN_NS 100000u

static const PerfRecordLayout layout = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_STACK_USER };

/* A sample record of tid at time with a 64-byte stack copy, 16 valid. */
static size_t make_sample(uint64_t *rec, uint32_t tid, uint64_t time) {
        size_t n = 0;
        rec[n++] = 0; /* header */
        rec[n++] = (uint64_t) tid << 32 | tid;
        rec[n++] = time;
        rec[n++] = 64; /* stack size */
        for (int i = 0; i < 8; i++)
                rec[n++] = 0x1000 + (uint64_t) i;
        rec[n++] = 16; /* dyn size */
        struct perf_event_header *h = (void *) rec;
        h->type = PERF_RECORD_SAMPLE;
        h->size = (uint16_t) (n * 8);
        return n * 8;
}

static void hold(OffCpuTracker *t, uint32_t tid, uint64_t time) {
        uint64_t rec[32];
        size_t size = make_sample(rec, tid, time);
        PerfSample s;
        CHECK(perf_record_parse_sample(&layout, (void *) rec, size, &s) == 0);
        CHECK(off_cpu_tracker_hold(t, (void *) rec, size, &s) == 0);
}

/* One switch record; returns the tracker's answer. */
static int sw(OffCpuTracker *t, uint32_t tid, uint64_t time, bool out, bool preempt, OffCpuInterval *iv,
              const struct perf_event_header **held, size_t *held_size) {
        PerfSwitch s = { .out = out, .preempt = preempt, .id = { .pid = tid, .tid = tid, .time = time } };
        return off_cpu_tracker_switch(t, &s, iv, held, held_size);
}

int main(void) {
        OffCpuTracker t = { .min_ns = MIN_NS, .layout = layout };
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;

        /* blocked 1 s: its stack, cut to the valid 16 bytes, parses again */
        hold(&t, 10, 1000);
        CHECK(sw(&t, 10, 1100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 1000001100, false, false, &iv, &held, &held_size) == 1);
        CHECK(iv.state == PERF_OFF_CPU_BLOCKED && iv.duration_ns == 1000000000 && iv.tid == 10 && iv.time == 1100);
        CHECK(held != NULL);
        PerfSample s;
        CHECK(perf_record_parse_sample(&layout, held, held_size, &s) == 0);
        CHECK(s.tid == 10 && s.time == 1000 && s.stack_size == 16 && s.stack_dyn_size == 16);
        CHECK(memcmp(s.stack, "\x00\x10\0\0\0\0\0\0", 8) == 0);

        /* blocked 50 us: counted, no interval */
        hold(&t, 10, 2000000000);
        CHECK(sw(&t, 10, 2000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 2000050100, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.total.blocked_short == 1 && t.total.blocked_short_ns == 50000);

        /* preempted 1 ms: runnable, no stack */
        hold(&t, 10, 3000000000);
        CHECK(sw(&t, 10, 3000000100, true, true, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 3001000100, false, false, &iv, &held, &held_size) == 1);
        CHECK(iv.state == PERF_OFF_CPU_RUNNABLE && held == NULL && iv.duration_ns == 1000000);

        /* a stack from long before this switch-out is not its stack */
        hold(&t, 10, 4000000000);
        CHECK(sw(&t, 10, 5000000000, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 6000000000, false, false, &iv, &held, &held_size) == 1);
        CHECK(held == NULL && iv.duration_ns == 1000000000);

        /* out before a pause, in after it: dropped */
        CHECK(sw(&t, 11, 7000000000, true, false, &iv, &held, &held_size) == 0);
        t.resumed_at = 7500000000;
        CHECK(sw(&t, 11, 8000000000, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.spanned_pause == 1);

        /* an exiting thread's (u32) -1 and an idle task's 0: ignored */
        hold(&t, UINT32_MAX, 9000000000);
        CHECK(sw(&t, UINT32_MAX, 9000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 0, 9000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 0, 9900000100, false, false, &iv, &held, &held_size) == 0);

        /* a switch-in without its switch-out: unpaired */
        uint64_t unpaired = t.unpaired;
        CHECK(sw(&t, 12, 9900000100, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.unpaired == unpaired + 1);
        CHECK(t.total.blocked == 2 && t.total.stacks == 1 && t.total.runnable == 1);
        off_cpu_tracker_done(&t);
        return 0;
}
