/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-log.h: what a sandboxed helper writes to its stderr, logged by
 * the daemon under the helper's own name. The helper's stderr is a pipe
 * (HelperClientConfig.stderr_sink); its lines become log messages with
 * its identifier ("periscope-helper", "periscope-debuginfod-fetch":
 * SYSLOG_IDENTIFIER= in the journal) and a prefix naming it, "uid UID:
 * helper pid PID: ", never lines in periscoped's name. A line is cut at HELPER_LOG_LINE_MAX bytes, control
 * characters become '?', and each helper may log HELPER_LOG_BURST lines per
 * HELPER_LOG_INTERVAL_USEC; the rest are counted and the count logged. */
#pragma once

#include <sys/types.h>
#include <systemd/sd-event.h>

#define HELPER_LOG_LINE_MAX 512
#define HELPER_LOG_BURST 20
#define HELPER_LOG_INTERVAL_USEC (10 * 1000000ULL)

/* Reads fd (non-blocking, taken) from the event loop until its end, the
 * helper's, and logs what comes; the reader frees itself then, or with
 * the event loop. On failure fd is closed and nothing is logged. */
int helper_log_adopt(sd_event *e, int fd, pid_t pid, uid_t owner, const char *identifier);
