/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-labels.h: names of report frames. A frame is one function at one
 * level of a stack, after inline chains are expanded; its label is what the
 * report prints ("square (inlined)", "do_syscall_64 [kernel]",
 * "libfoo.so+0x1a2b", "[unresolved: helper failed] libfoo.so"). Labels are
 * interned: equal labels share an id. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "report-profile.h"

#define REPORT_LABEL_INLINED 0x1u
#define REPORT_LABEL_KERNEL 0x2u
#define REPORT_LABEL_UNRESOLVED 0x4u /* no name: "[unresolved …]", module+0xoff or raw hex */
#define REPORT_LABEL_ROOT 0x8u       /* a grouping frame above the stacks: a process or a container */

typedef struct ReportLabel {
        char *text;     /* the printed label */
        char *function; /* the function name alone (what --callers matches) */
        guint flags;    /* REPORT_LABEL_* */
} ReportLabel;

typedef struct ReportLabels ReportLabels;

/* A copy of s safe to print and to put in XML: valid UTF-8 (bad bytes become
 * U+FFFD) with control characters replaced by '?'. Names come from captures,
 * which may be hostile. */
char *report_printable(const char *s);

/* with_lines: frames with a known source line are labelled
 * "function at file:line", one frame per line instead of per function. */
ReportLabels *report_labels_new(const ReportProfile *profile, gboolean with_lines);

/* Frees the labels and the address cache; NULL is a no-op. */
void report_labels_free(ReportLabels *l);

/* Number of labels and the label of an id. */
guint report_labels_count(const ReportLabels *l);
const ReportLabel *report_labels_get(const ReportLabels *l, guint id);

/* The id of a grouping frame (REPORT_LABEL_ROOT) labelled text, e.g.
 * "app [4242]": never a function, so hottest tables and --callers skip it. */
guint report_labels_root(ReportLabels *l, const char *text);

/* What each address of a raw stack (innermost first, with perf's context
 * markers) is: a user or kernel frame, or a marker that is no frame. */
#define REPORT_ADDRESS_USER 0
#define REPORT_ADDRESS_KERNEL 1
#define REPORT_ADDRESS_MARKER 2
void report_stack_contexts(const uint64_t *addrs, guint32 n, guint8 *out);

/* Appends to out (guint ids) the frames of one raw stack, outermost first:
 * each address expanded to its inline chain, context markers applied
 * (addresses after CAPTURE_CONTEXT_KERNEL are kernel frames). */
void report_labels_resolve_stack(ReportLabels *l, const ReportRawStack *stack, GArray *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportLabels, report_labels_free)
