/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-open.h: opening a capture file for a `periscope` subcommand, with
 * the error printed the same way by every command. */
#pragma once

#include "capture.h"

/* Opens path for reading; on failure prints "periscope COMMAND: why" to stderr
 * and returns the negative errno (*ret stays NULL). */
int cli_capture_open(const char *command, const char *path, CaptureReader **ret);

/* Why reading stopped with error k: the reader's message, else strerror. */
const char *cli_capture_read_error(CaptureReader *r, int k);
