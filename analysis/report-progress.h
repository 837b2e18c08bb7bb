/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-progress.h: a one-line progress bar on stderr while `periscope
 * report` loads a large capture; silent when stderr is not a terminal. */
#pragma once

#include <glib.h>

typedef struct ReportProgress ReportProgress;

/* Starts a bar labelled what; enabled only if stderr is a terminal and
 * enabled is TRUE. */
ReportProgress *report_progress_new(const char *what, gboolean enabled);

/* Updates to done/total (redrawn at most every 100 ms). */
void report_progress_update(ReportProgress *p, guint64 done, guint64 total);

/* Erases the bar and frees it; NULL is a no-op. */
void report_progress_free(ReportProgress *p);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportProgress, report_progress_free)
