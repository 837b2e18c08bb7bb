/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-control.h: what a recording does with the control fd (Sysprof's
 * collector protocol, control-ring.c) and the system counters (counters.c):
 * started with the recording, drained and closed before its post-stop
 * stages so ring addresses get symbolized too; and what its D-Bus face's
 * OpenControlFd and AddMark ask of it. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recording.h"

/* Starts the control server and the counters (option `counters`). On
 * failure *error says why. */
int recording_control_start(Recording *r, RecordingError *error);

/* At the recording's end: the last counter sample (the counters go), and
 * the control server stops answering; what its rings hold is drained by
 * the "control-rings" stage (RecordingStageInput.control). */
void recording_control_close(Recording *r);

/* Before the statistics: drains what is still in the rings (nothing, after
 * the control-rings stage), writes the control statistics (METADATA
 * "periscope.control") and frees the server. */
void recording_control_stop(Recording *r);

/* Frees what is left (a recording that failed to start). */
void recording_control_free(Recording *r);

/* Notes the code addresses of a SAMPLE or ALLOCATION frame a program wrote
 * (control ring, trace fd) so they get symbolized at Stop like those of perf
 * samples; kernel addresses are not a program's to vouch for. userdata is
 * the Recording (a ControlAddressFunc). */
void recording_note_program_addresses(int32_t pid, const uint64_t *addrs, size_t n, void *userdata);

/* A new control fd for a program to inherit. -ESTALE once the recording no
 * longer records, -EMFILE when it serves CONTROL_MAX_PEERS already. */
int recording_open_control_fd(Recording *r, int *ret_fd);

/* Writes a mark (checked by the caller: time within the recording, sizes
 * within the capture's fields). -ESTALE once the recording no longer records. */
int recording_add_mark(Recording *r, int64_t time, int64_t duration, pid_t pid, const char *group, const char *name,
                       const char *message);
