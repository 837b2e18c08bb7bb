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

/* A fresh SOCK_SEQPACKET pair for one case: what the helper and its client talk over. */
static void socket_pair(int sv[2]) {
        MUST(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ? -errno : 0);
}

static void close_pair(int sv[2]) {
        close(sv[0]);
        close(sv[1]);
}

/* After a refused message, the next good one still gets through. */
static void expect_channel_works(int a, int b) {
        HelperMessage m;
        CHECK(helper_send_message(a, HELPER_MSG_IDENTIFY, 1, NULL, 0, NULL, 0) == 0);
        CHECK(helper_receive_message(b, 0, &m) == 0);
        helper_message_clear(&m);
}

TEST(inline_round_trip) {
        int sv[2];
        socket_pair(sv);
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_PAYLOAD);
        helper_put_u32(&w, 7);
        helper_put_u64(&w, 0x1122334455667788ull);
        helper_put_string(&w, "main", HELPER_MAX_NAME);
        CHECK(!w.failed);
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(helper_send_message(sv[0], HELPER_MSG_SYMBOLIZE, 42, w.data, w.size, &fd, 1) == 0);
        close(fd);
        helper_writer_done(&w);

        HelperMessage m;
        CHECK(helper_receive_message(sv[1], 2, &m) == 0);
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
        close_pair(sv);
}

TEST(memfd_round_trip) {
        int sv[2];
        socket_pair(sv);
        size_t n = 3 * HELPER_MAX_INLINE_PAYLOAD + 5;
        uint8_t *big = malloc(n);
        MUST(big ? 0 : -ENOMEM);
        for (size_t i = 0; i < n; i++)
                big[i] = (uint8_t) (i * 31);
        CHECK(helper_send_message(sv[1], HELPER_MSG_SYMBOLIZE_REPLY, 9, big, n, NULL, 0) == 0);
        HelperMessage m;
        CHECK(helper_receive_message(sv[0], 0, &m) == 0);
        CHECK(m.payload_size == n && memcmp(m.payload, big, n) == 0);
        CHECK(m.n_fds == 0);
        helper_message_clear(&m);
        free(big);
        close_pair(sv);
}

TEST(unsealed_memfd_rejected) {
        int sv[2];
        socket_pair(sv);
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
        CHECK(sendmsg(sv[0], &mh, 0) == (ssize_t) sizeof hdr);
        close(fd);
        HelperMessage m;
        CHECK(helper_receive_message(sv[1], 0, &m) == -EBADMSG);
        close_pair(sv);
}

TEST(wrong_magic_rejected) {
        int sv[2];
        socket_pair(sv);
        HelperMessage m;
        uint8_t junk[HELPER_HEADER_SIZE] = "not a header....";
        CHECK(send(sv[0], junk, sizeof junk, 0) == sizeof junk);
        CHECK(helper_receive_message(sv[1], 0, &m) == -EBADMSG);
        expect_channel_works(sv[0], sv[1]);
        close_pair(sv);
}

/* Sends the first len bytes of a header whose payload_size says 100 (of
 * a datagram that holds 4 more bytes, or less than a header): refused. */
static void expect_lying_header_refused(size_t len) {
        int sv[2];
        socket_pair(sv);
        HelperMessageHeader h = { .magic = HELPER_PROTOCOL_MAGIC,
                                  .type = HELPER_MSG_IDENTIFY_REPLY,
                                  .payload_size = 100 };
        uint8_t hdr[HELPER_HEADER_SIZE + 4] = {};
        helper_header_encode(hdr, &h);
        HelperMessage m;
        CHECK(send(sv[0], hdr, len, 0) == (ssize_t) len);
        CHECK(helper_receive_message(sv[1], 0, &m) == -EBADMSG);
        expect_channel_works(sv[0], sv[1]);
        close_pair(sv);
}

TEST(payload_size_mismatch_rejected) {
        expect_lying_header_refused(HELPER_HEADER_SIZE + 4);
}

TEST(short_datagram_rejected) {
        expect_lying_header_refused(3);
}

TEST(oversized_datagram_rejected) {
        int sv[2];
        socket_pair(sv);
        HelperMessage m;
        /* truncated by the receive buffer, and refused */
        size_t n = HELPER_HEADER_SIZE + HELPER_MAX_INLINE_PAYLOAD + 100;
        uint8_t *big = calloc(1, n);
        MUST(big ? 0 : -ENOMEM);
        HelperMessageHeader h = { .magic = HELPER_PROTOCOL_MAGIC,
                                  .type = HELPER_MSG_IDENTIFY_REPLY,
                                  .payload_size = (uint32_t) (n - HELPER_HEADER_SIZE) };
        helper_header_encode(big, &h);
        CHECK(send(sv[0], big, n, 0) == (ssize_t) n);
        CHECK(helper_receive_message(sv[1], 0, &m) == -EBADMSG);
        free(big);
        expect_channel_works(sv[0], sv[1]);
        close_pair(sv);
}

TEST(string_cut_at_character_boundary) {
        HelperWriter w;
        helper_writer_init(&w, 1024);
        helper_put_string(&w, "caf\xc3\xa9", 4); /* cut before the 2-byte é, not inside it */
        HelperReader r;
        helper_reader_init(&r, w.data, w.size);
        char *s = helper_get_string(&r, 16, true);
        CHECK(s && strcmp(s, "caf") == 0);
        free(s);
        helper_writer_done(&w);
}

TEST(utf8_validation) {
        const char *bad[] = { "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\xff" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                CHECK(!helper_utf8_valid(bad[i], strlen(bad[i])));
        CHECK(helper_utf8_valid("\xe2\x82\xac \xf0\x9f\x98\x80", 8));
}

TEST(hostile_string_lengths) {
        /* a length beyond the limit, a NUL inside, an overrun */
        HelperReader r;
        uint8_t buf[] = { 5, 0, 0, 0, 'a', 'b', 0, 'd', 'e' };
        helper_reader_init(&r, buf, sizeof buf);
        CHECK(helper_get_string(&r, 4, true) == NULL && r.failed);
        helper_reader_init(&r, buf, sizeof buf);
        CHECK(helper_get_string(&r, 16, true) == NULL && r.failed);
        uint8_t over[] = { 0xff, 0xff, 0xff, 0x7f, 'x' };
        helper_reader_init(&r, over, sizeof over);
        CHECK(helper_get_string(&r, UINT32_MAX, false) == NULL && r.failed);
}

TEST(writer_limit) {
        /* the writer refuses to grow beyond its limit */
        HelperWriter w;
        helper_writer_init(&w, 8);
        helper_put_u64(&w, 1);
        CHECK(!w.failed);
        helper_put_u8(&w, 1);
        CHECK(w.failed);
        helper_writer_done(&w);
}

TEST(crc32) {
        /* the standard check value of CRC-32/ISO-HDLC */
        CHECK(helper_crc32(0, "123456789", 9) == 0xcbf43926u);
        CHECK(helper_crc32(helper_crc32(0, "1234", 4), "56789", 5) == 0xcbf43926u);
}

TEST(peer_close_reported) {
        int sv[2];
        socket_pair(sv);
        close(sv[0]);
        HelperMessage m;
        CHECK(helper_receive_message(sv[1], 0, &m) == -ECONNRESET);
        close(sv[1]);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
