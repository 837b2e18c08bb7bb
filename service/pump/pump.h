/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pump.h: the sample pump's public header: perf rings in, parsed samples
 * with their stacks, mappings, comms and task events out to a sink; the
 * spill, the unwinder's queue and the slices inside. Other folders include
 * this header only. */
#pragma once

#include "sample-pump.h"
