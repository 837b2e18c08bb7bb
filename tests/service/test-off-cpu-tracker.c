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

/* A tracker of its own for each case, and its last answer to a switch. */
typedef struct Case {
        OffCpuTracker t;
        OffCpuInterval iv;
        const struct perf_event_header *held;
        size_t held_size;
} Case;

static Case new_case(void) {
        return (Case) { .t = { .min_ns = MIN_NS, .layout = layout } };
}

static void case_done(Case *c) {
        off_cpu_tracker_done(&c->t);
}

static void hold(Case *c, uint32_t tid, uint64_t time) {
        uint64_t rec[32];
        size_t size = make_sample(rec, tid, time);
        PerfSample s;
        CHECK(perf_record_parse_sample(&layout, (void *) rec, size, &s) == 0);
        CHECK(off_cpu_tracker_hold(&c->t, (void *) rec, size, &s) == 0);
}

/* One switch record; returns the tracker's answer (its interval in c->iv,
 * the stack it hands over in c->held). */
static int sw(Case *c, uint32_t tid, uint64_t time, bool out, bool preempt) {
        PerfSwitch s = { .out = out, .preempt = preempt, .id = { .pid = tid, .tid = tid, .time = time } };
        return off_cpu_tracker_switch(&c->t, &s, &c->iv, &c->held, &c->held_size);
}

static int out(Case *c, uint32_t tid, uint64_t time) {
        return sw(c, tid, time, true, false);
}

static int preempted(Case *c, uint32_t tid, uint64_t time) {
        return sw(c, tid, time, true, true);
}

static int in(Case *c, uint32_t tid, uint64_t time) {
        return sw(c, tid, time, false, false);
}

/* Thread 10's stack sampled, then its switch-out (preempted or not) and
 * switch-in; returns the tracker's answer to the switch-in. */
static int wait_once(Case *c, uint64_t sampled, uint64_t out_at, bool preempt, uint64_t in_at) {
        hold(c, 10, sampled);
        CHECK(sw(c, 10, out_at, true, preempt) == 0);
        return in(c, 10, in_at);
}

/* blocked 1 s: its stack, cut to the valid 16 bytes, parses again */
TEST(blocked_wait_keeps_stack) {
        _cleanup_(case_done) Case c = new_case();
        CHECK(wait_once(&c, 1000, 1100, false, 1000001100) == 1);
        CHECK(c.iv.state == PERF_OFF_CPU_BLOCKED && c.iv.duration_ns == 1000000000 && c.iv.tid == 10 &&
              c.iv.time == 1100);
        CHECK(c.held != NULL);
        PerfSample s;
        CHECK(c.held && perf_record_parse_sample(&layout, c.held, c.held_size, &s) == 0);
        CHECK(s.tid == 10 && s.time == 1000 && s.stack_size == 16 && s.stack_dyn_size == 16);
        CHECK(memcmp(s.stack, "\x00\x10\0\0\0\0\0\0", 8) == 0);
        CHECK(c.t.total.blocked == 1 && c.t.total.stacks == 1 && c.t.total.runnable == 0);
}

/* blocked 50 us: counted, no interval */
TEST(short_wait_counted) {
        _cleanup_(case_done) Case c = new_case();
        CHECK(wait_once(&c, 2000000000, 2000000100, false, 2000050100) == 0);
        CHECK(c.t.total.blocked_short == 1 && c.t.total.blocked_short_ns == 50000);
        CHECK(c.t.total.blocked == 0 && c.t.total.stacks == 0);
}

/* preempted 1 ms: runnable, no stack */
TEST(preemption_runnable_without_stack) {
        _cleanup_(case_done) Case c = new_case();
        CHECK(wait_once(&c, 3000000000, 3000000100, true, 3001000100) == 1);
        CHECK(c.iv.state == PERF_OFF_CPU_RUNNABLE && c.held == NULL && c.iv.duration_ns == 1000000);
        CHECK(c.t.total.runnable == 1 && c.t.total.blocked == 0 && c.t.total.stacks == 0);
}

/* a stack from long before this switch-out is not its stack */
TEST(stale_stack_not_used) {
        _cleanup_(case_done) Case c = new_case();
        CHECK(wait_once(&c, 4000000000, 5000000000, false, 6000000000) == 1);
        CHECK(c.held == NULL && c.iv.duration_ns == 1000000000);
        CHECK(c.t.total.blocked == 1 && c.t.total.stacks == 0);
}

