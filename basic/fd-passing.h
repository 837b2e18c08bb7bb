/* fd-passing.h: one byte with at most one file descriptor over a Unix
 * socket (SCM_RIGHTS), the handshake of the control fd, of `periscope
 * record`'s start gate and of the memory collector. Header-only: the
 * collector, which runs inside profiled programs, compiles it with its own
 * flags. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Sends byte with fd attached (no fd when fd < 0), retrying EINTR.
 * flags: MSG_NOSIGNAL, MSG_DONTWAIT... Returns 0 or a negative errno. */
static inline int fd_send_with_byte(int sock, char byte, int fd, int flags) {
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
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
                if (k == 1)
                        return 0;
                if (k < 0 && errno == EINTR)
                        continue;
                return k < 0 ? -errno : -EIO;
        }
}

/* Receives one byte and the fd that came with it (*ret_fd = -1 when none
 * did; anything but exactly one fd is closed and counts as none), retrying
 * EINTR. flags: MSG_CMSG_CLOEXEC unless the fd is meant to be inherited.
 * Returns 0, -EPIPE at end of stream, or a negative errno. */
static inline int fd_receive_with_byte(int sock, int flags, char *ret_byte, int *ret_fd) {
        *ret_fd = -1;
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
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
        if (k != 1)
                return -EPIPE;
        int fd = -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                        int got;
                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (fd < 0 && n == 1)
                                fd = got;
                        else
                                close(got);
                }
        }
        if (ret_byte)
                *ret_byte = byte;
        *ret_fd = fd;
        return 0;
}
