/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-profile.h: what `periscope report` needs from a capture, read in
 * one pass: processes (comm), mappings, JIT names, the embedded symbol table
 * and every distinct raw stack with the number of samples that had it. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "capture.h"

typedef struct ReportMap {
        uint64_t start, end, offset;
        char *filename;
} ReportMap;

/* A distinct (pid, addresses) stack; addrs innermost first with context
 * markers, exactly as in the SAMPLE frames. */
typedef struct ReportRawStack {
        int32_t pid;
        int32_t tid;    /* the thread (SAMPLE/ALLOCATION tid) */
        guint32 thread; /* its name at the sample's time: index into ReportProfile.threads */
        guint32 n_addrs;
        guint64 count;  /* the weight: samples, or bytes */
        guint64 events; /* the samples or allocations that had this stack */
        uint64_t addrs[];
} ReportRawStack;

/* A thread under one name: samples of a thread that renamed itself belong
 * to one ReportThread per name. */
typedef struct ReportThread {
        int32_t pid, tid;
        char *name;     /* as the capture says it (may be any bytes), never NULL */
        gboolean named; /* from a thread-name frame; FALSE: its process's name or "tid N" */
} ReportThread;

/* What a stack's count means: one per sample (SAMPLE frames), or the bytes
 * of each allocation (ALLOCATION frames of `record --memory`): all of them,
 * only those never freed, or only the short-lived temporaries
 * (memory-replay.h). */
typedef enum ReportWeight {
        REPORT_WEIGHT_SAMPLES,
        REPORT_WEIGHT_ALLOCATED_BYTES,
        REPORT_WEIGHT_LEAKED_BYTES,
        REPORT_WEIGHT_TEMPORARY_BYTES,
        REPORT_WEIGHT_OFF_CPU_NS, /* blocked time in ns (`periscope.offcpu` frames, docs/off-cpu.md) */
} ReportWeight;

/* Whether w weighs allocations (any of the byte weights). */
static inline gboolean report_weight_is_memory(ReportWeight w) {
        return w == REPORT_WEIGHT_ALLOCATED_BYTES || w == REPORT_WEIGHT_LEAKED_BYTES ||
               w == REPORT_WEIGHT_TEMPORARY_BYTES;
}

/* One interval a thread spent off the CPU (a `periscope.offcpu` frame). */
typedef struct ReportOffCpu {
        int64_t time; /* the switch-out */
        int32_t pid, tid, cpu;
        guint32 thread; /* its name then: index into ReportProfile.threads */
        int state;      /* CAPTURE_OFF_CPU_BLOCKED or _RUNNABLE */
        guint64 duration_ns;
        guint32 n_addrs;  /* 0: no stack */
        guint64 addrs_at; /* its addresses' index into ReportProfile.off_cpu_addrs */
} ReportOffCpu;

/* What a recording with off-CPU profiles counted per thread
 * (`periscope.offcpu.stats`): short waits are only there. */
typedef struct ReportOffCpuThread {
        int32_t pid, tid;
        guint64 blocked, blocked_ns, blocked_short, blocked_short_ns, runnable, runnable_ns, stacks;
} ReportOffCpuThread;

/* One SAMPLE or ALLOCATION frame as it came: every ALLOCATION, and the
 * SAMPLEs when the loader is asked for them (REPORT_LOAD_EVENTS): what the
 * exports and the memory views need besides the stacks. */
typedef struct ReportEvent {
        int64_t time;
        int32_t pid, tid, cpu;
        gboolean allocation;
        int64_t size;   /* allocation: its size (0: a free); else 0 */
        uint64_t block; /* allocation: the block's address */
        guint32 n_addrs;
        const ReportRawStack *stack; /* a sample's interned stack, or NULL */
        guint64 addrs_at;            /* else: its addresses' index into ReportProfile.event_addrs */
        guint32 thread;              /* allocation of a memory-weighed profile: index into threads */
} ReportEvent;

