/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thread-names.h: Periscope's thread-name extension of the capture format:
 * one METADATA frame `periscope.thread` per name a thread took (snapshot,
 * prctl(PR_SET_NAME)/pthread_setname_np, exec), with the process in the
 * frame's pid and the time of the rename (docs/capture-format.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "capture-types.h"
#include "capture-writer.h"

#define CAPTURE_THREAD_NAME_ID "periscope.thread"
#define CAPTURE_THREAD_NAME_MAX 64 /* bytes of a name kept (comm holds 15) */

/* Writes that thread tid of process pid is called name from time on
 * (exec: the name came with an exec). */
int capture_writer_add_thread_name(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid, const char *name,
                                   bool exec);

/* Whether f is a thread-name frame: 1 with the tid, the name (into f's text)
 * and its length, 0 if it is another frame, -EBADMSG if it is malformed. */
int capture_frame_get_thread_name(const CaptureFrame *f, int32_t *ret_tid, const char **ret_name, size_t *ret_len,
                                  bool *ret_exec);
