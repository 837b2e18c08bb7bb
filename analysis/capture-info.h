/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-info.h: the model of `periscope info FILE`, a summary of a
 * capture: duration, frames by type, processes and their threads, samples
 * and what the recorder counted (periscope.stats), counters, marks,
 * embedded files and whether the symbol tables load; and its text. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capture.h"

#define CAPTURE_INFO_CMDLINE_SHOWN 160 /* characters of a command line printed without full */

typedef struct CaptureInfo CaptureInfo;

/* Reads reader's frames from where it stands into *ret. A capture that
 * cannot be read to its end still gives a model of the frames before:
 * capture_info_get_read_error() says why reading stopped. 0 or -ENOMEM. */
int capture_info_load(CaptureReader *reader, CaptureInfo **ret);
/* The negative errno reading stopped with (the reader's message says
 * more), 0 when the capture was read to its end. */
int capture_info_get_read_error(const CaptureInfo *info);
/* The summary, as `periscope info` prints it (full: command lines whole). */
void capture_info_print(FILE *out, const CaptureInfo *info, const char *path, CaptureReader *reader, bool full);
void capture_info_free(CaptureInfo *info);

/* The SAMPLE frames from where reader stands up to the last whole frame
 * (what a capture cut short holds), without the rest of the model. */
uint64_t capture_info_count_samples(CaptureReader *reader);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureInfo, capture_info_free)
