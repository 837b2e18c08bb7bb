/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mapping-identity.h: the identity of each file a recording pinned, written
 * into the capture (a `periscope.file` frame, capture/file-identities.h) as
 * the mapping appears, beside its MAP frame: so a capture whose daemon died
 * before its symbol tables can still be named later by `periscope
 * symbolize`, from files checked to be the ones that were mapped. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "capture.h"
#include "process-maps.h"

/* Writes the identity of mapping's pinned file unless it is already in the
 * capture (again only when this mapping brings a build-id the first frame
 * lacked). Nothing for a mapping without a pinned file or for the vdso
 * (not a file on disk). 0 or negative errno from the writer. */
int mapping_identity_write(CaptureWriter *w, int64_t time, int cpu, pid_t pid, const ProcessMapping *mapping);
