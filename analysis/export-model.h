/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-model.h: a capture made ready for `periscope export`: every sample
 * (or allocation) in time order with its thread, time and resolved stack,
 * and the distinct locations, functions and mappings those stacks use.
 * Built on the report's loader (report-profile.h) and the embedded symbol
 * table; each export-*.c writer only formats it. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "report-callgraph.h"
#include "report-profile.h"

typedef enum ExportKind {
        EXPORT_KIND_CPU,    /* SAMPLE frames: one per cpu-clock tick */
        EXPORT_KIND_MEMORY, /* ALLOCATION frames of `periscope record --memory` */
} ExportKind;

/* ExportFunction.flags */
#define EXPORT_FUNCTION_KERNEL 0x1u
#define EXPORT_FUNCTION_JIT 0x2u
#define EXPORT_FUNCTION_UNRESOLVED 0x4u /* no symbol: "libfoo.so+0x1a2b", "[unresolved: why] libfoo.so" */

/* A function: distinct (name, file, kernel-ness). */
typedef struct ExportFunction {
        char *name;    /* printable (valid UTF-8, no control characters) */
        char *file;    /* source file, or NULL */
        uint32_t line; /* smallest line seen in it (about where it starts); 0 unknown */
        guint flags;   /* EXPORT_FUNCTION_* */
} ExportFunction;

/* One function of a location's inline chain. */
typedef struct ExportLine {
        guint function; /* index into ExportModel.functions */
        uint32_t line;  /* 0 unknown */
} ExportLine;

typedef struct ExportMapping {
        uint64_t start, end, offset;
        char *filename; /* printable; "[kernel.kallsyms]" for the kernel */
        char *build_id; /* lowercase hex, or NULL */
        gboolean kernel;
} ExportMapping;

/* A distinct (pid, context, address). */
typedef struct ExportLocation {
        uint64_t address;
        gboolean kernel;
        int mapping;        /* index into ExportModel.mappings, or -1 */
        uint64_t offset;    /* address minus the outermost function's start; 0 unknown */
        guint n_lines;      /* >= 1 */
        ExportLine lines[]; /* innermost first: the last is the function that holds the address */
} ExportLocation;

typedef struct ExportSample {
        int64_t time; /* capture clock, ns */
        int32_t pid, tid, cpu;
        guint32 thread; /* its name at this time: index into report->threads and thread_names */
        int64_t value;  /* CPU: 1; memory: bytes allocated; off-CPU: ns blocked */
        gboolean off_cpu; /* a blocked wait (`record --off-cpu`), not a CPU sample */
        uint64_t block; /* memory: the block's address */
        gboolean live;  /* memory: not freed by the end of the capture */
        guint first;    /* into ExportModel.stack_locations */
        guint n;        /* locations, innermost first */
} ExportSample;

typedef struct ExportModel {
        ReportProfile *report; /* owned */
        ExportKind kind;
        GArray *samples;                                             /* ExportSample, by time */
        GArray *stack_locations;                                     /* guint location indices */
        GPtrArray *locations;                                        /* ExportLocation* */
        GPtrArray *functions;                                        /* ExportFunction* */
        GPtrArray *mappings;                                         /* ExportMapping* */
        GHashTable *location_index, *function_index, *mapping_index; /* while building */
        GHashTable *comms;                                           /* GINT_TO_POINTER(pid) → printable comm */
        GPtrArray *thread_names;      /* printable names of report->threads, same indices */
        int64_t start_time, end_time; /* capture clock, ns */
        int64_t wall_start_ns;        /* Unix time of the capture's start (header), 0 unknown */
        int64_t period_ns;            /* CPU: time one sample stands for */
        guint64 n_other_kind;         /* records of the kind not exported (memory vs CPU) */
        gboolean thread_root;         /* see ExportOptions */
        gboolean has_off_cpu;         /* samples hold blocked waits too (ExportOptions.off_cpu) */
        gboolean off_cpu_only;        /* ... and nothing else */
} ExportModel;

/* Whether the blocked waits of `record --off-cpu` (docs/off-cpu.md) are
 * exported, each a sample weighing its nanoseconds. */
typedef enum ExportOffCpu {
        EXPORT_OFF_CPU_NONE, /* CPU samples only */
        EXPORT_OFF_CPU_WITH, /* beside the CPU samples (pprof: a second sample type) */
        EXPORT_OFF_CPU_ONLY, /* instead of them (export --off-cpu) */
} ExportOffCpu;

/* What to export. */
typedef struct ExportOptions {
        const ReportFilter *filter; /* --pid / --comm / --tid */
        int memory;                 /* 1: allocations, 0: CPU samples, -1: allocations if the capture has any */
        gboolean thread_root;       /* folded: a "name (tid N)" frame above each stack */
        ExportOffCpu off_cpu;       /* the blocked waits of `record --off-cpu` (CPU kind only) */
} ExportOptions;

/* Loads path and resolves every stack that passes the options. On failure
 * returns NULL and sets error; a capture cut short is loaded up to the bad
 * frame and the reason kept in report->load_warning. */
ExportModel *export_model_load(const char *path, const ExportOptions *o, GError **error);

/* Frees a model; NULL is a no-op. */
void export_model_free(ExportModel *m);

/* The comm (process name) of pid, never NULL. */
const char *export_model_comm(const ExportModel *m, int32_t pid);

/* a + b and a - b held at the int64 limits: a hostile capture's times and
 * sizes are anything. */
static inline int64_t export_add(int64_t a, int64_t b) {
        int64_t r;
        return __builtin_add_overflow(a, b, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}

static inline int64_t export_sub(int64_t a, int64_t b) {
        int64_t r;
        return __builtin_sub_overflow(a, b, &r) ? (b > 0 ? INT64_MIN : INT64_MAX) : r;
}

/* The printable name s's thread had at s's time ("tid N" if unknown). */
static inline const char *export_sample_thread_name(const ExportModel *m, const ExportSample *s) {
        return g_ptr_array_index(m->thread_names, s->thread);
}

/* Location i of sample s (0 = innermost). */
static inline const ExportLocation *export_sample_location(const ExportModel *m, const ExportSample *s, guint i) {
        guint idx = g_array_index(m->stack_locations, guint, s->first + i);
        return g_ptr_array_index(m->locations, idx);
}

static inline const ExportFunction *export_model_function(const ExportModel *m, guint i) {
        return g_ptr_array_index(m->functions, i);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ExportModel, export_model_free)
