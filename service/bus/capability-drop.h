/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capability-drop.h: a root periscoped keeps only the capabilities it uses
 * (docs/security.md lists each with its reason), so a daemon started by hand
 * or by an init without a CapabilityBoundingSet= is as limited as the
 * systemd unit makes it. CAP_SYS_ADMIN, which Debian's kernels want for
 * perf_event_open at perf_event_paranoid 3, is never the daemon's: only
 * its perf opener (service/perf/perf-opener.h), forked before this drop,
 * keeps it, and with it CAP_PERFMON. */
#pragma once

#include <stdbool.h>

/* When running with any capability: removes every capability but the
 * daemon's own from the bounding set (so programs it starts, bwrap
 * included, cannot regain them), and from the permitted, effective,
 * inheritable and ambient sets. With perf_opener (the perf opener runs and
 * opens every event), CAP_PERFMON goes too. 0, or a negative errno. */
int capability_drop_unused(bool perf_opener);
