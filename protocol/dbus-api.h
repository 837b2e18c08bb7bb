/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dbus-api.h: the names of Periscope's D-Bus API (docs/dbus-api.md), shared
 * by periscoped and `periscope`: the bus name, objects, interfaces, the
 * polkit action, and the error names periscoped replies with. Messages
 * always say what to do. */
#pragma once

#define PROFILER_NAME "org.periscope.Profiler1"
#define PROFILER_PATH "/org/periscope/Profiler1"
#define PROFILER_INTERFACE "org.periscope.Profiler1"
#define RECORDING_INTERFACE "org.periscope.Recording1"
#define RECORDING_PATH_PREFIX "/org/periscope/Recording"

#define PERISCOPE_POLKIT_ACTION "org.periscope.profile-system"
/* Recording one's own processes where kernel.perf_event_paranoid >= 3
 * (Debian's kernels): the kernel gives perf to no user there. */
#define PERISCOPE_POLKIT_ACTION_OWN "org.periscope.profile-own"

#define PERISCOPE_ERROR_INVALID_OPTION "org.periscope.Error.InvalidOption"
#define PERISCOPE_ERROR_NO_SUCH_PROCESS "org.periscope.Error.NoSuchProcess"
#define PERISCOPE_ERROR_NOT_AUTHORIZED "org.periscope.Error.NotAuthorized"
#define PERISCOPE_ERROR_NOT_SUPPORTED "org.periscope.Error.NotSupported"
#define PERISCOPE_ERROR_INVALID_CAPTURE "org.periscope.Error.InvalidCapture"
#define PERISCOPE_ERROR_PERF_FAILED "org.periscope.Error.PerfFailed"
#define PERISCOPE_ERROR_LIMIT_EXCEEDED "org.periscope.Error.LimitExceeded"
#define PERISCOPE_ERROR_FAILED "org.periscope.Error.Failed"

/* The org.periscope.Error.* name for a negative errno that needs no more
 * context to be named: -ESRCH NoSuchProcess, -EPERM/-EACCES NotAuthorized,
 * -EINVAL InvalidOption, -EOPNOTSUPP NotSupported, -EBADF InvalidCapture,
 * -EDQUOT LimitExceeded (a per-user limit), anything else Failed. */
const char *periscope_error_from_errno(int error);
