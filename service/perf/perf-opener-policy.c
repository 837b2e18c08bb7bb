/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-opener-policy.c: the events the perf opener serves (see
 * perf-opener-policy.h). */
#include "perf-opener-policy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "basic.h"
#include "perf-regs.h"

/* Sample fields periscoped's two callers ask for: addresses, ids, times,
 * the callchain, user registers and the user stack. */
#define SERVED_SAMPLE_TYPE                                                                                             \
        (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |                \
         PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |                        \
         PERF_SAMPLE_STACK_USER | PERF_SAMPLE_IDENTIFIER)

/* True when a holds nothing but the fields and bits periscoped sets: a
 * copy made of those alone is the whole attr (every other field, flag
 * and reserved bit is 0). */
static bool attr_only_known_fields(const struct perf_event_attr *a) {
        struct perf_event_attr c;
        memset(&c, 0, sizeof(c));
        c.type = a->type;
        c.size = a->size;
        c.config = a->config;
        c.sample_period = a->sample_period; /* or sample_freq */
        c.sample_type = a->sample_type;
        c.disabled = a->disabled;
        c.inherit = a->inherit;
        c.exclude_kernel = a->exclude_kernel;
        c.exclude_hv = a->exclude_hv;
        c.exclude_idle = a->exclude_idle;
        c.mmap = a->mmap;
        c.comm = a->comm;
        c.freq = a->freq;
        c.task = a->task;
        c.watermark = a->watermark;
        c.mmap2 = a->mmap2;
        c.comm_exec = a->comm_exec;
        c.use_clockid = a->use_clockid;
        c.sample_id_all = a->sample_id_all;
        c.exclude_guest = a->exclude_guest;
        c.exclude_callchain_kernel = a->exclude_callchain_kernel;
        c.exclude_callchain_user = a->exclude_callchain_user;
        c.build_id = a->build_id;
        c.context_switch = a->context_switch;
        c.wakeup_events = a->wakeup_events; /* or wakeup_watermark */
        c.sample_regs_user = a->sample_regs_user;
        c.sample_stack_user = a->sample_stack_user;
        c.clockid = a->clockid;
        return memcmp(&c, a, sizeof(c)) == 0;
}

static int check_event(const struct perf_event_attr *a, char **ret_why) {
        /* PERF_RECORD_SWITCH records (off-CPU profiles) come from a dummy
         * event that samples nothing; like any event's they tell only of
         * the tasks it follows (per task) or of its CPU (per CPU). */
        if (a->context_switch && (a->type != PERF_TYPE_SOFTWARE || a->config != PERF_COUNT_SW_DUMMY))
                return why_setf(ret_why, -EBADRQC, "context_switch is served on the dummy software event only");
        switch (a->type) {
        case PERF_TYPE_SOFTWARE:
                if (a->config != PERF_COUNT_SW_CPU_CLOCK && a->config != PERF_COUNT_SW_TASK_CLOCK &&
                    a->config != PERF_COUNT_SW_PAGE_FAULTS && a->config != PERF_COUNT_SW_CONTEXT_SWITCHES &&
                    a->config != PERF_COUNT_SW_CPU_MIGRATIONS && a->config != PERF_COUNT_SW_DUMMY)
                        return why_setf(ret_why, -EBADRQC, "software event %llu is not served",
                                        (unsigned long long) a->config);
                return 0;
        case PERF_TYPE_HARDWARE:
                /* the generic events only: no PMU type in the high bits */
                if (a->config >= PERF_COUNT_HW_MAX)
                        return why_setf(ret_why, -EBADRQC, "hardware event 0x%llx is not served",
                                        (unsigned long long) a->config);
                return 0;
        default:
                return why_setf(ret_why, -EBADRQC, "event type %u is not served (software and generic hardware only)",
                                a->type);
        }
}

