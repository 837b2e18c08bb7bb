/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-callgraph.h: samples aggregated for `periscope report`: the call
 * tree from entry points down, self and total samples per function, and
 * callers/callees of a function. Built from a ReportProfile after the
 * --pid/--comm filters. */
#pragma once

#include <glib.h>

#include "report-labels.h"
#include "report-profile.h"

typedef struct ReportNode ReportNode;
struct ReportNode {
        guint label;   /* ReportLabels id; unused for the root */
        guint64 total; /* samples whose stack passes through this node */
        guint64 self;  /* samples whose stack ends here */
        ReportNode *parent;
        GPtrArray *children;  /* ReportNode*, sorted by total (desc) then label */
        GHashTable *by_label; /* label → child, while building */
};

typedef struct ReportFilter {
        GArray *pids;                 /* int32_t; empty = all */
        GArray *tids;                 /* int32_t threads; NULL or empty = all */
        char **comms;                 /* NULL-terminated; NULL = all */
        gboolean lines;               /* one frame per source line (see report_labels_new) */
        gboolean process_root;        /* the call tree starts with one "comm (pid N)" frame per process */
        gboolean folded_process_root; /* so do folded stacks (only when asked: machine output stays stable) */
        gboolean thread_root;         /* then one "name (tid N)" frame per thread, in the tree and folded stacks */
        GHashTable *groups;           /* pid → char* container label: a frame above the process; or NULL */
} ReportFilter;

/* Whether samples of pid pass the --pid/--comm filters of f (its name from
 * p's PROCESS frames). */
gboolean report_filter_match(const ReportProfile *p, const ReportFilter *f, int32_t pid);

/* Whether samples of thread tid of pid pass the --pid/--comm/--tid filters. */
gboolean report_filter_match_thread(const ReportProfile *p, const ReportFilter *f, int32_t pid, int32_t tid);

/* Whether f selects threads (--tid). */
static inline gboolean report_filter_has_tids(const ReportFilter *f) {
        return f->tids && f->tids->len > 0;
}

typedef struct ReportCallGraph {
        ReportLabels *labels;
        ReportNode *root;             /* all samples; children are entry points */
        guint64 n_samples;            /* after filtering */
        guint64 *self;                /* by label id */
        guint64 *total;               /* by label id, each sample counted once per function */
        GPtrArray *stacks;            /* ReportStack*: distinct resolved stacks */
        GHashTable *pids_seen;        /* pids with samples after filtering */
        const ReportProfile *profile; /* borrowed: must outlive the graph */
        gboolean process_root, folded_process_root, thread_root;
        GHashTable *groups;       /* borrowed, see ReportFilter */
        GHashTable *threads_seen; /* thread indices with samples after filtering */
} ReportCallGraph;

/* One distinct resolved stack (outermost first) of one process and its samples. */
typedef struct ReportStack {
        int32_t pid;
        guint32 thread; /* index into ReportProfile.threads: its thread under its name then */
        guint64 count;  /* samples, or bytes */
        guint64 events; /* samples, or allocations */
        guint n;
        guint ids[];
} ReportStack;

/* Aggregates the profile's samples that pass filter (progress bar on a
 * terminal if progress). The tree (root) has the grouping frames the filter
 * asks for; stacks, self and total never do. */
ReportCallGraph *report_callgraph_new(const ReportProfile *profile, const ReportFilter *filter, gboolean progress);
/* Frees the call graph and its labels; NULL is a no-op. */
void report_callgraph_free(ReportCallGraph *g);

/* The most grouping frames a stack gets. */
#define REPORT_MAX_ROOTS 3

/* The grouping frames above the stacks of pid's thread (an index into
 * ReportProfile.threads): container, process, thread, in the tree, or in
 * folded stacks if folded, as label ids into out; returns how many. */
guint report_callgraph_roots(ReportCallGraph *g, int32_t pid, guint32 thread, gboolean folded,
                             guint out[REPORT_MAX_ROOTS]);

/* "name (tid N)", printable: how reports and exports title a thread. */
char *report_thread_title(const ReportThread *t);

/* The unit of g's counts for n: "sample(s)" or "byte(s)". */
const char *report_callgraph_unit(const ReportCallGraph *g, guint64 n);

/* Label ids whose function or label equals name. */
GArray *report_callgraph_find(const ReportCallGraph *g, const char *name);

/* For the functions in targets: samples of each caller (the frame just
 * outside) or callee (just inside), each sample counted once per neighbour;
 * *ret_total gets the samples that contain a target. Keys are
 * GUINT_TO_POINTER(label id + 1), or NULL for "none" (the target is the entry
 * point, resp. the innermost frame: self time); values are guint64*. */
GHashTable *report_callgraph_neighbours(const ReportCallGraph *g, GArray *targets, gboolean callers,
                                        guint64 *ret_total);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportCallGraph, report_callgraph_free)
