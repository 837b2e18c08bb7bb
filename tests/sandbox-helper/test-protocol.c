/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-protocol.c: the helper wire format round-trips over a real
 * SOCK_SEQPACKET socketpair (inline and sealed-memfd payloads, passed fds)
 * and rejects what a hostile peer could send. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic.h"
#include "protocol.h"

#include "test-check.h"

static void test_inline_round_trip(int a, int b) {
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_PAYLOAD);
        helper_put_u32(&w, 7);
        helper_put_u64(&w, 0x1122334455667788ull);
        helper_put_string(&w, "main", HELPER_MAX_NAME);
        CHECK(!w.failed);
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(helper_send_message(a, HELPER_MSG_SYMBOLIZE, 42, w.data, w.size, &fd, 1) == 0);
        close(fd);
        helper_writer_done(&w);

        HelperMessage m;
        CHECK(helper_receive_message(b, 2, &m) == 0);
        CHECK(m.header.type == HELPER_MSG_SYMBOLIZE);
        CHECK(m.header.request_id == 42);
        CHECK(m.n_fds == 1);
        HelperReader r;
        helper_reader_init(&r, m.payload, m.payload_size);
        CHECK(helper_get_u32(&r) == 7);
        CHECK(helper_get_u64(&r) == 0x1122334455667788ull);
        char *s = helper_get_string(&r, HELPER_MAX_NAME, true);
        CHECK(s && strcmp(s, "main") == 0);
        free(s);
        CHECK(helper_reader_finished(&r));
        helper_message_clear(&m);
}

static void test_memfd_round_trip(int a, int b) {
        size_t n = 3 * HELPER_MAX_INLINE_PAYLOAD + 5;
        uint8_t *big = malloc(n);
        CHECK(big);
        for (size_t i = 0; i < n; i++)
                big[i] = (uint8_t) (i * 31);
        CHECK(helper_send_message(a, HELPER_MSG_SYMBOLIZE_REPLY, 9, big, n, NULL, 0) == 0);
        HelperMessage m;
        CHECK(helper_receive_message(b, 0, &m) == 0);
        CHECK(m.payload_size == n && memcmp(m.payload, big, n) == 0);
        CHECK(m.n_fds == 0);
        helper_message_clear(&m);
        free(big);
}

static void test_unsealed_memfd_rejected(int a, int b) {
        /* a peer that claims a memfd payload but passes a plain file */
        uint8_t hdr[HELPER_HEADER_SIZE];
        HelperMessageHeader h = { .magic = HELPER_PROTOCOL_MAGIC, .type = HELPER_MSG_SYMBOLIZE_REPLY,
                                  .flags = HELPER_FLAG_PAYLOAD_MEMFD, .payload_size = 0 };
        helper_header_encode(hdr, &h);
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        struct iovec iov = { hdr, sizeof hdr };
        union { struct cmsghdr al; uint8_t buf[CMSG_SPACE(sizeof(int))]; } c = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS; cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        CHECK(sendmsg(a, &mh, 0) == (ssize_t) sizeof hdr);
        close(fd);
        HelperMessage m;
        CHECK(helper_receive_message(b, 0, &m) == -EBADMSG);
}

static void test_bad_headers(int a, int b) {
        HelperMessage m;
        /* wrong magic */
        uint8_t junk[HELPER_HEADER_SIZE] = "not a header....";
        CHECK(send(a, junk, sizeof junk, 0) == sizeof junk);
        CHECK(helper_receive_message(b, 0, &m) == -EBADMSG);
        /* payload size that does not match the datagram */
        HelperMessageHeader h = { .magic = HELPER_PROTOCOL_MAGIC, .type = HELPER_MSG_IDENTIFY_REPLY, .payload_size = 100 };
        uint8_t hdr[HELPER_HEADER_SIZE + 4] = {};
        helper_header_encode(hdr, &h);
        CHECK(send(a, hdr, sizeof hdr, 0) == sizeof hdr);
        CHECK(helper_receive_message(b, 0, &m) == -EBADMSG);
        /* too short */
        CHECK(send(a, hdr, 3, 0) == 3);
        CHECK(helper_receive_message(b, 0, &m) == -EBADMSG);
        /* oversized datagram is truncated and refused */
        size_t n = HELPER_HEADER_SIZE + HELPER_MAX_INLINE_PAYLOAD + 100;
        uint8_t *big = calloc(1, n);
        h.payload_size = (uint32_t) (n - HELPER_HEADER_SIZE);
        helper_header_encode(big, &h);
        CHECK(send(a, big, n, 0) == (ssize_t) n);
        CHECK(helper_receive_message(b, 0, &m) == -EBADMSG);
        free(big);
        /* the channel still works afterwards */
        CHECK(helper_send_message(a, HELPER_MSG_IDENTIFY, 1, NULL, 0, NULL, 0) == 0);
        CHECK(helper_receive_message(b, 0, &m) == 0);
        helper_message_clear(&m);
}

static void test_strings(void) {
        HelperWriter w;
        helper_writer_init(&w, 1024);
        helper_put_string(&w, "caf\xc3\xa9", 4); /* cut before the 2-byte é, not inside it */
        HelperReader r;
        helper_reader_init(&r, w.data, w.size);
        char *s = helper_get_string(&r, 16, true);
        CHECK(s && strcmp(s, "caf") == 0);
        free(s);
        helper_writer_done(&w);

        const char *bad[] = { "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\xff" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                CHECK(!helper_utf8_valid(bad[i], strlen(bad[i])));
        CHECK(helper_utf8_valid("\xe2\x82\xac \xf0\x9f\x98\x80", 8));

        /* a length beyond the limit, a NUL inside, an overrun */
        uint8_t buf[] = { 5, 0, 0, 0, 'a', 'b', 0, 'd', 'e' };
        helper_reader_init(&r, buf, sizeof buf);
        CHECK(helper_get_string(&r, 4, true) == NULL && r.failed);
        helper_reader_init(&r, buf, sizeof buf);
        CHECK(helper_get_string(&r, 16, true) == NULL && r.failed);
        uint8_t over[] = { 0xff, 0xff, 0xff, 0x7f, 'x' };
        helper_reader_init(&r, over, sizeof over);
        CHECK(helper_get_string(&r, UINT32_MAX, false) == NULL && r.failed);

        /* the writer refuses to grow beyond its limit */
        helper_writer_init(&w, 8);
        helper_put_u64(&w, 1);
        CHECK(!w.failed);
        helper_put_u8(&w, 1);
        CHECK(w.failed);
        helper_writer_done(&w);
}

static void test_crc32(void) {
        /* the standard check value of CRC-32/ISO-HDLC */
        CHECK(helper_crc32(0, "123456789", 9) == 0xcbf43926u);
        CHECK(helper_crc32(helper_crc32(0, "1234", 4), "56789", 5) == 0xcbf43926u);
}

int main(void) {
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
        test_inline_round_trip(sv[0], sv[1]);
        test_memfd_round_trip(sv[1], sv[0]);
        test_unsealed_memfd_rejected(sv[0], sv[1]);
        test_bad_headers(sv[0], sv[1]);
        test_strings();
        test_crc32();
        /* peer closing is reported as such */
        close(sv[0]);
        HelperMessage m;
        CHECK(helper_receive_message(sv[1], 0, &m) == -ECONNRESET);
        close(sv[1]);
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        printf("protocol: ok\n");
        return 0;
}
