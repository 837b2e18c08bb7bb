/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu.c: pairs switch-outs with switch-ins per thread (see off-cpu.h). */
#include "off-cpu.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

static void *mfree(void *p) {
        free(p);
        return NULL;
}

/* The held sample may be this much older than its switch-out record (both
 * are written in one kernel function, microseconds apart). */
#define OFF_CPU_HELD_WINDOW_NS (10 * 1000 * 1000ull)

static size_t slot_of(uint32_t tid, size_t allocated) {
        return (size_t) ((tid * 2654435761u) & (allocated - 1));
}

static int tracker_grow(OffCpuTracker *t) {
        size_t n = t->allocated ? t->allocated * 2 : 256;
        OffCpuThread *a = calloc(n, sizeof(OffCpuThread));
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < t->allocated; i++) {
                if (t->threads[i].tid == 0)
                        continue;
                size_t j = slot_of(t->threads[i].tid, n);
                while (a[j].tid != 0)
                        j = (j + 1) & (n - 1);
                a[j] = t->threads[i];
        }
        free(t->threads);
        t->threads = a;
        t->allocated = n;
        return 0;
}

/* Whether the kernel named a thread: 0 is an idle task (or one outside
 * the events' pid namespace), (u32) -1 one whose pid is gone (its last
 * switch-out, while it exits). */
static bool tid_valid(uint32_t tid) {
        return tid > 0 && tid <= INT32_MAX;
}

/* The thread's slot, made when `create`; NULL when absent or out of memory. */
static OffCpuThread *tracker_thread(OffCpuTracker *t, uint32_t tid, bool create) {
        if (!tid_valid(tid))
                return NULL;
        if (t->allocated > 0) {
                size_t j = slot_of(tid, t->allocated);
                while (t->threads[j].tid != 0) {
                        if (t->threads[j].tid == tid)
                                return &t->threads[j];
                        j = (j + 1) & (t->allocated - 1);
                }
        }
        if (!create)
                return NULL;
        if ((t->n_threads + 1) * 2 > t->allocated && tracker_grow(t) < 0)
                return NULL;
        size_t j = slot_of(tid, t->allocated);
        while (t->threads[j].tid != 0)
                j = (j + 1) & (t->allocated - 1);
        t->threads[j] = (OffCpuThread){ .tid = tid };
        t->n_threads++;
        return &t->threads[j];
}

static void thread_drop_held(OffCpuTracker *t, OffCpuThread *th) {
        if (!th->held)
                return;
        t->held_bytes -= th->held_size;
        th->held = mfree(th->held);
        th->held_size = 0;
}

int off_cpu_tracker_hold(OffCpuTracker *t, const struct perf_event_header *h, size_t size, const PerfSample *s) {
        t->switch_samples++;
        if (!tid_valid(s->tid) || s->pid > INT32_MAX)
                return 0;
        OffCpuThread *th = tracker_thread(t, s->tid, true);
        if (!th)
                return -ENOMEM;
        thread_drop_held(t, th);
        /* the stack copy cut to the bytes the kernel marked valid */
        size_t keep = size;
        if (s->stack && s->stack_size > 0) {
                size_t prefix = (size_t) (s->stack - (const uint8_t *) h);
                size_t valid = ((size_t) s->stack_dyn_size + 7) & ~(size_t) 7;
                if (prefix + s->stack_size + sizeof(uint64_t) == size && valid < s->stack_size)
                        keep = prefix + valid + sizeof(uint64_t);
        }
        if (t->held_bytes + keep > OFF_CPU_MAX_HELD_BYTES) {
                t->held_dropped++;
                return 0;
        }
        uint8_t *copy = malloc(keep);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, h, keep - (keep == size ? 0 : sizeof(uint64_t)));
        if (keep != size) {
                /* [..][u64 size][valid bytes][u64 dyn_size]: size rewritten */
                size_t prefix = (size_t) (s->stack - (const uint8_t *) h);
                uint64_t valid = keep - prefix - sizeof(uint64_t);
                memcpy(copy + prefix - sizeof(uint64_t), &valid, sizeof(valid));
                memcpy(copy + keep - sizeof(uint64_t), &s->stack_dyn_size, sizeof(uint64_t));
                ((struct perf_event_header *) copy)->size = (uint16_t) keep;
        }
        th->held = copy;
        th->held_size = keep;
        th->held_time = s->time;
        t->held_bytes += keep;
        return 0;
}

static int thread_switch_in(OffCpuTracker *t, OffCpuThread *th, uint64_t time, OffCpuInterval *ret,
                            const struct perf_event_header **ret_held, size_t *ret_held_size);

/* What the previous call handed on is freed now. */
static void tracker_free_handed(OffCpuTracker *t) {
        t->held_bytes -= t->handed_size;
        t->handed = mfree(t->handed);
        t->handed_size = 0;
}

