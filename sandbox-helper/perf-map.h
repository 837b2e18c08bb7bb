/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-map.h: reading a perf map file (/tmp/perf-PID.map), the text format
 * node/V8 (--perf-basic-prof), the JVM's perf-map-agent, Python 3.12
 * (-X perf), LuaJIT and .NET write: one "START SIZE name" line per piece
 * of generated code, START and SIZE in hex (with or without 0x). */
#pragma once

#include "jit-entries.h"

/* Reads the perf map open at fd (never by path) into out, in file order:
 * at most HELPER_JIT_MAX_FILE_BYTES bytes and HELPER_JIT_MAX_ENTRIES
 * entries; lines that do not parse, or are longer than HELPER_JIT_MAX_LINE,
 * are counted in out->refused and skipped. A last line without a newline
 * (a file still being written) is read too. Returns 0 or -errno. */
int perf_map_read(int fd, JitEntries *out);
