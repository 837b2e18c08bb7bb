/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.h: the perf layer's public header: perf_event_open per CPU or per task
 * (through the privileged perf opener where there is one),
 * the rings read in time order, record parsing and the spill that holds
 * records while the helper works, and why perf_event_open refused.
 * Other folders include this header only. */
#pragma once

#include "perf-diagnose.h"
#include "perf-events.h"
#include "perf-opener.h"
#include "perf-record.h"
#include "perf-regs.h"
#include "perf-spill.h"
