/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-attach.h: opens the sampling events of one process, every thread
 * of it (inherit follows what they create later), such that they sample the
 * process that was authorized and no other. A pidfd holds the process from
 * before the ownership check until every event is open: while it has not
 * been reaped its pid cannot be reused. A thread id that belongs to another
 * process once its events are open, or a process that ended while
 * they were opened (its pid free for reuse), gets its events revoked. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "perf.h"

/* Attaches events to pid's threads. With check_owner, pid must be owner's
 * (process_owned_by(): its uid, or its user namespace's), before and again
 * after its events were opened (they start only then; a set-id exec meanwhile
 * gets them revoked). Returns 0,
 * -ESRCH when the process is gone (nothing of it is sampled), -EPERM when it
 * is not owner's (*ret_not_owner set, if given), or another negative errno
 * from perf_event_open (EPERM and EACCES too: perf_explain_open_error()
 * says why). */
int process_attach_events(PerfEvents *events, pid_t pid, bool check_owner, uid_t owner, bool *ret_not_owner);
