/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fd-passing.h: one byte (or one small datagram) with at most one file
 * descriptor over a Unix socket (SCM_RIGHTS): the handshake of the control
 * fd, of `periscope record`'s start gate, of the memory collector, and the
 * requests and answers of the opener with a caller's rights and of the perf
 * opener (service/perf/perf-opener.h). Header-only: the
 * collector, which runs inside profiled programs, compiles it with its own
 * flags. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Sends size bytes (one datagram on a SOCK_SEQPACKET socket) with fd
 * attached (no fd when fd < 0), retrying EINTR. flags: MSG_NOSIGNAL,
 * MSG_DONTWAIT... Returns 0, -EIO for a short send, or a negative errno. */
static inline int fd_send_with_data(int sock, const void *data, size_t size, int fd, int flags) {
        struct iovec iov = { .iov_base = (void *) data, .iov_len = size };
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control;
        memset(&control, 0, sizeof(control));
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (fd >= 0) {
                msg.msg_control = &control;
                msg.msg_controllen = sizeof(control.buf);
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        for (;;) {
                ssize_t k = sendmsg(sock, &msg, flags);
                if (k >= 0 && (size_t) k == size)
                        return 0;
                if (k < 0 && errno == EINTR)
                        continue;
                return k < 0 ? -errno : -EIO;
        }
}

/* Sends byte with fd attached (no fd when fd < 0), as fd_send_with_data(). */
static inline int fd_send_with_byte(int sock, char byte, int fd, int flags) {
        return fd_send_with_data(sock, &byte, 1, fd, flags);
}

/* Receives at most size bytes (one datagram) and the fd that came with
 * them (*ret_fd = -1 when none did; anything but exactly one fd is closed
 * and counts as none), retrying EINTR. flags: MSG_CMSG_CLOEXEC unless the
 * fd is meant to be inherited. Returns the bytes received (0 at end of
 * stream) or a negative errno. */
static inline ssize_t fd_receive_with_data(int sock, void *buf, size_t size, int flags, int *ret_fd) {
        *ret_fd = -1;
        struct iovec iov = { .iov_base = buf, .iov_len = size };
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                              .msg_controllen = sizeof(control.buf) };
        ssize_t k;
        do
                k = recvmsg(sock, &msg, flags);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                        int got;
                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (*ret_fd < 0 && n == 1)
                                *ret_fd = got;
                        else
                                close(got);
                }
        }
        return k;
}

/* Receives one byte and the fd that came with it (*ret_fd = -1 when none
 * did; anything but exactly one fd is closed and counts as none), retrying
 * EINTR. flags: MSG_CMSG_CLOEXEC unless the fd is meant to be inherited.
 * Returns 0, -EPIPE at end of stream, or a negative errno. */
static inline int fd_receive_with_byte(int sock, int flags, char *ret_byte, int *ret_fd) {
        char byte;
        ssize_t k = fd_receive_with_data(sock, &byte, 1, flags, ret_fd);
        if (k < 0)
                return (int) k;
        if (k != 1) {
                if (*ret_fd >= 0)
                        close(*ret_fd);
                *ret_fd = -1;
                return -EPIPE;
        }
        if (ret_byte)
                *ret_byte = byte;
        return 0;
}

/* Forks a child joined to its parent by a SOCK_SEQPACKET socketpair (the
 * openers that hold a privilege or another identity for the daemon).
 * Returns the child's pid in the parent and 0 in the child, each with its
 * own end in *ret_sock (the other end closed), or a negative errno with
 * nothing left open. */
static inline int fork_with_socket(int *ret_sock) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(pair[0]);
                close(pair[1]);
                return r;
        }
        close(pair[pid == 0 ? 0 : 1]);
        *ret_sock = pair[pid == 0 ? 1 : 0];
        return pid;
}
