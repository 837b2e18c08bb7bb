/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-open-options.c: decoding and narrowing PerfEventOpen's attributes. */
#include "perf-open-options.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "basic.h"
#include "perf.h"

typedef enum AttrField {
        FIELD_TYPE, FIELD_CONFIG, FIELD_SAMPLE_PERIOD, FIELD_SAMPLE_TYPE, FIELD_WAKEUP_EVENTS, FIELD_CLOCKID,
        FIELD_SAMPLE_STACK_USER, FIELD_SAMPLE_REGS_USER,
        FIELD_DISABLED, FIELD_COMM, FIELD_MMAP, FIELD_MMAP2, FIELD_TASK, FIELD_EXCLUDE_IDLE, FIELD_SAMPLE_ID_ALL,
        FIELD_USE_CLOCKID, FIELD_BUILD_ID,
} AttrField;

static const struct {
        const char *key;
        char type;
        AttrField field;
} attr_options[] = {
        { "type", 'u', FIELD_TYPE },
        { "config", 't', FIELD_CONFIG },
        { "sample_period", 't', FIELD_SAMPLE_PERIOD },
        { "sample_type", 't', FIELD_SAMPLE_TYPE },
        { "wakeup_events", 'u', FIELD_WAKEUP_EVENTS },
        { "clockid", 'i', FIELD_CLOCKID },
        { "sample_stack_user", 'u', FIELD_SAMPLE_STACK_USER },
        { "sample_regs_user", 't', FIELD_SAMPLE_REGS_USER },
        { "disabled", 'b', FIELD_DISABLED },
        { "comm", 'b', FIELD_COMM },
        { "mmap", 'b', FIELD_MMAP },
        { "mmap2", 'b', FIELD_MMAP2 },
        { "task", 'b', FIELD_TASK },
        { "exclude_idle", 'b', FIELD_EXCLUDE_IDLE },
        { "sample_id_all", 'b', FIELD_SAMPLE_ID_ALL },
        { "use_clockid", 'b', FIELD_USE_CLOCKID },
        { "build_id", 'b', FIELD_BUILD_ID },
};

int perf_open_option_apply(struct perf_event_attr *attr, const PerfOpenOption *o, char **ret_why) {
        size_t i;
        for (i = 0; i < ELEMENTSOF(attr_options); i++)
                if (strcmp(attr_options[i].key, o->key) == 0)
                        break;
        if (i == ELEMENTSOF(attr_options))
                return why_setf(ret_why, -EINVAL, "unknown perf_event_attr option '%.64s'", o->key);
        if (attr_options[i].type != o->type)
                return why_setf(ret_why, -EINVAL, "option '%s' must have D-Bus type '%c', not '%c'", o->key,
                                attr_options[i].type, o->type);
        uint64_t v = o->value;
        switch (attr_options[i].field) {
        case FIELD_TYPE: attr->type = (uint32_t) v; break;
        case FIELD_CONFIG: attr->config = v; break;
        case FIELD_SAMPLE_PERIOD: attr->sample_period = v; break;
        case FIELD_SAMPLE_TYPE: attr->sample_type = v; break;
        case FIELD_WAKEUP_EVENTS: attr->wakeup_events = (uint32_t) v; break;
        case FIELD_CLOCKID: attr->clockid = (int32_t) v; break;
        case FIELD_SAMPLE_STACK_USER: attr->sample_stack_user = (uint32_t) v; break;
        case FIELD_SAMPLE_REGS_USER: attr->sample_regs_user = v; break;
        case FIELD_DISABLED: attr->disabled = !!v; break;
        case FIELD_COMM: attr->comm = !!v; break;
        case FIELD_MMAP: attr->mmap = !!v; break;
        case FIELD_MMAP2: attr->mmap2 = !!v; break;
        case FIELD_TASK: attr->task = !!v; break;
        case FIELD_EXCLUDE_IDLE: attr->exclude_idle = !!v; break;
        case FIELD_SAMPLE_ID_ALL: attr->sample_id_all = !!v; break;
        case FIELD_USE_CLOCKID: attr->use_clockid = !!v; break;
        case FIELD_BUILD_ID: attr->build_id = !!v; break;
        }
        return 0;
}

/* Sample fields that hold only what a call-stack profiler needs. */
#define ALLOWED_SAMPLE_TYPE                                                                                    \
        (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |            \
         PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |                  \
         PERF_SAMPLE_STACK_USER | PERF_SAMPLE_IDENTIFIER)

/* The user registers perf knows on this architecture (perf-regs.h: never
 * arm64's VG or other extended registers). */
#define ALLOWED_REGS_MASK PERF_REGS_USER_MASK

