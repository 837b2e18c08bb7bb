/* recording-trace.h: a recording's trace fds (Sysprof's SYSPROF_TRACE_FD,
 * service/control/trace-fd.c): handed out while it records
 * (Recording1.OpenTraceFd), merged into its capture when it ends, after the
 * last drain and before its post-stop stages, so the addresses in their
 * SAMPLE and ALLOCATION frames get symbolized too. */
#pragma once

#include "recording.h"

/* A new trace fd for a program to inherit. -ESTALE once the recording no
 * longer records, -EMFILE past TRACE_MAX_FDS. */
int recording_open_trace_fd(Recording *r, int *ret_fd);

/* Merges every trace fd's frames that pass the checks: pids of the
 * recording's processes, times inside it. A program's bad frames only
 * count as refused; a failure to write the capture is logged, as the
 * control rings' are. */
void recording_trace_merge(Recording *r);

/* Counts for the statistics (all 0 when no trace fd was opened). */
void recording_trace_get_stats(const Recording *r, TraceFdStats *ret);
