/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake-helper: stands in for periscope-helper (run through the real bwrap
 * launcher) and misbehaves on purpose, chosen by the first bytes of the file
 * it is sent: HANG, CRASH, EXIT, GARBAGE, WRONGID, WRONGTYPE, BADUTF8, COUNT,
 * FRAMES, HUGE, UNSEALED, EXTRA, NOSTATUS; anything else gets a valid answer
 * (one frame "ok_function" per address). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol.h"

static void put_frame(HelperWriter *w, const char *name, size_t name_len) {
        helper_put_u8(w, HELPER_ADDRESS_OK);
        helper_put_u8(w, 1);
        helper_put_u16(w, 0);
        helper_put_u8(w, 0);
        helper_put_u8(w, HELPER_SOURCE_SYMTAB);
        helper_put_u16(w, 0);
        helper_put_u32(w, 0);
        helper_put_u32(w, 0);
        helper_put_u64(w, 0);
        helper_put_u32(w, (uint32_t) name_len);
        helper_put_bytes(w, name, name_len);
        helper_put_u32(w, 0);
}

int main(int argc, char **argv) {
        int sock = 3;
        for (;;) {
                HelperMessage m;
                int r = helper_receive_message(sock, HELPER_MAX_REQUEST_FDS, &m);
                if (r < 0)
                        return r == -ECONNRESET ? 0 : 1;
                char mode[17] = "";
                if (m.n_fds > 0 && pread(m.fds[0], mode, 16, 0) < 0)
                        return 1;
                mode[strcspn(mode, "\n")] = '\0';
                HelperReader rd;
                helper_reader_init(&rd, m.payload, m.payload_size);
                uint32_t count = 1;
                if (m.header.type == HELPER_MSG_SYMBOLIZE) {
                        helper_get_u32(&rd);
                        count = helper_get_u32(&rd);
                }
                HelperWriter w;
                helper_writer_init(&w, HELPER_MAX_PAYLOAD);
                uint32_t id = m.header.request_id;
                uint16_t type = m.header.type | HELPER_MSG_REPLY;
                helper_put_u32(&w, HELPER_SOURCE_SYMTAB);
                helper_put_u32(&w, strcmp(mode, "COUNT") == 0 ? count + 1 : count);
                for (uint32_t i = 0; i < count; i++) {
                        if (strcmp(mode, "BADUTF8") == 0)
                                put_frame(&w, "bad\xff\xfe", 5);
                        else if (strcmp(mode, "HUGE") == 0) {
                                char big[HELPER_MAX_NAME + 10];
                                memset(big, 'a', sizeof big);
                                put_frame(&w, big, sizeof big);
                        } else if (strcmp(mode, "FRAMES") == 0) {
                                helper_put_u8(&w, HELPER_ADDRESS_OK);
                                helper_put_u8(&w, 200);
                                helper_put_u16(&w, 0);
                        } else if (strcmp(mode, "NOSTATUS") == 0) {
                                helper_put_u8(&w, 77);
                                helper_put_u8(&w, 0);
                                helper_put_u16(&w, 0);
                        } else
                                put_frame(&w, "ok_function", 11);
                }
                if (strcmp(mode, "EXTRA") == 0)
                        helper_put_u8(&w, 0);
                if (strcmp(mode, "HANG") == 0)
                        for (;;)
                                pause();
                if (strcmp(mode, "CRASH") == 0)
                        raise(SIGSEGV);
                if (strcmp(mode, "EXIT") == 0)
                        _exit(3);
                if (strcmp(mode, "WRONGID") == 0)
                        id++;
                if (strcmp(mode, "WRONGTYPE") == 0)
                        type = HELPER_MSG_IDENTIFY_REPLY;
                if (strcmp(mode, "GARBAGE") == 0) {
                        if (send(sock, "hello, garbage!!garbage", 23, 0) < 0)
                                return 1;
                } else if (strcmp(mode, "UNSEALED") == 0) {
                        int fd = memfd_create("x", MFD_CLOEXEC);
                        if (fd < 0 || write(fd, w.data, w.size) != (ssize_t) w.size)
                                return 1;
                        uint8_t hdr[HELPER_HEADER_SIZE];
                        HelperMessageHeader h = { HELPER_PROTOCOL_MAGIC, type, HELPER_FLAG_PAYLOAD_MEMFD, id, (uint32_t) w.size };
                        helper_header_encode(hdr, &h);
                        struct iovec iov = { hdr, sizeof hdr };
                        union { struct cmsghdr a; uint8_t b[CMSG_SPACE(sizeof(int))]; } c = {};
                        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof c.b };
                        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                        cm->cmsg_level = SOL_SOCKET;
                        cm->cmsg_type = SCM_RIGHTS;
                        cm->cmsg_len = CMSG_LEN(sizeof(int));
                        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
                        if (sendmsg(sock, &mh, 0) < 0)
                                return 1;
                        close(fd);
                } else if (helper_send_message(sock, type, id, w.data, w.size, NULL, 0) < 0)
                        return 1;
                helper_writer_done(&w);
                helper_message_clear(&m);
        }
}
