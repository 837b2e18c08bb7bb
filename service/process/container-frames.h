/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-frames.h: what container or sandbox a process of a recording
 * belongs to, written into the capture once per process (see
 * docs/containers.md and docs/capture-format.md):
 *  - FILE_CHUNK "periscope:container" (frame pid = the process): key=value
 *    lines engine, id, name, image, runtime, owner-uid, rootless;
 *  - FILE_CHUNK "/.flatpak-info" and "/run/.containerenv" as the process saw them;
 *  - OVERLAY frames for the Podman layers (layer 0 = the container's own,
 *    src = host diff directory, dst = "/"). */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "capture.h"
#include "resolver.h"

/* Writes pid's description the first time pid is seen by r; host processes
 * get nothing. 0, or a negative errno from the writer. */
int container_frames_write(CaptureWriter *w, Resolver *r, int64_t time, pid_t pid);
