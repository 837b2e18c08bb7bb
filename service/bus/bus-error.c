/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-error.c: an error reply from a negative errno and a message. */
#include "bus-error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "basic.h"
#include "protocol.h"

int bus_error_set_errnof(sd_bus_error *error, const char *name, int r, const char *format, ...) {
        if (!name)
                name = periscope_error_from_errno(r < 0 ? r : -r);
        va_list ap;
        va_start(ap, format);
        errno = r < 0 ? -r : r; /* what %m prints */
        _cleanup_free_ char *message = strdup_vprintf(format, ap);
        va_end(ap);
        if (!message)
                return sd_bus_error_set_errno(error, ENOMEM);
        return sd_bus_error_set(error, name, message);
}

int bus_error_set_why(sd_bus_error *error, const char *name, int r, const char *why) {
        if (why)
                return bus_error_set_errnof(error, name, r, "%s", why);
        return bus_error_set_errnof(error, name, r, "%m");
}
