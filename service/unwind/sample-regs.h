/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-regs.h: a sample's user registers as the unwinder takes them,
 * shared by the DWARF path (sample-unwind.h) and the frame-pointer path's
 * leaf decision (sample-stack.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "perf.h"
#include "process.h"
#include "unwinder.h"

/* Whether s carries the 64-bit user registers the unwinder asked for. */
bool sample_unwind_has_regs(const PerfSample *s);

/* The unwinder's registers of a sample (the sampled architecture is the
 * daemon's: aarch64 adds LR and the PAC mask of sample_unwind_pac_mask(),
 * docs/unwinding.md). maps may be NULL (then the 48-bit mask). */
bool sample_unwind_regs(const PerfSample *s, const ProcessMaps *maps, UnwindRegs *ret);

/* The aarch64 PAC bits of pid's return addresses: above a 48-bit address
 * space, or above a 52-bit one when pid has code mapped above 2^48. */
uint64_t sample_unwind_pac_mask(const ProcessMaps *maps, int32_t pid);