int off_cpu_tracker_switch(OffCpuTracker *t, const PerfSwitch *sw, OffCpuInterval *ret,
                           const struct perf_event_header **ret_held, size_t *ret_held_size) {
        *ret_held = NULL;
        *ret_held_size = 0;
        tracker_free_handed(t);
        t->switch_records++;
        OffCpuThread *th = tracker_thread(t, sw->id.tid, sw->out);
        if (!th) {
                if (!sw->out)
                        t->unpaired++;
                return sw->out && tid_valid(sw->id.tid) ? -ENOMEM : 0;
        }
        if (sw->out && th->exited)
                return 0; /* its last switch-out, after its exit */
        if (sw->out) {
                th->out = true;
                th->preempt = sw->preempt;
                th->out_time = sw->id.time;
                th->cpu = sw->id.cpu;
                /* (u32) -1 for a process whose pid is gone: none */
                th->pid = sw->id.pid <= INT32_MAX ? sw->id.pid : 0;
                /* a stack taken at an earlier switch-out, not this one */
                if (th->held && (th->held_time > sw->id.time || sw->id.time - th->held_time > OFF_CPU_HELD_WINDOW_NS))
                        thread_drop_held(t, th);
                return 0;
        }
        if (!th->out) {
                t->unpaired++;
                thread_drop_held(t, th);
                th->exited = false; /* a new thread with the tid of one that exited */
                return 0;
        }
        return thread_switch_in(t, th, sw->id.time, ret, ret_held, ret_held_size);
}

/* The switch-in of th at time: its interval, as off_cpu_tracker_switch()
 * returns it. */
static int thread_switch_in(OffCpuTracker *t, OffCpuThread *th, uint64_t time, OffCpuInterval *ret,
                            const struct perf_event_header **ret_held, size_t *ret_held_size) {
        th->out = false;
        if (th->out_time < t->resumed_at) {
                /* the events were paused in between: its length is unknown */
                thread_drop_held(t, th);
                t->spanned_pause++;
                return 0;
        }
        uint64_t d = time > th->out_time ? time - th->out_time : 0;
        *ret = (OffCpuInterval){
                .pid = th->pid, .tid = th->tid, .cpu = th->cpu, .time = th->out_time, .duration_ns = d
        };
        if (th->preempt) {
                thread_drop_held(t, th);
                th->counts.runnable++;
                th->counts.runnable_ns += d;
                t->total.runnable++;
                t->total.runnable_ns += d;
                ret->state = PERF_OFF_CPU_RUNNABLE;
                return d >= t->min_ns;
        }
        ret->state = PERF_OFF_CPU_BLOCKED;
        if (d < t->min_ns) {
                thread_drop_held(t, th);
                th->counts.blocked_short++;
                th->counts.blocked_short_ns += d;
                t->total.blocked_short++;
                t->total.blocked_short_ns += d;
                return 0;
        }
        th->counts.blocked++;
        th->counts.blocked_ns += d;
        t->total.blocked++;
        t->total.blocked_ns += d;
        if (th->held) {
                th->counts.stacks++;
                t->total.stacks++;
                /* handed on: freed at the next call */
                t->handed = TAKE_PTR(th->held);
                t->handed_size = th->held_size;
                th->held_size = 0;
                *ret_held = (const struct perf_event_header *) t->handed;
                *ret_held_size = t->handed_size;
        }
        return 1;
}

void off_cpu_tracker_exit(OffCpuTracker *t, uint32_t tid) {
        OffCpuThread *th = tracker_thread(t, tid, false);
        if (!th)
                return;
        thread_drop_held(t, th);
        th->out = false;
        th->exited = true;
}

int off_cpu_tracker_end_next(OffCpuTracker *t, uint64_t end_time, size_t *cursor, OffCpuInterval *ret,
                             const struct perf_event_header **ret_held, size_t *ret_held_size) {
        *ret_held = NULL;
        *ret_held_size = 0;
        tracker_free_handed(t);
        for (; *cursor < t->allocated; (*cursor)++) {
                OffCpuThread *th = &t->threads[*cursor];
                if (th->tid == 0 || !th->out || th->exited || th->out_time > end_time)
                        continue;
                int r = thread_switch_in(t, th, end_time, ret, ret_held, ret_held_size);
                if (r > 0) {
                        ret->in_progress = true;
                        t->in_progress++;
                        (*cursor)++;
                        return 1;
                }
        }
        return 0;
}

void off_cpu_tracker_done(OffCpuTracker *t) {
        for (size_t i = 0; i < t->allocated; i++)
                free(t->threads[i].held);
        t->threads = mfree(t->threads);
        t->handed = mfree(t->handed);
        t->handed_size = 0;
        t->n_threads = t->allocated = 0;
        t->held_bytes = 0;
}