static int check_sampling(const struct perf_event_attr *a, char **ret_why) {
        if (a->sample_type & ~(uint64_t) SERVED_SAMPLE_TYPE)
                return why_setf(ret_why, -EBADRQC, "sample_type bits 0x%llx are not served",
                                (unsigned long long) (a->sample_type & ~(uint64_t) SERVED_SAMPLE_TYPE));
        if (a->freq) {
                if (a->sample_freq == 0)
                        return why_setf(ret_why, -EBADRQC, "a frequency of 0");
        } else if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CONTEXT_SWITCHES) {
                /* off-CPU stacks: a sample at every switch-out (period 1),
                 * which periscoped pauses under a storm of switches */
        } else if (a->sample_period != 0 && a->sample_period < PERF_OPENER_MIN_PERIOD)
                return why_setf(ret_why, -EBADRQC, "sample_period %llu is below %u",
                                (unsigned long long) a->sample_period, PERF_OPENER_MIN_PERIOD);
        if (!a->watermark && a->wakeup_events > PERF_OPENER_MAX_WAKEUP_EVENTS)
                return why_setf(ret_why, -EBADRQC, "wakeup_events %u is above %u", a->wakeup_events,
                                PERF_OPENER_MAX_WAKEUP_EVENTS);
        if (!(a->sample_type & PERF_SAMPLE_REGS_USER) && a->sample_regs_user != 0)
                return why_setf(ret_why, -EBADRQC, "sample_regs_user without PERF_SAMPLE_REGS_USER");
        /* this architecture's general registers only (perf-regs.h): never
         * arm64's VG (bit 46), with which SVE machines refuse cpu-clock */
        if (a->sample_regs_user & ~(uint64_t) PERF_REGS_USER_MASK)
                return why_setf(ret_why, -EBADRQC, "sample_regs_user 0x%llx names registers beyond the general ones",
                                (unsigned long long) a->sample_regs_user);
        if (a->sample_type & PERF_SAMPLE_STACK_USER) {
                if (a->sample_stack_user > PERF_OPENER_MAX_STACK_USER || a->sample_stack_user % 8 != 0)
                        return why_setf(ret_why, -EBADRQC, "sample_stack_user %u is not a multiple of 8 up to %u",
                                        a->sample_stack_user, PERF_OPENER_MAX_STACK_USER);
        } else if (a->sample_stack_user != 0)
                return why_setf(ret_why, -EBADRQC, "sample_stack_user without PERF_SAMPLE_STACK_USER");
        if (a->use_clockid) {
                if (a->clockid != CLOCK_MONOTONIC && a->clockid != CLOCK_MONOTONIC_RAW &&
                    a->clockid != CLOCK_REALTIME && a->clockid != CLOCK_BOOTTIME && a->clockid != CLOCK_TAI)
                        return why_setf(ret_why, -EBADRQC, "clockid %d is not served", a->clockid);
        } else if (a->clockid != 0)
                return why_setf(ret_why, -EBADRQC, "clockid without use_clockid");
        /* never the hypervisor's or a guest's part */
        if (!a->exclude_hv || !a->exclude_guest)
                return why_setf(ret_why, -EBADRQC, "events must exclude the hypervisor and guests");
        return 0;
}

int perf_opener_check(const PerfOpenerRequest *q, pid_t self, char **ret_why) {
        const struct perf_event_attr *a = &q->attr;
        if (a->size != sizeof(struct perf_event_attr))
                return why_setf(ret_why, -EBADRQC, "attr.size %u is not %zu", a->size, sizeof(struct perf_event_attr));
        if (q->group_fd != -1)
                return why_setf(ret_why, -EBADRQC, "group_fd %d: groups are not served", q->group_fd);
        if (q->flags & ~(uint64_t) PERF_FLAG_FD_CLOEXEC)
                return why_setf(ret_why, -EBADRQC, "flags 0x%llx: only PERF_FLAG_FD_CLOEXEC is served",
                                (unsigned long long) q->flags);
        if (q->reserved != 0)
                return why_setf(ret_why, -EBADRQC, "reserved field set");
        if (q->pid == 0 || q->pid < -1 || q->pid == self)
                return why_setf(ret_why, -EBADRQC, "pid %d: only another process (> 0), or -1 with a cpu", q->pid);
        if (q->cpu < -1 || (q->pid == -1 && q->cpu == -1))
                return why_setf(ret_why, -EBADRQC, "cpu %d with pid %d", q->cpu, q->pid);
        if (a->inherit && q->pid == -1)
                return why_setf(ret_why, -EBADRQC, "inherit on a CPU-wide event");
        if (!attr_only_known_fields(a))
                return why_setf(ret_why, -EBADRQC,
                                "attr sets fields or bits periscoped never uses (read_format, "
                                "breakpoints, branch stacks, aux, sigtrap, pinned, precise_ip...)");
        int r = check_event(a, ret_why);
        return r < 0 ? r : check_sampling(a, ret_why);
}
