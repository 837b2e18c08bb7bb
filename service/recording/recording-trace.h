/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-trace.h: a recording's trace fds (Sysprof's SYSPROF_TRACE_FD,
 * service/control/trace-fd.c): handed out while it records
 * (Recording1.OpenTraceFd), merged into its capture when it ends, after the
 * last drain, by the first post-stop stage, so the addresses in their
 * SAMPLE and ALLOCATION frames get symbolized too. */
#pragma once

#include "recording.h"

/* A new trace fd for a program to inherit. -ESTALE once the recording no
 * longer records, -EMFILE past TRACE_MAX_FDS. */
int recording_open_trace_fd(Recording *r, int *ret_fd);

/* What the trace-fds stage (recording-stages.c) merges when the recording
 * ends: its trace fds (NULL when none were opened or it failed) and, in
 * *ret, the checks their frames must pass: pids of the recording's
 * processes, times inside it (up to now). A program's bad frames only
 * count as refused. */
TraceFds *recording_trace_merge_input(Recording *r, TraceMerge *ret);

/* Counts for the statistics (all 0 when no trace fd was opened). */
void recording_trace_get_stats(const Recording *r, TraceFdStats *ret);
