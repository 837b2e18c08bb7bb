/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-fd.c: checking a capture fd a client passed, and an fd of our
 * own to write it through. */
#include "capture-fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-error.h"
#include "protocol.h"

/* The capture fd must be something we can write a stream to: a regular file
 * open for writing at offset 0 without O_APPEND, or a pipe/socket. */
int capture_fd_check(int fd, sd_bus_error *error) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_INVALID_CAPTURE, -errno,
                                            "the capture fd cannot be used: %m");
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_INVALID_CAPTURE, -errno,
                                            "the capture fd cannot be used: %m");
        if ((flags & O_ACCMODE) != O_WRONLY && (flags & O_ACCMODE) != O_RDWR)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_CAPTURE,
                                         "the capture fd is not open for writing; open the file with O_WRONLY");
        if (S_ISREG(st.st_mode)) {
                if (flags & O_APPEND)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_CAPTURE,
                                                 "the capture file is open with O_APPEND; open it with O_TRUNC instead");
                return 0;
        }
        if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
                return 0;
        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_CAPTURE,
                                 "the capture fd must be a regular file, a pipe or a socket");
}

/* An fd for the capture writer whose writes never block the event loop: a
 * pipe is reopened through /proc/self/fd with O_NONBLOCK (a description of
 * our own, the client's stays as it is); a socket, or a pipe the daemon may
 * not reopen, is switched to O_NONBLOCK (sockets cannot be reopened). A reader that stalls then costs that
 * recording a write error after the writer's bounded wait, not the service. */
int capture_fd_for_writer(int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISFIFO(st.st_mode)) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                int nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                if (nfd >= 0)
                        return nfd;
                /* Another user's pipe (0600), and periscoped keeps no
                 * CAP_DAC_OVERRIDE: the client's description goes
                 * non-blocking instead, as a socket's does. */
                if (errno != EACCES && errno != EPERM)
                        return -errno;
        }
        if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) {
                int flags = fcntl(fd, F_GETFL);
                if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                        return -errno;
        }
        int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        return nfd < 0 ? -errno : nfd;
}