/* A MARK frame (a span a program or the service marked). */
typedef struct ReportMark {
        int64_t time, duration;
        int32_t pid;
        char *group, *name, *message; /* as the capture says them (any bytes) */
} ReportMark;

/* A LOG frame, as the --marks view counts them. */
typedef struct ReportLog {
        int32_t pid;
        guint16 severity; /* GLogLevelFlags bits */
        char *domain;
} ReportLog;

/* A counter definition (a CTRDEF frame holds several), in file order. */
typedef struct ReportCounterDef {
        int32_t pid; /* -1: the system's */
        CaptureCounterDef def;
} ReportCounterDef;

/* A counter's value (a CTRSET frame holds several), in file order. */
typedef struct ReportCounterValue {
        int64_t time;
        CaptureCounterSetValue value;
} ReportCounterValue;

typedef enum ReportLoadFlags {
        REPORT_LOAD_PROGRESS = 1 << 0, /* a progress bar on a terminal */
        REPORT_LOAD_EVENTS = 1 << 1,   /* keep every sample and allocation in ReportProfile.events */
} ReportLoadFlags;

/* The capture model: everything the views of `periscope report` and
 * `periscope export` read, from one load of the capture. */
typedef struct ReportProfile {
        char *path;
        GHashTable *comms;        /* GINT_TO_POINTER(pid) → char* comm (basename of argv[0]) */
        GHashTable *cmdlines;     /* GINT_TO_POINTER(pid) → char* cmdline */
        GHashTable *maps;         /* GINT_TO_POINTER(pid) → GPtrArray of ReportMap*, in capture order */
        GHashTable *jit;          /* "pid:addr" → char* name */
        GHashTable *stacks;       /* ReportRawStack* (key, owned) → same */
        GHashTable *renames;      /* GINT_TO_POINTER(tid) → GArray of ReportRename, by time (thread-name frames) */
        GPtrArray *threads;       /* ReportThread*: the distinct (pid, tid, name) of the samples */
        GHashTable *thread_index; /* "pid/tid/name" → index + 1 into threads, while loading */
        GHashTable *thread_cache; /* GINT_TO_POINTER(tid) → the last name looked up, while it holds */
        GHashTable *pid_last;     /* GINT_TO_POINTER(pid) → int64_t*: the latest time a thread of pid was named */
        ReportWeight weight;
        guint64 n_samples; /* sum of the stacks' counts: samples, or allocated bytes */
        guint64 n_events;  /* SAMPLE frames (or allocations of the weighed fate) read */
        guint64 n_frames;
        SymbolTable *symbols;         /* NULL when the capture embeds none */
        char *symbols_error;          /* why there are no symbols, or NULL */
        char *load_warning;           /* the capture ended in a malformed frame, or NULL */
        int64_t start_time, end_time; /* the header's, capture clock */
        char *capture_time;           /* the header's ISO 8601 date */
        int64_t last_time;            /* the latest frame time read (at least start_time) */
        gboolean has_allocations;     /* an ALLOCATION frame was read */
        int load_error;               /* negative errno with load_warning, else 0 */
        int symbols_errno;            /* negative errno with symbols_error, else 0 */
        gboolean keep_samples;        /* REPORT_LOAD_EVENTS */
        GArray *events;               /* ReportEvent in file order: allocations, samples if REPORT_LOAD_EVENTS */
        GArray *event_addrs;          /* uint64_t: the events' addresses that no interned stack holds */
        GArray *marks;                /* ReportMark, in file order */
        GArray *logs;                 /* ReportLog, in file order */
        GArray *counter_defs;         /* ReportCounterDef, in file order */
        GArray *counter_values;       /* ReportCounterValue, in file order */
        GHashTable *container_labels; /* GINT_TO_POINTER(pid) → char* container or app label */
        GHashTable *parents;          /* GINT_TO_POINTER(child pid) → GINT_TO_POINTER(parent pid) (FORK frames) */
        GHashTable *pid_samples;      /* GINT_TO_POINTER(pid) → guint64* SAMPLE frames of pid */
        GArray *off_cpu;              /* ReportOffCpu, in file order (always loaded) */
        GArray *off_cpu_addrs;        /* uint64_t: their stacks' addresses */
        GArray *off_cpu_threads;      /* ReportOffCpuThread */
        CaptureStats *stats;          /* the last `periscope.stats` block (NULL: none) */
        guint64 off_cpu_unstacked_ns; /* with REPORT_WEIGHT_OFF_CPU_NS: blocked time without a stack */
} ReportProfile;

