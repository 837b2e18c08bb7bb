/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-fd.h: the capture fd a client hands to Record() (or to
 * org.gnome.Sysprof3.Unwinder.Unwind): what it may be, and an fd of our own
 * to write it through without ever blocking the event loop. */
#pragma once

#include <systemd/sd-bus.h>

/* The fd must be something we can write a stream to: a regular file open
 * for writing without O_APPEND, or a pipe/socket. Else error says why
 * (org.periscope.Error.InvalidCapture) and a negative errno is returned. */
int capture_fd_check(int fd, sd_bus_error *error);

/* A non-blocking fd of our own for the capture writer (see capture-fd.c);
 * negative errno on failure. */
int capture_fd_for_writer(int fd);
