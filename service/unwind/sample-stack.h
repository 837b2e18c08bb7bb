/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-stack.h: the frame-pointer stack of one decoded perf sample, as
 * the address list of a SAMPLE frame (innermost first, with PERF_CONTEXT_*
 * markers, as Sysprof stores them): the kernel's callchain, filtered, with
 * aarch64's leaf fixed up. The unwinder falls back to it
 * (sample-unwind.h); which path a sample takes is sample-stack-choose.h's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf.h"
#include "process.h"
#include "unwind-tables.h"

/* The frame-pointer path of sample_stack_build() with the leaf decision of
 * the tables (NULL: none): writes *ret_n addresses, or returns false when
 * the leaf's table is still compiling (asked for) and not `force`. */
bool sample_stack_build_fp(UnwindTables *tables, uint32_t owner, const ProcessMaps *maps, bool kernel, bool force,
                           const PerfSample *s, uint64_t *addrs, size_t max, size_t *ret_n);
