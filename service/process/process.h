/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process.h: the process layer's public header: what the recorded processes
 * are (their mappings in time, pinned files, ownership, the vdso), attaching
 * events to them, writing their frames and following those that join a
 * container.
 * Other folders include this header only. */
#pragma once

#include "container-follow.h"
#include "container-frames.h"
#include "jit-files.h"
#include "pinned-files.h"
#include "process-attach.h"
#include "process-frames.h"
#include "process-maps.h"
#include "process-ownership.h"
#include "thread-table.h"
#include "vdso-image.h"
