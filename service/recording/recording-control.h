/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-control.h: what a recording's D-Bus face's OpenControlFd and
 * AddMark ask of it (the control part, recording-control.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recording.h"

/* A new control fd for a program to inherit. -ESTALE once the recording no
 * longer records, -EMFILE when it serves CONTROL_MAX_PEERS already. */
int recording_open_control_fd(Recording *r, int *ret_fd);

/* Writes a mark (checked by the caller: time within the recording, sizes
 * within the capture's fields). -ESTALE once the recording no longer records. */
int recording_add_mark(Recording *r, int64_t time, int64_t duration, pid_t pid, const char *group, const char *name,
                       const char *message);