/* The addresses of an off-CPU interval (NULL without a stack). */
static inline const uint64_t *report_off_cpu_addrs(const ReportProfile *p, const ReportOffCpu *o) {
        return o->n_addrs ? &g_array_index(p->off_cpu_addrs, uint64_t, o->addrs_at) : NULL;
}

/* A `periscope.stats` value as a number (0 when absent). */
guint64 report_profile_stat(const ReportProfile *p, CaptureStat key);

/* For the views that print nothing of a damaged capture (--marks,
 * --counters, --timeline, --memory): -errno after saying why on stderr,
 * 0 when p was read whole. */
int report_profile_refuse_damaged(const ReportProfile *p);

/* "1.234 s", "12.3 ms", "45 us" (ns), newly allocated. */
char *report_format_ns(guint64 ns);

/* Reads the capture at path once, counting stacks by weight; shows a
 * progress bar on a terminal if progress. On failure returns NULL and sets
 * error; a capture cut short is loaded up to the bad frame and the reason
 * kept in load_warning. */
ReportProfile *report_profile_load(const char *path, ReportWeight weight, gboolean progress, GError **error);

/* The same with REPORT_LOAD_* flags. */
ReportProfile *report_profile_load_full(const char *path, ReportWeight weight, ReportLoadFlags flags, GError **error);

/* The addresses of e (innermost first, with context markers); NULL when it
 * has none (a sample whose callchain was empty). */
static inline const uint64_t *report_event_addrs(const ReportProfile *p, const ReportEvent *e) {
        if (e->stack)
                return e->stack->addrs;
        return e->n_addrs ? &g_array_index(p->event_addrs, uint64_t, e->addrs_at) : NULL;
}

/* Counts p's stacks by another memory weight (p weighs allocations too),
 * from the allocations the model holds. */
void report_profile_reweigh(ReportProfile *p, ReportWeight weight);

/* The unit of the profile's counts, singular or plural for n ("sample",
 * "bytes"...). */
const char *report_profile_unit(const ReportProfile *p, guint64 n);

/* Frees a profile; NULL is a no-op. */
void report_profile_free(ReportProfile *p);

/* The comm of pid ("" when the capture has no PROCESS frame for it). */
const char *report_profile_get_comm(const ReportProfile *p, int32_t pid);

/* The name thread tid of process pid had at time: its last thread-name
 * frame at or before time; else its process's main thread's name then;
 * else the process's comm; else "tid N". *ret_named tells whether a
 * thread-name frame of tid itself said it. */
const char *report_profile_thread_name(const ReportProfile *p, int32_t pid, int32_t tid, int64_t time,
                                       gboolean *ret_named);

/* Whether a thread-name frame says tid is a thread of pid. */
gboolean report_profile_thread_of(const ReportProfile *p, int32_t tid, int32_t pid);

/* The index into p->threads of (pid, tid) named name at time. */
guint32 report_profile_thread_at(ReportProfile *p, int32_t pid, int32_t tid, int64_t time);

/* The latest MAP of pid containing addr, or NULL. */
const ReportMap *report_profile_find_map(const ReportProfile *p, int32_t pid, uint64_t addr);

/* JIT-ed function name of addr in pid, or NULL. */
const char *report_profile_find_jit(const ReportProfile *p, int32_t pid, uint64_t addr);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportProfile, report_profile_free)
