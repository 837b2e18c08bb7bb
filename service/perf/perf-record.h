/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-record.h: decodes the records perf writes into its ring buffer into
 * plain structs, checking every count and string against the record size.
 * Pointers in the structs point into the record and live as long as it. */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the events were asked to put into each sample. */
typedef struct PerfRecordLayout {
        uint64_t sample_type;      /* PERF_SAMPLE_* bits */
        uint64_t sample_regs_user; /* register mask of PERF_SAMPLE_REGS_USER */
} PerfRecordLayout;

/* The sample_id_all trailer of non-sample records (TID, TIME, CPU). */
typedef struct PerfSampleId {
        uint32_t pid, tid;
        uint64_t time;
        uint32_t cpu;
} PerfSampleId;

/* One PERF_RECORD_SAMPLE. The DWARF unwinder reads regs/stack. */
typedef struct PerfSample {
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time;             /* CLOCK_MONOTONIC ns */
        uint32_t cpu;
        bool user_mode;            /* PERF_RECORD_MISC_USER */
        uint64_t n_callchain;
        const uint64_t *callchain; /* with PERF_CONTEXT_* markers */
        uint64_t regs_abi;         /* PERF_SAMPLE_REGS_ABI_*; 0 = no registers */
        uint64_t n_regs;
        const uint64_t *regs;      /* in mask bit order */
        uint64_t stack_size;       /* bytes copied at the user stack pointer */
        const uint8_t *stack;
        uint64_t stack_dyn_size;   /* bytes of stack that were valid (<= stack_size) */
        uint64_t id;               /* PERF_SAMPLE_IDENTIFIER: the (parent) event's id; 0 without */
        /* Set by the pump, not the kernel: a stack taken when the thread
         * left the CPU (off-cpu.h) and how long it stayed off it. */
        uint64_t off_cpu_ns;   /* 0: an on-CPU sample */
        uint8_t off_cpu_state; /* PERF_OFF_CPU_* */
} PerfSample;

/* Why a thread was off the CPU. */
enum {
        PERF_OFF_CPU_NONE = 0,
        PERF_OFF_CPU_BLOCKED = 1,  /* it blocked (went to sleep) */
        PERF_OFF_CPU_RUNNABLE = 2, /* it was preempted: runnable, waiting for a CPU */
};

/* PERF_RECORD_SWITCH and PERF_RECORD_SWITCH_CPU_WIDE: a thread (id.tid)
 * leaves or enters a CPU at id.time. */
typedef struct PerfSwitch {
        bool out;                              /* PERF_RECORD_MISC_SWITCH_OUT */
        bool preempt;                          /* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT: left runnable */
        uint32_t next_prev_pid, next_prev_tid; /* CPU-wide only, else 0 */
        PerfSampleId id;
} PerfSwitch;

typedef struct PerfMmap2 {
        uint32_t pid, tid;
        uint64_t addr, len, pgoff;
        bool has_build_id;         /* then dev/inode are unknown (0) */
        uint32_t dev_major, dev_minor;
        uint64_t inode;
        uint8_t build_id_size;
        uint8_t build_id[20];
        uint32_t prot, flags;
        const char *filename;
        PerfSampleId id;
} PerfMmap2;

typedef struct PerfComm {
        uint32_t pid, tid;
        bool exec;
        const char *comm;
        PerfSampleId id;
} PerfComm;

/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
typedef struct PerfTask {
        uint32_t pid, ppid, tid, ptid;
        uint64_t time;
        PerfSampleId id;
} PerfTask;

/* Each returns 0 or -EBADMSG when the record is shorter than its contents. */
int perf_record_parse_sample(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                             PerfSample *ret);
int perf_record_parse_mmap2(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                            PerfMmap2 *ret);
int perf_record_parse_comm(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                           PerfComm *ret);
int perf_record_parse_task(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                           PerfTask *ret);

/* PERF_RECORD_SWITCH / _SWITCH_CPU_WIDE; requires TID and TIME in the
 * sample_id trailer (-EBADMSG otherwise). */
int perf_record_parse_switch(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                             PerfSwitch *ret);

/* When a record happened (PERF_SAMPLE_TIME from a sample, or from the
 * sample_id_all trailer of any other record); 0 when it does not say. */
uint64_t perf_record_time(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size);

/* Number of samples a PERF_RECORD_LOST or PERF_RECORD_LOST_SAMPLES reports. */
int perf_record_parse_lost(const struct perf_event_header *h, size_t size, uint64_t *ret_lost);