/* out before a pause, in after it: dropped */
TEST(wait_across_pause_dropped) {
        _cleanup_(case_done) Case c = new_case();
        CHECK(out(&c, 11, 7000000000) == 0);
        c.t.resumed_at = 7500000000;
        CHECK(in(&c, 11, 8000000000) == 0);
        CHECK(c.t.spanned_pause == 1);
        CHECK(c.t.total.blocked == 0 && c.t.total.runnable == 0);
}

/* an exiting thread's (u32) -1 and an idle task's 0: ignored */
TEST(exiting_and_idle_ignored) {
        _cleanup_(case_done) Case c = new_case();
        hold(&c, UINT32_MAX, 9000000000);
        CHECK(out(&c, UINT32_MAX, 9000000100) == 0);
        CHECK(out(&c, 0, 9000000100) == 0);
        CHECK(in(&c, 0, 9900000100) == 0);
        CHECK(c.t.total.blocked == 0 && c.t.total.runnable == 0 && c.t.total.stacks == 0);
}

/* a switch-in without its switch-out: unpaired */
TEST(unpaired_switch_in_counted) {
        _cleanup_(case_done) Case c = new_case();
        CHECK(in(&c, 12, 9900000100) == 0);
        CHECK(c.t.unpaired == 1);
}

/* Thread 22 goes out and in (short), exits, and its EXIT comes before its
 * last switch-out. */
static void exit_before_switch_out(Case *c) {
        CHECK(out(c, 22, 19000000000) == 0);
        CHECK(in(c, 22, 19000001000) == 0); /* in, short */
        off_cpu_tracker_exit(&c->t, 22);
        CHECK(out(c, 22, 19000002000) == 0);
}

/* the end of sampling at 20 s: thread 20 blocked since 19 s (its stack
 * held), thread 21 preempted since 19.5 s, thread 22 exited (its EXIT
 * before its last switch-out), thread 23 exited (after), thread 24 out
 * after the end, thread 25 blocked 50 us (short) */
TEST(end_cuts_open_waits) {
        _cleanup_(case_done) Case c = new_case();
        PerfSample s;
        hold(&c, 20, 19000000000);
        CHECK(out(&c, 20, 19000000100) == 0);
        CHECK(preempted(&c, 21, 19500000000) == 0);
        exit_before_switch_out(&c);
        CHECK(out(&c, 23, 19100000000) == 0);
        off_cpu_tracker_exit(&c.t, 23);
        CHECK(out(&c, 24, 20000000001) == 0);
        CHECK(out(&c, 25, 19999950000) == 0);
        size_t cursor = 0;
        bool seen20 = false, seen21 = false;
        int n = 0;
        while (off_cpu_tracker_end_next(&c.t, 20000000000, &cursor, &c.iv, &c.held, &c.held_size) > 0) {
                n++;
                CHECK(c.iv.in_progress);
                if (c.iv.tid == 20) {
                        seen20 = true;
                        CHECK(c.iv.state == PERF_OFF_CPU_BLOCKED && c.iv.duration_ns == 999999900 && c.held != NULL);
                        CHECK(c.held && perf_record_parse_sample(&layout, c.held, c.held_size, &s) == 0 && s.tid == 20);
                } else if (c.iv.tid == 21) {
                        seen21 = true;
                        CHECK(c.iv.state == PERF_OFF_CPU_RUNNABLE && c.iv.duration_ns == 500000000 && c.held == NULL);
                }
        }
        CHECK_MSG(n == 2 && seen20 && seen21, "%d intervals at the end", n);
        /* thread 20's wait, cut; the short ones: thread 22's before its exit, thread 25's */
        CHECK(c.t.in_progress == 2 && c.t.total.blocked == 1 && c.t.total.stacks == 1 && c.t.total.blocked_short == 2);
}

/* tid 22 used again after its exit: a new thread, its waits count */
TEST(reused_tid_new_thread) {
        _cleanup_(case_done) Case c = new_case();
        exit_before_switch_out(&c);
        CHECK(in(&c, 22, 21000000000) == 0);
        CHECK(out(&c, 22, 21000000100) == 0);
        CHECK(in(&c, 22, 22000000100) == 1 && c.iv.duration_ns == 1000000000);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
