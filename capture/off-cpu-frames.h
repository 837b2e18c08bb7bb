/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu-frames.h: Periscope's off-CPU extension of the capture format
 * (docs/capture-format.md, docs/off-cpu.md): one METADATA frame
 * `periscope.offcpu` per interval a thread spent off the CPU (blocked, or
 * preempted and runnable), timed at the switch-out, with the process in
 * the frame's pid, and for a blocked interval the stack it blocked in;
 * and `periscope.offcpu.stats` frames with what was only counted. Sysprof
 * skips METADATA it does not know. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture-types.h"
#include "capture-writer.h"

#define CAPTURE_OFF_CPU_ID "periscope.offcpu"
#define CAPTURE_OFF_CPU_STATS_ID "periscope.offcpu.stats"
/* Addresses one interval's stack keeps (its text must fit one frame). */
#define CAPTURE_OFF_CPU_MAX_ADDRS 3000

typedef enum CaptureOffCpuState {
        CAPTURE_OFF_CPU_BLOCKED = 1,  /* it blocked (slept, waited) */
        CAPTURE_OFF_CPU_RUNNABLE = 2, /* it was preempted: waiting for a CPU */
} CaptureOffCpuState;

/* "blocked", "runnable", or NULL. */
const char *capture_off_cpu_state_to_string(int state);

/* Writes that thread tid of process pid left the CPU at time for
 * duration_ns, in state; addrs (innermost first, context markers as in
 * SAMPLE frames; n 0 = no stack) is where it blocked. */
int capture_writer_add_off_cpu(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid,
                               CaptureOffCpuState state, uint64_t duration_ns, const uint64_t *addrs, size_t n);

typedef struct CaptureOffCpu {
        int32_t tid;
        CaptureOffCpuState state;
        uint64_t duration_ns;
        size_t n_addrs;
        uint64_t addrs[CAPTURE_OFF_CPU_MAX_ADDRS];
} CaptureOffCpu;

/* Whether f is an off-CPU interval frame: 1 with *ret filled, 0 if it is
 * another frame, -EBADMSG if it is malformed. */
int capture_frame_get_off_cpu(const CaptureFrame *f, CaptureOffCpu *ret);
