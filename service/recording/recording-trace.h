/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-trace.h: a recording's trace fds (Sysprof's SYSPROF_TRACE_FD,
 * service/control/trace-fd.c), handed out while it records
 * (Recording1.OpenTraceFd); the trace part merges them when it ends. */
#pragma once

#include "recording.h"

/* A new trace fd for a program to inherit. -ESTALE once the recording no
 * longer records, -EMFILE past TRACE_MAX_FDS. */
int recording_open_trace_fd(Recording *r, int *ret_fd);
