/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dbus-api.c: the one errno -> org.periscope.Error.* mapping (dbus-api.h). */
#include "dbus-api.h"

#include <errno.h>

const char *periscope_error_from_errno(int error) {
        switch (error) {
        case -ESRCH:
                return PERISCOPE_ERROR_NO_SUCH_PROCESS;
        case -EPERM:
        case -EACCES:
                return PERISCOPE_ERROR_NOT_AUTHORIZED;
        case -EINVAL:
                return PERISCOPE_ERROR_INVALID_OPTION;
        case -EOPNOTSUPP:
                return PERISCOPE_ERROR_NOT_SUPPORTED;
        case -EBADF:
                return PERISCOPE_ERROR_INVALID_CAPTURE;
        case -EDQUOT:
                return PERISCOPE_ERROR_LIMIT_EXCEEDED;
        default:
                return PERISCOPE_ERROR_FAILED;
        }
}