int perf_open_attr_restrict(struct perf_event_attr *attr, bool kernel, char **ret_why) {
        switch (attr->type) {
        case PERF_TYPE_SOFTWARE:
                if (attr->config != PERF_COUNT_SW_CPU_CLOCK && attr->config != PERF_COUNT_SW_TASK_CLOCK &&
                    attr->config != PERF_COUNT_SW_PAGE_FAULTS && attr->config != PERF_COUNT_SW_CONTEXT_SWITCHES &&
                    attr->config != PERF_COUNT_SW_CPU_MIGRATIONS && attr->config != PERF_COUNT_SW_DUMMY)
                        return why_setf(ret_why, -EINVAL,
                                        "software event %llu is not served (cpu-clock, task-clock, "
                                        "page-faults, context-switches, cpu-migrations, dummy are)",
                                        (unsigned long long) attr->config);
                break;
        case PERF_TYPE_HARDWARE:
                if (attr->config >= PERF_COUNT_HW_MAX)
                        return why_setf(ret_why, -EINVAL, "hardware event %llu does not exist",
                                        (unsigned long long) attr->config);
                break;
        default:
                return why_setf(ret_why, -EINVAL,
                                "perf event type %u is not served: only software (1) and hardware (0) "
                                "sampling events are",
                                attr->type);
        }
        if (attr->sample_type & ~(uint64_t) ALLOWED_SAMPLE_TYPE)
                return why_setf(ret_why, -EINVAL,
                                "sample_type bits 0x%llx are not served (only ip, tid, time, id, cpu, "
                                "period, callchain, user registers and user stack)",
                                (unsigned long long) (attr->sample_type & ~(uint64_t) ALLOWED_SAMPLE_TYPE));
        if (attr->sample_period != 0 && attr->sample_period < PERF_OPEN_MIN_PERIOD)
                return why_setf(ret_why, -EINVAL, "sample_period %llu is below the smallest served, %u",
                                (unsigned long long) attr->sample_period, PERF_OPEN_MIN_PERIOD);
        if (attr->wakeup_events > PERF_OPEN_MAX_WAKEUP_EVENTS)
                return why_setf(ret_why, -EINVAL, "wakeup_events %u is above %u", attr->wakeup_events,
                                PERF_OPEN_MAX_WAKEUP_EVENTS);
        if (attr->sample_stack_user > PERF_OPEN_MAX_STACK_USER || attr->sample_stack_user % 8 != 0)
                return why_setf(ret_why, -EINVAL, "sample_stack_user must be a multiple of 8 up to %u, not %u",
                                PERF_OPEN_MAX_STACK_USER, attr->sample_stack_user);
        if (attr->sample_regs_user & ~ALLOWED_REGS_MASK)
                return why_setf(ret_why, -EINVAL, "sample_regs_user 0x%llx names registers perf does not have",
                                (unsigned long long) attr->sample_regs_user);
        if (attr->use_clockid) {
                if (attr->clockid != CLOCK_MONOTONIC && attr->clockid != CLOCK_MONOTONIC_RAW &&
                    attr->clockid != CLOCK_REALTIME && attr->clockid != CLOCK_BOOTTIME && attr->clockid != CLOCK_TAI)
                        return why_setf(ret_why, -EINVAL, "clockid %d is not a clock perf samples with", attr->clockid);
        } else
                attr->clockid = 0;
        /* What the caller never chooses. */
        attr->size = sizeof(*attr);
        attr->freq = 0;
        attr->inherit = 0;
        attr->inherit_stat = 0;
        attr->pinned = 0;
        attr->exclusive = 0;
        attr->enable_on_exec = 0;
        attr->exclude_hv = 1;
        attr->exclude_guest = 1;
        attr->exclude_kernel = !kernel;
        attr->exclude_callchain_kernel = !kernel;
        return 0;
}

int perf_open_target_check(int32_t pid, int32_t cpu, uint64_t flags, int n_cpus, char **ret_why) {
        if (pid == 0 || pid < -1)
                return why_setf(ret_why, -EINVAL,
                                "pid must name a process (> 0), or be -1 with a cpu for the whole system; "
                                "%d is neither",
                                pid);
        if (cpu < -1 || cpu >= n_cpus)
                return why_setf(ret_why, -EINVAL, "cpu must be -1 or 0…%d, not %d", n_cpus - 1, cpu);
        if (pid == -1 && cpu == -1)
                return why_setf(ret_why, -EINVAL, "pid -1 (the whole system) needs a cpu");
        if (flags & ~(uint64_t) PERF_FLAG_FD_CLOEXEC)
                return why_setf(ret_why, -EINVAL,
                                "perf_event_open flags 0x%llx are not served (only PERF_FLAG_FD_CLOEXEC)",
                                (unsigned long long) flags);
        return 0;
}
