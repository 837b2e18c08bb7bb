/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-control-ring.c: libFuzzer target for the control-ring server
 * (service/control/control-ring.c): what a profiled program writes into the
 * ring it got over SYSPROF_CONTROL_FD is untrusted. Each input gets a new
 * server, a control socket and a real ring (requested with CreatRing and
 * received over SCM_RIGHTS, as a program does); the input is written into
 * the ring as the program's frames, the writer position is set, and the
 * server drains it into a capture, then stops (a last drain).
 * Input: byte 0 bit 0 set: the next 4 bytes are the raw writer position
 * (positions that lie); otherwise the position is the end of the frames. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "control-ring.h"
#include "fd-passing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Asks the server for a ring as a program would; the ring's memfd or -1. */
static int request_ring(sd_event *e, int sock) {
        if (send(sock, CONTROL_REQUEST, CONTROL_REQUEST_LEN, MSG_NOSIGNAL) != CONTROL_REQUEST_LEN)
                abort();
        for (int i = 0; i < 100; i++) {
                if (sd_event_run(e, 0) < 0)
                        abort();
                char byte;
                int fd;
                int r = fd_receive_with_byte(sock, MSG_CMSG_CLOEXEC | MSG_DONTWAIT, &byte, &fd);
                if (r == 0)
                        return fd;
                if (r != -EAGAIN)
                        abort();
        }
        abort(); /* the server never answered */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        sd_event *e = NULL;
        if (sd_event_new(&e) < 0)
                abort();
        int out = memfd_create("fuzz-capture", MFD_CLOEXEC);
        CaptureWriter *w = NULL;
        if (out < 0 || capture_writer_new_fd(out, now_monotonic_ns(), &w) < 0)
                abort();
        CounterIdAllocator ids = { 0 };
        ControlServer *s = NULL;
        int sock = -1;
        if (control_server_new(e, w, &ids, &s) < 0 || control_server_open_fd(s, &sock) < 0)
                abort();
        int ring = request_ring(e, sock);
        if (ring < 0)
                abort(); /* the first ring of a new server is never refused */

        long page = sysconf(_SC_PAGESIZE);
        size_t map_size = (size_t) page + CONTROL_RING_DATA_SIZE;
        uint8_t *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0);
        if (map == MAP_FAILED)
                abort();
        uint32_t *header = (uint32_t *) map; /* head, tail, offset, size */
        uint32_t tail;
        const uint8_t *frames = data;
        size_t n = size;
        if (n > 0 && (data[0] & 1) && n >= 5) {
                memcpy(&tail, data + 1, sizeof(tail));
                frames += 5;
                n -= 5;
        } else {
                if (n > 0) {
                        frames++;
                        n--;
                }
                if (n > CONTROL_RING_DATA_SIZE - 8)
                        n = CONTROL_RING_DATA_SIZE - 8;
                tail = (uint32_t) (n & ~(size_t) 7);
        }
        if (n > CONTROL_RING_DATA_SIZE)
                n = CONTROL_RING_DATA_SIZE;
        memcpy(map + header[2], frames, n);
        __atomic_store_n(&header[1], tail, __ATOMIC_RELEASE);

        (void) control_server_drain(s);
        /* the program hangs up: its rings get a last drain and go */
        close(sock);
        for (int i = 0; i < 4; i++)
                (void) sd_event_run(e, 0);
        control_server_free(s);
        munmap(map, map_size);
        close(ring);
        capture_writer_free(w);
        close(out);
        sd_event_unref(e);
        return 0;
}
