/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collector-client.c: a program instrumented with Debian's real
 * libsysprof-capture-4 collector (and, in the hostile modes, a program that
 * speaks the ring protocol by hand and breaks its rules). The control tests
 * run it under SYSPROF_CONTROL_FD and compare the capture with what it says
 * on stdout it did:
 *   pid PID START_NS
 *   thread TID
 *   counters ID_A ID_B
 *   end END_NS
 *
 * Modes:
 *   threads T M    T threads, each M marks, M/10 logs, M/10 counter values
 *                  and M/10 allocations; message texts carry "tid=T seq=S"
 *   rate N         N marks paced at 100 000 per second from one thread
 *   hostile        one connection, rings that lie in every way we know of
 *   noread         sends 1000 CreatRing requests and never reads a reply
 *   badrequest     sends a request that is not CreatRing
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <sysprof-capture.h>

#include "basic.h"

#define TEST_GROUP "periscope-test"

static int gettid_(void) {
        return (int) syscall(SYS_gettid);
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned counter_a, counter_b;
static int n_marks;

static int fake_backtrace(SysprofCaptureAddress *addrs, unsigned int n, void *data) {
        const uint64_t *v = data;
        if (n < 3)
                return 0;
        addrs[0] = v[0];
        addrs[1] = v[1];
        addrs[2] = 0x4242;
        return 3;
}

static void *thread_main(void *arg) {
        (void) arg;
        int tid = gettid_();
        pthread_mutex_lock(&out_lock);
        printf("thread %d\n", tid);
        fflush(stdout);
        pthread_mutex_unlock(&out_lock);

        for (int i = 0; i < n_marks; i++) {
                char msg[64];
                snprintf(msg, sizeof(msg), "tid=%d seq=%d", tid, i);
                sysprof_collector_mark(SYSPROF_CAPTURE_CURRENT_TIME, 1000 + i, TEST_GROUP, "mark", msg);
                if (i % 10 == 0) {
                        sysprof_collector_log(32 /* G_LOG_LEVEL_MESSAGE */, TEST_GROUP, msg);
                        unsigned ids[2] = { counter_a, counter_b };
                        SysprofCaptureCounterValue vals[2];
                        vals[0].v64 = (int64_t) tid * 1000000 + i;
                        vals[1].vdbl = i / 10.0;
                        sysprof_collector_set_counters(ids, vals, 2);
                        uint64_t bt[2] = { (uint64_t) tid, (uint64_t) i };
                        sysprof_collector_allocate(0x10000 + (uint64_t) i, i + 1, fake_backtrace, bt);
                }
        }
        return NULL;
}

static int run_threads(int n_threads, int marks) {
        n_marks = marks;
        counter_a = sysprof_collector_request_counters(2);
        counter_b = counter_a + 1;
        SysprofCaptureCounter defs[2];
        memset(defs, 0, sizeof(defs));
        snprintf(defs[0].category, sizeof(defs[0].category), "%s", TEST_GROUP);
        snprintf(defs[0].name, sizeof(defs[0].name), "counter-a");
        snprintf(defs[0].description, sizeof(defs[0].description), "tid * 1e6 + seq");
        defs[0].id = counter_a;
        defs[0].type = SYSPROF_CAPTURE_COUNTER_INT64;
        snprintf(defs[1].category, sizeof(defs[1].category), "%s", TEST_GROUP);
        snprintf(defs[1].name, sizeof(defs[1].name), "counter-b");
        snprintf(defs[1].description, sizeof(defs[1].description), "seq / 10");
        defs[1].id = counter_b;
        defs[1].type = SYSPROF_CAPTURE_COUNTER_DOUBLE;
        sysprof_collector_define_counters(defs, 2);
        printf("counters %u %u\n", counter_a, counter_b);
        fflush(stdout);

        pthread_t th[64];
        if (n_threads > 64)
                n_threads = 64;
        for (int i = 0; i < n_threads; i++)
                if (pthread_create(&th[i], NULL, thread_main, NULL) != 0)
                        return 1;
        for (int i = 0; i < n_threads; i++)
                pthread_join(th[i], NULL);
        return 0;
}

static int run_rate(int n) {
        int tid = gettid_();
        printf("thread %d\n", tid);
        fflush(stdout);
        int64_t start = now_monotonic_ns();
        for (int i = 0; i < n; i++) {
                /* 100 000 per second: mark i is due at start + 10 µs * i. */
                int64_t due = start + (int64_t) i * 10000;
                while (now_monotonic_ns() < due)
                        ;
                char msg[64];
                snprintf(msg, sizeof(msg), "tid=%d seq=%d", tid, i);
                sysprof_collector_mark(SYSPROF_CAPTURE_CURRENT_TIME, 0, TEST_GROUP, "rate", msg);
        }
        return 0;
}

/* ---- the hostile side: the protocol by hand ---- */

typedef struct Ring {
        volatile uint32_t *header; /* head, tail, offset, size */
        uint8_t *data;
        uint32_t size;
        int fd;
} Ring;

static int control_fd(void) {
        const char *s = getenv("SYSPROF_CONTROL_FD");
        return s ? atoi(s) : -1;
}

static int receive_ring(int sock, Ring *ring) {
        if (fd_receive_with_byte(sock, MSG_CMSG_CLOEXEC, NULL, &ring->fd) < 0 || ring->fd < 0)
                return -1;
        off_t total = lseek(ring->fd, 0, SEEK_END);
        long page = sysconf(_SC_PAGESIZE);
        uint8_t *map = mmap(NULL, (size_t) total, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
        if (map == MAP_FAILED)
                return -1;
        ring->header = (volatile uint32_t *) map;
        ring->data = map + page;
        ring->size = (uint32_t) (total - page);
        return 0;
}

static int request_ring(int sock, Ring *ring) {
        if (send(sock, "CreatRing\0", 10, MSG_NOSIGNAL) != 10)
                return -1;
        return receive_ring(sock, ring);
}

/* Writes len bytes at the ring's tail (no wrap needed: tests stay small). */
static void ring_put(Ring *r, const void *p, uint32_t len) {
        uint32_t tail = r->header[1];
        memcpy(r->data + tail, p, len);
        __atomic_store_n(&r->header[1], tail + len, __ATOMIC_RELEASE);
}

static void put_mark(Ring *r, const char *name) {
        uint8_t f[104];
        memset(f, 0, sizeof(f));
        uint16_t len = sizeof(f);
        memcpy(f, &len, 2);
        int32_t pid = getpid();
        memcpy(f + 4, &pid, 4);
        int64_t t = now_monotonic_ns();
        memcpy(f + 8, &t, 8);
        f[16] = 10; /* MARK */
        snprintf((char *) f + 32, 24, "%s", TEST_GROUP);
        snprintf((char *) f + 56, 40, "%s", name);
        snprintf((char *) f + 96, 8, "ok");
        ring_put(r, f, sizeof(f));
}

static int run_hostile(void) {
        int sock = control_fd();
        if (sock < 0)
                return 1;
        Ring r[8];
        for (int i = 0; i < 8; i++)
                if (request_ring(sock, &r[i]) < 0) {
                        fprintf(stderr, "hostile: no ring %d\n", i);
                        return 1;
                }

        /* 0: garbage bytes that decode as a frame header with a bad length. */
        uint8_t junk[256];
        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (uint8_t) (i * 37 + 11);
        ring_put(&r[0], junk, sizeof(junk));

        /* 1: a writer position outside the ring. */
        put_mark(&r[1], "before-lie");
        r[1].header[1] = r[1].size + 64;

        /* 2: a frame that claims more bytes than were written. */
        uint8_t big[32] = { 0 };
        uint16_t biglen = 4096;
        memcpy(big, &biglen, 2);
        big[16] = 10;
        ring_put(&r[2], big, sizeof(big));

        /* 3: a MARK whose message has no terminator. */
        uint8_t mark[104];
        memset(mark, 'x', sizeof(mark));
        uint16_t ml = sizeof(mark);
        memcpy(mark, &ml, 2);
        mark[16] = 10;
        ring_put(&r[3], mark, sizeof(mark));

        /* 4: frames of types Sysprof 3.46 cannot read (16 TRACE) and one it can
         * but programs may not send (MAP): skipped, then a good mark. */
        uint8_t trace[48] = { 0 };
        uint16_t tl = sizeof(trace);
        memcpy(trace, &tl, 2);
        trace[16] = 16;
        ring_put(&r[4], trace, sizeof(trace));
        uint8_t map[64] = { 0 };
        uint16_t mapl = sizeof(map);
        memcpy(map, &mapl, 2);
        map[16] = 3;
        snprintf((char *) map + 56, 8, "/evil");
        ring_put(&r[4], map, sizeof(map));
        put_mark(&r[4], "after-skipped");

        /* 5: try to shrink the ring under the reader (must be refused by the seal). */
        if (ftruncate(r[5].fd, 0) == 0)
                printf("shrink allowed\n");
        else
                printf("shrink refused\n");
        put_mark(&r[5], "after-shrink");

        /* 6: a writer position that is not 8-aligned; 7: lies about head only (harmless). */
        r[6].header[1] = 13;
        r[7].header[0] = 12345;
        put_mark(&r[7], "head-lie");
        fflush(stdout);

        /* Give the server a few drain periods before exiting. */
        usleep(200000);
        return 0;
}

static int run_noread(void) {
        int sock = control_fd();
        if (sock < 0)
                return 1;
        int sent = 0;
        for (int i = 0; i < 1000; i++) {
                if (send(sock, "CreatRing\0", 10, MSG_NOSIGNAL | MSG_DONTWAIT) != 10)
                        break;
                sent++;
        }
        printf("sent %d\n", sent);
        fflush(stdout);
        usleep(300000);
        return 0;
}

static int run_badrequest(void) {
        int sock = control_fd();
        if (sock < 0)
                return 1;
        if (send(sock, "GimmeRoot\0", 10, MSG_NOSIGNAL) != 10)
                return 1;
        usleep(100000);
        return 0;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: collector-client MODE [ARGS]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("pid %d %" PRId64 "\n", getpid(), now_monotonic_ns());
        int r;
        if (strcmp(argv[1], "threads") == 0 && argc == 4)
                r = run_threads(atoi(argv[2]), atoi(argv[3]));
        else if (strcmp(argv[1], "rate") == 0 && argc == 3)
                r = run_rate(atoi(argv[2]));
        else if (strcmp(argv[1], "hostile") == 0)
                r = run_hostile();
        else if (strcmp(argv[1], "noread") == 0)
                r = run_noread();
        else if (strcmp(argv[1], "badrequest") == 0)
                r = run_badrequest();
        else {
                fprintf(stderr, "collector-client: unknown mode %s\n", argv[1]);
                return 2;
        }
        printf("end %" PRId64 "\n", now_monotonic_ns());
        return r;
}
