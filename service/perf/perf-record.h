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
} PerfSample;

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

/* When a record happened (PERF_SAMPLE_TIME from a sample, or from the
 * sample_id_all trailer of any other record); 0 when it does not say. */
uint64_t perf_record_time(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size);

/* Number of samples a PERF_RECORD_LOST or PERF_RECORD_LOST_SAMPLES reports. */
int perf_record_parse_lost(const struct perf_event_header *h, size_t size, uint64_t *ret_lost);
