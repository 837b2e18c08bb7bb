/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* machine.h: Periscope's machine extension of the capture format: one
 * METADATA frame `periscope.machine` at the start of a recording, whose
 * text is `key=value` lines, among them `arch=` the architecture the
 * samples were taken on, as `uname -m` names it (`x86_64`, `aarch64`)
 * (docs/capture-format.md). Addresses, registers and the files a capture
 * names are that machine's, whatever machine reads it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "capture-types.h"
#include "capture-writer.h"

#define CAPTURE_MACHINE_ID "periscope.machine"

/* The architecture this program was built for ("x86_64", "aarch64", …). */
const char *capture_host_arch(void);

/* Writes the machine frame of this host. */
int capture_writer_add_machine(CaptureWriter *w, int64_t time);

/* Whether f is a machine frame: 1 with its `arch` copied into buf (NUL-
 * terminated, at most size - 1 bytes; "" when the frame names none), 0 if it
 * is another frame (buf untouched), -EBADMSG if the architecture is not a
 * short word of [a-z0-9_] (buf ""). */
int capture_frame_get_arch(const CaptureFrame *f, char *buf, size_t size);
