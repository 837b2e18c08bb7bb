/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analysis.h: analysis/'s public header: a capture read offline, without
 * the daemon or the profiled binaries: the report's model (stacks, times,
 * threads, labels) and its views, the export formats, the memory
 * profiler's replay and the capture opener the commands share. Uses
 * capture/, helper-client/, basic/ and GLib; never D-Bus
 * (docs/ARCHITECTURE.md). */
#pragma once

#include "capture-autoptr.h"
#include "capture-info.h"
#include "capture-open.h"
#include "capture-symbolize.h"
#include "addr-key.h"
#include "crash-symbols.h"
#include "dump-frame.h"
#include "export-formats.h"
#include "memory-replay.h"
#include "report-callgraph.h"
#include "report-containers.h"
#include "report-diff.h"
#include "report-extras.h"
#include "report-flamegraph.h"
#include "report-labels.h"
#include "report-memory-stacks.h"
#include "report-memory.h"
#include "report-modes.h"
#include "report-off-cpu.h"
#include "report-profile.h"
#include "report-text.h"
