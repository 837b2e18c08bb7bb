/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control.h: the control layer's public header: the control fd's ring that
 * traced programs write marks, logs, counters and allocations into, and the
 * trace fds whose whole captures are merged at the end.
 * Other folders include this header only. */
#pragma once

#include "control-ring.h"
#include "frame-copy.h"
#include "trace-fd.h"
