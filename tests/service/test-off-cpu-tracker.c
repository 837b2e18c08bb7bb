/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-off-cpu-tracker.c: the off-CPU tracker (service/pump/off-cpu.h)
 * with hand-made switch records and samples: a blocked wait keeps the
 * stack taken at its switch-out, a shorter one is counted and its stack
 * dropped, a preemption is runnable without a stack, a stack from another
 * switch-out is not used, a wait across a pause is dropped, exiting
 * threads ((u32) -1) and idle tasks are ignored, a cut stack copy parses;
 * at the end of sampling the waits still open are cut there, an exited
 * thread's last switch-out is none, a tid used again is a new thread. */
#include <errno.h>
#include <stdbool.h>
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

/* A tracker of its own for each case. */
static OffCpuTracker tracker(void) {
        return (OffCpuTracker) { .min_ns = MIN_NS, .layout = layout };
}

/* blocked 1 s: its stack, cut to the valid 16 bytes, parses again */
TEST(blocked_wait_keeps_stack) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        hold(&t, 10, 1000);
        CHECK(sw(&t, 10, 1100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 1000001100, false, false, &iv, &held, &held_size) == 1);
        CHECK(iv.state == PERF_OFF_CPU_BLOCKED && iv.duration_ns == 1000000000 && iv.tid == 10 && iv.time == 1100);
        CHECK(held != NULL);
        PerfSample s;
        CHECK(held && perf_record_parse_sample(&layout, held, held_size, &s) == 0);
        CHECK(s.tid == 10 && s.time == 1000 && s.stack_size == 16 && s.stack_dyn_size == 16);
        CHECK(memcmp(s.stack, "\x00\x10\0\0\0\0\0\0", 8) == 0);
        CHECK(t.total.blocked == 1 && t.total.stacks == 1 && t.total.runnable == 0);
        off_cpu_tracker_done(&t);
}

/* blocked 50 us: counted, no interval */
TEST(short_wait_counted) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        hold(&t, 10, 2000000000);
        CHECK(sw(&t, 10, 2000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 2000050100, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.total.blocked_short == 1 && t.total.blocked_short_ns == 50000);
        CHECK(t.total.blocked == 0 && t.total.stacks == 0);
        off_cpu_tracker_done(&t);
}

/* preempted 1 ms: runnable, no stack */
TEST(preemption_runnable_without_stack) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        hold(&t, 10, 3000000000);
        CHECK(sw(&t, 10, 3000000100, true, true, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 3001000100, false, false, &iv, &held, &held_size) == 1);
        CHECK(iv.state == PERF_OFF_CPU_RUNNABLE && held == NULL && iv.duration_ns == 1000000);
        CHECK(t.total.runnable == 1 && t.total.blocked == 0 && t.total.stacks == 0);
        off_cpu_tracker_done(&t);
}

/* a stack from long before this switch-out is not its stack */
TEST(stale_stack_not_used) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        hold(&t, 10, 4000000000);
        CHECK(sw(&t, 10, 5000000000, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 10, 6000000000, false, false, &iv, &held, &held_size) == 1);
        CHECK(held == NULL && iv.duration_ns == 1000000000);
        CHECK(t.total.blocked == 1 && t.total.stacks == 0);
        off_cpu_tracker_done(&t);
}

/* out before a pause, in after it: dropped */
TEST(wait_across_pause_dropped) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        CHECK(sw(&t, 11, 7000000000, true, false, &iv, &held, &held_size) == 0);
        t.resumed_at = 7500000000;
        CHECK(sw(&t, 11, 8000000000, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.spanned_pause == 1);
        CHECK(t.total.blocked == 0 && t.total.runnable == 0);
        off_cpu_tracker_done(&t);
}

/* an exiting thread's (u32) -1 and an idle task's 0: ignored */
TEST(exiting_and_idle_ignored) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        hold(&t, UINT32_MAX, 9000000000);
        CHECK(sw(&t, UINT32_MAX, 9000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 0, 9000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 0, 9900000100, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.total.blocked == 0 && t.total.runnable == 0 && t.total.stacks == 0);
        off_cpu_tracker_done(&t);
}

/* a switch-in without its switch-out: unpaired */
TEST(unpaired_switch_in_counted) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        CHECK(sw(&t, 12, 9900000100, false, false, &iv, &held, &held_size) == 0);
        CHECK(t.unpaired == 1);
        off_cpu_tracker_done(&t);
}

/* Thread 22 goes out and in (short), exits, and its EXIT comes before its
 * last switch-out. */
static void exit_before_switch_out(OffCpuTracker *t) {
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        CHECK(sw(t, 22, 19000000000, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(t, 22, 19000001000, false, false, &iv, &held, &held_size) == 0); /* in, short */
        off_cpu_tracker_exit(t, 22);
        CHECK(sw(t, 22, 19000002000, true, false, &iv, &held, &held_size) == 0);
}

/* the end of sampling at 20 s: thread 20 blocked since 19 s (its stack
 * held), thread 21 preempted since 19.5 s, thread 22 exited (its EXIT
 * before its last switch-out), thread 23 exited (after), thread 24 out
 * after the end, thread 25 blocked 50 us (short) */
TEST(end_cuts_open_waits) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        PerfSample s;
        hold(&t, 20, 19000000000);
        CHECK(sw(&t, 20, 19000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 21, 19500000000, true, true, &iv, &held, &held_size) == 0);
        exit_before_switch_out(&t);
        CHECK(sw(&t, 23, 19100000000, true, false, &iv, &held, &held_size) == 0);
        off_cpu_tracker_exit(&t, 23);
        CHECK(sw(&t, 24, 20000000001, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 25, 19999950000, true, false, &iv, &held, &held_size) == 0);
        size_t cursor = 0;
        bool seen20 = false, seen21 = false;
        int n = 0;
        while (off_cpu_tracker_end_next(&t, 20000000000, &cursor, &iv, &held, &held_size) > 0) {
                n++;
                CHECK(iv.in_progress);
                if (iv.tid == 20) {
                        seen20 = true;
                        CHECK(iv.state == PERF_OFF_CPU_BLOCKED && iv.duration_ns == 999999900 && held != NULL);
                        CHECK(held && perf_record_parse_sample(&layout, held, held_size, &s) == 0 && s.tid == 20);
                } else if (iv.tid == 21) {
                        seen21 = true;
                        CHECK(iv.state == PERF_OFF_CPU_RUNNABLE && iv.duration_ns == 500000000 && held == NULL);
                }
        }
        CHECK_MSG(n == 2 && seen20 && seen21, "%d intervals at the end", n);
        /* thread 20's wait, cut; the short ones: thread 22's before its exit, thread 25's */
        CHECK(t.in_progress == 2 && t.total.blocked == 1 && t.total.stacks == 1 && t.total.blocked_short == 2);
        off_cpu_tracker_done(&t);
}

/* tid 22 used again after its exit: a new thread, its waits count */
TEST(reused_tid_new_thread) {
        OffCpuTracker t = tracker();
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
        exit_before_switch_out(&t);
        CHECK(sw(&t, 22, 21000000000, false, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 22, 21000000100, true, false, &iv, &held, &held_size) == 0);
        CHECK(sw(&t, 22, 22000000100, false, false, &iv, &held, &held_size) == 1 && iv.duration_ns == 1000000000);
        off_cpu_tracker_done(&t);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
