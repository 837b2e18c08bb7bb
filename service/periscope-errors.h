/* periscope-errors.h: the D-Bus error names periscoped replies with
 * (documented in docs/dbus-api.md). Messages always say what to do. */
#pragma once

#define PERISCOPE_ERROR_INVALID_OPTION "org.periscope.Error.InvalidOption"
#define PERISCOPE_ERROR_NO_SUCH_PROCESS "org.periscope.Error.NoSuchProcess"
#define PERISCOPE_ERROR_NOT_AUTHORIZED "org.periscope.Error.NotAuthorized"
#define PERISCOPE_ERROR_NOT_SUPPORTED "org.periscope.Error.NotSupported"
#define PERISCOPE_ERROR_INVALID_CAPTURE "org.periscope.Error.InvalidCapture"
#define PERISCOPE_ERROR_PERF_FAILED "org.periscope.Error.PerfFailed"
#define PERISCOPE_ERROR_FAILED "org.periscope.Error.Failed"
