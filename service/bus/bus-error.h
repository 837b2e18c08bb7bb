/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-error.h: the one way a D-Bus method turns a negative errno into its
 * error reply (docs/ARCHITECTURE.md, "Errors and logging"). */
#pragma once

#include <systemd/sd-bus.h>

/* Sets error to name (an org.periscope.Error.* name of docs/dbus-api.md),
 * or when name is NULL to the name periscope_error_from_errno(r) gives, with
 * the message formatted from format, where %m is strerror(-r) (r is a
 * negative errno; a positive one is taken as its negation). Like
 * sd_bus_error_setf(), an error already set is kept, and the return value is
 * the negative errno the error stands for. */
int bus_error_set_errnof(sd_bus_error *error, const char *name, int r, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

/* The same for the reason a function below the bus gave with r (its
 * ret_why): the message is why, or strerror(-r) when why is NULL. */
int bus_error_set_why(sd_bus_error *error, const char *name, int r, const char *why);
