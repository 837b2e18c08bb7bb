/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control-ring.c: serves CreatRing requests on control sockets and drains
 * the resulting memfd rings into the capture, trusting nothing in them. */
#include "control-ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"

#define RING_END_TYPE 0xFF
#define LOG_WARNING_SEVERITY 16 /* G_LOG_LEVEL_WARNING, as Sysprof shows it */
#define LOG_DOMAIN "periscope"

/* The header page, as both sides see it. */
typedef struct RingHeader {
        uint32_t head;
        uint32_t tail;
        uint32_t offset;
        uint32_t size;
} RingHeader;

typedef struct ControlPeer ControlPeer;

typedef struct ControlRing {
        ControlServer *server;
        ControlPeer *peer;
        uint8_t *map;           /* header page + data + data again */
        size_t map_size;
        uint32_t head;          /* our reader position; the copy in the header is only for the writer */
        int32_t last_pid;       /* pid of the last good frame, for messages */
        unsigned serial;
        bool charged;           /* counted by the server's ring budget */
        bool closing;           /* its socket or the server closed: freed once drained */
        bool has_final_tail;    /* the server closed: drained up to final_tail, not the writer's tail */
        uint32_t final_tail;
        struct ControlRing *prev, *next;
} ControlRing;

struct ControlPeer {
        ControlServer *server;
        int fd;
        sd_event_source *io;
        uint8_t request[CONTROL_REQUEST_LEN];
        size_t request_len;
        unsigned n_rings;
        struct ControlPeer *prev, *next;
};

struct ControlServer {
        sd_event *event;
        CaptureWriter *writer;
        FrameCopier *copier;        /* into the capture, counter ids remapped */
        CaptureReader *decoder;     /* checks frames with the capture reader's rules */
        uint8_t decoder_header[CAPTURE_FILE_HEADER_SIZE];
        sd_event_source *timer;
        sd_event_source *more;      /* defer: the next slice of a drain cut short */
        ControlDrained drained;     /* control_server_drain_async(): told once every ring is drained */
        void *drained_userdata;
        ControlPeer *peers;
        ControlRing *rings;
        unsigned n_peers, n_rings, next_serial;
        size_t page_size;
        bool stopped;
        ControlRingBudget ring_budget;
        void *ring_budget_userdata;
        ControlServerStats stats;
        uint8_t frame[CAPTURE_FRAME_MAX + 8]; /* private copy of the frame being checked */
};

#define LIST_PREPEND(head, item)                     \
        do {                                         \
                (item)->prev = NULL;                 \
                (item)->next = (head);               \
                if (head)                            \
                        (head)->prev = (item);       \
                (head) = (item);                     \
        } while (0)

#define LIST_REMOVE(head, item)                      \
        do {                                         \
                if ((item)->prev)                    \
                        (item)->prev->next = (item)->next; \
                else                                 \
                        (head) = (item)->next;       \
                if ((item)->next)                    \
                        (item)->next->prev = (item)->prev; \
                (item)->prev = (item)->next = NULL;  \
        } while (0)

static void note_write_error(ControlServer *s, int r) {
        if (r < 0 && s->stats.write_error == 0)
                s->stats.write_error = r;
}

__attribute__((format(printf, 3, 4))) static void capture_log(ControlServer *s, int32_t pid, const char *fmt, ...) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        note_write_error(s, capture_writer_add_log(s->writer, now_monotonic_ns(), -1, pid, LOG_WARNING_SEVERITY, LOG_DOMAIN, msg));
}

/* ---- rings ---- */

/* (Re)starts the one-shot drain timer; it stays off while there are no rings. */
static void timer_arm(ControlServer *s, uint64_t usec) {
        if (!s->timer || s->stopped)
                return;
        int enabled = SD_EVENT_OFF;
        if (sd_event_source_get_enabled(s->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(s->timer, usec) >= 0)
                sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

static void ring_free(ControlRing *ring) {
        if (!ring)
                return;
        ControlServer *s = ring->server;
        LIST_REMOVE(s->rings, ring);
        s->n_rings--;
        if (ring->peer)
                ring->peer->n_rings--;
        if (ring->map)
                munmap(ring->map, ring->map_size);
        if (ring->charged)
                (void) s->ring_budget(-1, NULL, 0, s->ring_budget_userdata);
        free(ring);
        if (s->n_rings == 0 && s->timer)
                sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
}

/* Maps [header | data | data] so frames that wrap are contiguous. */
static int ring_map(int fd, size_t page, size_t size, uint8_t **ret) {
        size_t total = page + 2 * size;
        uint8_t *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return -errno;
        void *second = mmap(map + page + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t) page);
        if (second == MAP_FAILED) {
                int r = -errno;
                munmap(map, total);
                return r;
        }
        *ret = map;
        return 0;
}

/* Creates a ring and returns its memfd (sealed against resizing, so the
 * writer cannot make our mapping fault). */
static int ring_new(ControlServer *s, ControlPeer *peer, ControlRing **ret, int *ret_fd) {
        size_t size = CONTROL_RING_DATA_SIZE;
        _cleanup_close_ int fd = memfd_create("periscope-control-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) (s->page_size + size)) < 0)
                return -errno;
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
                return -errno;

        ControlRing *ring = calloc(1, sizeof(*ring));
        if (!ring)
                return -ENOMEM;
        int r = ring_map(fd, s->page_size, size, &ring->map);
        if (r < 0) {
                free(ring);
                return r;
        }
        ring->map_size = s->page_size + 2 * size;
        ring->server = s;
        ring->peer = peer;
        ring->serial = ++s->next_serial;
        RingHeader *h = (RingHeader *) ring->map;
        h->head = 0;
        h->tail = 0;
        h->offset = (uint32_t) s->page_size;
        h->size = (uint32_t) size;

        LIST_PREPEND(s->rings, ring);
        s->n_rings++;
        peer->n_rings++;
        s->stats.rings_created++;
        timer_arm(s, CONTROL_DRAIN_INTERVAL_USEC);
        *ret = ring;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Copies one checked frame into the capture. */
static void copy_frame(ControlServer *s, ControlRing *ring, const CaptureFrame *f) {
        int r = frame_copier_copy(s->copier, f);
        if (r == 0) {
                s->stats.frames_skipped++;
                return;
        }
        note_write_error(s, r);
        s->stats.frames_copied++;
        ring->last_pid = f->pid;
}

typedef enum DrainResult {
        DRAIN_OK,
        DRAIN_ENDED,    /* end-of-ring frame */
        DRAIN_BROKEN,   /* the ring broke the rules; already logged */
} DrainResult;

/* Where the ring's frames end: its writer's tail, or after
 * control_server_close() the tail it had then (unchecked: the writer's). */
static uint32_t ring_tail(const ControlRing *ring) {
        const RingHeader *h = (const RingHeader *) ring->map;
        return ring->has_final_tail ? ring->final_tail : __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
}

/* Bytes from the ring's head to tail (a checked tail: below the data size). */
static uint32_t ring_bytes_to(const ControlRing *ring, uint32_t tail) {
        return tail >= ring->head ? tail - ring->head : CONTROL_RING_DATA_SIZE - ring->head + tail;
}

/* Copies the complete frames between head and tail; with a deadline
 * (CLOCK_MONOTONIC ns, 0: none) it stops once that passed, with *ret_cut
 * set, and the rest waits for the next drain. */
static DrainResult ring_drain(ControlRing *ring, int64_t deadline_ns, bool *ret_cut) {
        ControlServer *s = ring->server;
        RingHeader *h = (RingHeader *) ring->map;
        const uint8_t *data = ring->map + s->page_size;
        const uint32_t size = CONTROL_RING_DATA_SIZE;
        uint32_t tail = ring_tail(ring);
        DrainResult result = DRAIN_OK;

        if (tail >= size || tail % CAPTURE_ALIGN != 0) {
                capture_log(s, ring->last_pid, "control ring %u dropped: writer position %u is outside the %u-byte ring",
                            ring->serial, tail, size);
                return DRAIN_BROKEN;
        }

        uint32_t avail = ring_bytes_to(ring, tail);
        unsigned frames = 0;
        while (avail > 0) {
                if (deadline_ns > 0 && ++frames % CONTROL_DRAIN_CLOCK_FRAMES == 0 && now_monotonic_ns() >= deadline_ns) {
                        *ret_cut = true;
                        break;
                }
                if (avail < CAPTURE_FRAME_HEADER_SIZE) {
                        capture_log(s, ring->last_pid, "control ring %u dropped: %u bytes left, less than a frame header",
                                    ring->serial, avail);
                        result = DRAIN_BROKEN;
                        break;
                }
                /* Copy before looking: the writer can change the ring under us. */
                memcpy(s->frame, data + ring->head, CAPTURE_FRAME_HEADER_SIZE);
                uint16_t len;
                memcpy(&len, s->frame, sizeof(len));
                uint8_t type = s->frame[16];
                if (len < CAPTURE_FRAME_HEADER_SIZE || len % CAPTURE_ALIGN != 0 || len > avail) {
                        capture_log(s, ring->last_pid,
                                    "control ring %u dropped: frame length %u at position %u is not a multiple of 8 "
                                    "between %d and the %u bytes written",
                                    ring->serial, len, ring->head, CAPTURE_FRAME_HEADER_SIZE, avail);
                        result = DRAIN_BROKEN;
                        break;
                }
                memcpy(s->frame, data + ring->head, len);

                ring->head = (uint32_t) ((ring->head + len) % size);
                avail -= len;
                s->stats.bytes_drained += len;

                if (type == RING_END_TYPE) {
                        result = DRAIN_ENDED;
                        break;
                }

                CaptureFrame f;
                int r = capture_reader_decode_frame(s->decoder, s->frame, len, &f);
                if (r < 0) {
                        capture_log(s, ring->last_pid, "control ring %u dropped: bad frame: %s", ring->serial,
                                    capture_reader_error(s->decoder) ?: strerror(-r));
                        result = DRAIN_BROKEN;
                        break;
                }
                if (r == 0 || f.len != len) { /* type Sysprof 3.46 cannot read, or a length changed under us */
                        if (f.len != len && r > 0) {
                                capture_log(s, ring->last_pid, "control ring %u dropped: frame changed while read",
                                            ring->serial);
                                result = DRAIN_BROKEN;
                                break;
                        }
                        s->stats.frames_skipped++;
                        continue;
                }
                copy_frame(s, ring, &f);
        }

        __atomic_store_n(&h->head, ring->head, __ATOMIC_RELEASE);
        return result;
}

/* Drains a ring (until deadline_ns, 0: all of it) and closes it if it
 * ended, broke, or was closing and is drained. Returns true when the
 * deadline cut the drain short (the ring is still there). */
static bool ring_drain_or_close(ControlRing *ring, int64_t deadline_ns) {
        ControlServer *s = ring->server;
        bool cut = false;
        switch (ring_drain(ring, deadline_ns, &cut)) {
        case DRAIN_OK:
                if (cut || !ring->closing)
                        return cut;
                break;
        case DRAIN_ENDED:
                s->stats.rings_ended++;
                break;
        case DRAIN_BROKEN:
                s->stats.rings_dropped++;
                break;
        }
        ring_free(ring);
        return false;
}

/* Moves a ring to the end of the list: the others are drained first next time. */
static void ring_move_last(ControlServer *s, ControlRing *ring) {
        ControlRing *last = ring;
        while (last->next)
                last = last->next;
        if (last == ring)
                return;
        LIST_REMOVE(s->rings, ring);
        last->next = ring;
        ring->prev = last;
}

int control_server_drain(ControlServer *s) {
        ControlRing *next;
        for (ControlRing *ring = s->rings; ring; ring = next) {
                next = ring->next;
                (void) ring_drain_or_close(ring, 0);
        }
        return s->stats.write_error;
}

/* One slice of CONTROL_DRAIN_SLICE_NSEC over the rings; true when it was
 * cut short with frames left (the ring cut goes to the back of the line). */
static bool drain_slice(ControlServer *s) {
        int64_t deadline = now_monotonic_ns() + CONTROL_DRAIN_SLICE_NSEC;
        ControlRing *next;
        for (ControlRing *ring = s->rings; ring; ring = next) {
                next = ring->next;
                if (ring_drain_or_close(ring, deadline)) {
                        ring_move_last(s, ring);
                        return true;
                }
        }
        return false;
}

/* Drains a slice; what is left goes on after the loop served what is
 * pending (a flood of frames must not hold the service for others),
 * else the timer comes back, sooner for a busy writer. */
static void drain_and_rearm(ControlServer *s) {
        uint64_t before = s->stats.bytes_drained;
        if (drain_slice(s)) {
                if (sd_event_source_set_enabled(s->more, SD_EVENT_ONESHOT) >= 0)
                        return;
                timer_arm(s, 0);
                return;
        }
        /* A busy writer gets drained sooner, so its ring never fills. */
        bool busy = s->stats.bytes_drained - before > CONTROL_RING_DATA_SIZE / 16;
        if (s->n_rings > 0)
                timer_arm(s, busy ? CONTROL_DRAIN_BUSY_USEC : CONTROL_DRAIN_INTERVAL_USEC);
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        drain_and_rearm(userdata);
        return 0;
}

static int on_more(sd_event_source *source, void *userdata) {
        ControlServer *s = userdata;
        if (!s->stopped)
                drain_and_rearm(s);
        else if (s->drained) {
                /* closed: every ring (closing) goes once drained to its final tail */
                if (drain_slice(s) && sd_event_source_set_enabled(s->more, SD_EVENT_ONESHOT) >= 0)
                        return 0; /* the next slice after what the loop has pending */
                if (s->rings)
                        (void) control_server_drain(s); /* cannot go on later: the rest now */
                ControlDrained done = s->drained;
                s->drained = NULL;
                done(s->drained_userdata);
        }
        return 0;
}

/* ---- peers ---- */

/* Closes a control socket. On a clean end (every holder closed it) its
 * rings get a last drain and go (a slice of it: a ring with more left is
 * marked closing and goes once the timer drained it); when it is closed
 * for breaking the protocol
 * its rings stay (other processes sharing the socket may still write them)
 * until their end-of-ring frame or the end of the recording. */
static void peer_free(ControlPeer *peer, bool keep_rings) {
        if (!peer)
                return;
        ControlServer *s = peer->server;
        ControlRing *next;
        for (ControlRing *ring = s->rings; ring; ring = next) {
                next = ring->next;
                if (ring->peer != peer)
                        continue;
                if (keep_rings) {
                        ring->peer = NULL;
                        peer->n_rings--;
                } else if (ring_drain_or_close(ring, s->stopped ? 0 : now_monotonic_ns() + CONTROL_DRAIN_SLICE_NSEC)) {
                        ring->peer = NULL;
                        peer->n_rings--;
                        ring->closing = true;
                        timer_arm(s, 0);
                }
        }
        for (ControlRing *ring = s->rings; ring; ring = next) {
                next = ring->next;
                if (ring->peer == peer)
                        ring_free(ring);
        }
        sd_event_source_disable_unref(peer->io);
        safe_close(peer->fd);
        LIST_REMOVE(s->peers, peer);
        s->n_peers--;
        free(peer);
}

/* Sends one byte carrying fd (or no fd, meaning "no ring for you"). */
static int peer_reply(ControlPeer *peer, int fd) {
        return fd_send_with_byte(peer->fd, 0, fd, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Answers one complete request. Returns < 0 when the peer must go. */
static int peer_handle_request(ControlPeer *peer) {
        ControlServer *s = peer->server;
        if (memcmp(peer->request, CONTROL_REQUEST, CONTROL_REQUEST_LEN) != 0) {
                capture_log(s, 0, "control socket closed: it sent something other than a CreatRing request");
                return -EBADMSG;
        }
        if (s->n_rings >= CONTROL_MAX_RINGS || peer->n_rings >= CONTROL_MAX_RINGS_PER_PEER) {
                s->stats.rings_refused++;
                if (s->stats.rings_refused == 1)
                        capture_log(s, 0, "control ring refused: at most %d rings per control socket and %d per recording",
                                    CONTROL_MAX_RINGS_PER_PEER, CONTROL_MAX_RINGS);
                return peer_reply(peer, -1) < 0 ? -EPIPE : 0;
        }
        if (s->ring_budget) {
                char why[256] = "";
                if (s->ring_budget(+1, why, sizeof(why), s->ring_budget_userdata) < 0) {
                        s->stats.rings_refused++;
                        capture_log(s, 0, "control ring refused: %s", why);
                        return peer_reply(peer, -1) < 0 ? -EPIPE : 0;
                }
        }
        ControlRing *ring = NULL;
        _cleanup_close_ int fd = -1;
        int r = ring_new(s, peer, &ring, &fd);
        if (r >= 0)
                ring->charged = s->ring_budget != NULL;
        else if (s->ring_budget)
                (void) s->ring_budget(-1, NULL, 0, s->ring_budget_userdata);
        if (r < 0) {
                s->stats.rings_refused++;
                capture_log(s, 0, "control ring refused: cannot create it: %s", strerror(-r));
                return peer_reply(peer, -1) < 0 ? -EPIPE : 0;
        }
        r = peer_reply(peer, fd);
        if (r < 0) {
                /* A peer that does not read its replies loses its connection. */
                ring_free(ring);
                capture_log(s, 0, "control socket closed: cannot send a ring: %s", strerror(-r));
                return r;
        }
        return 0;
}

static int on_peer_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        ControlPeer *peer = userdata;
        ControlServer *s = peer->server;

        if (revents & EPOLLIN) {
                /* Bounded per wakeup so one chatty peer cannot starve the loop. */
                for (int i = 0; i < 64 && !s->stopped; i++) {
                        ssize_t k = recv(fd, peer->request + peer->request_len, CONTROL_REQUEST_LEN - peer->request_len,
                                         MSG_DONTWAIT);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                if (errno == EAGAIN)
                                        return 0;
                                peer_free(peer, false);
                                return 0;
                        }
                        if (k == 0) {
                                peer_free(peer, false);
                                return 0;
                        }
                        peer->request_len += (size_t) k;
                        if (peer->request_len < CONTROL_REQUEST_LEN)
                                continue;
                        peer->request_len = 0;
                        if (peer_handle_request(peer) < 0) {
                                peer_free(peer, true);
                                return 0;
                        }
                }
                return 0;
        }
        if (revents & (EPOLLHUP | EPOLLERR))
                peer_free(peer, false);
        return 0;
}

int control_server_add_peer(ControlServer *s, int fd) {
        _cleanup_close_ int owned = fd;
        if (s->stopped)
                return -ESHUTDOWN;
        if (s->n_peers >= CONTROL_MAX_PEERS)
                return -EMFILE;
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;

        ControlPeer *peer = calloc(1, sizeof(*peer));
        if (!peer)
                return -ENOMEM;
        peer->server = s;
        int r = sd_event_add_io(s->event, &peer->io, fd, EPOLLIN, on_peer_io, peer);
        if (r < 0) {
                free(peer);
                return r;
        }
        peer->fd = TAKE_FD(owned);
        LIST_PREPEND(s->peers, peer);
        s->n_peers++;
        s->stats.peers++;
        return 0;
}

int control_server_open_fd(ControlServer *s, int *ret_fd) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        _cleanup_close_ int client = pair[1];
        int r = control_server_add_peer(s, pair[0]);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(client);
        return 0;
}

/* ---- server ---- */

int control_server_new(sd_event *event, CaptureWriter *writer, CounterIdAllocator *ids, ControlServer **ret) {
        if (!event || !writer || !ids || !ret)
                return -EINVAL;
        _cleanup_(control_server_freep) ControlServer *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        s->writer = writer;
        long page = sysconf(_SC_PAGESIZE);
        s->page_size = page > 0 ? (size_t) page : 4096;

        int r = frame_copier_new(writer, ids, CONTROL_MAX_COUNTERS, &s->copier);
        if (r < 0)
                return r;
        r = frame_decoder_new(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, s->decoder_header, &s->decoder);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(event, &s->timer, CLOCK_MONOTONIC, CONTROL_DRAIN_INTERVAL_USEC, 1000, on_timer, s);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        if (r < 0)
                return r;
        r = sd_event_add_defer(event, &s->more, on_more, s);
        if (r < 0)
                return r;
        /* after everything else pending: a defer source at the usual
         * priority would go first again and again while a flood lasts */
        r = sd_event_source_set_priority(s->more, SD_EVENT_PRIORITY_IDLE);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(s->more, SD_EVENT_OFF);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

void control_server_close(ControlServer *s) {
        if (!s || s->stopped)
                return;
        s->stopped = true;
        while (s->peers)
                peer_free(s->peers, true); /* the rings stay, to be drained */
        for (ControlRing *ring = s->rings; ring; ring = ring->next) {
                ring->final_tail = ring_tail(ring); /* checked by ring_drain() */
                ring->has_final_tail = true;
                ring->closing = true;
        }
        if (s->timer)
                (void) sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
}

uint64_t control_server_get_backlog(const ControlServer *s) {
        uint64_t bytes = 0;
        for (const ControlRing *ring = s->rings; ring; ring = ring->next) {
                uint32_t tail = ring_tail(ring);
                if (tail < CONTROL_RING_DATA_SIZE)
                        bytes += ring_bytes_to(ring, tail);
        }
        return bytes;
}

int control_server_drain_async(ControlServer *s, ControlDrained done, void *userdata) {
        if (!s->stopped || s->drained)
                return -EBUSY;
        if (!s->rings)
                return 0;
        int r = sd_event_source_set_enabled(s->more, SD_EVENT_ONESHOT);
        if (r < 0)
                return r;
        s->drained = done;
        s->drained_userdata = userdata;
        return 1;
}

void control_server_stop(ControlServer *s) {
        if (!s)
                return;
        s->stopped = true;
        s->drained = NULL; /* a drain under way ends here, not told */
        if (s->more)
                (void) sd_event_source_set_enabled(s->more, SD_EVENT_OFF);
        while (s->peers)
                peer_free(s->peers, false); /* drains and frees the peer's rings */
        ControlRing *next;
        for (ControlRing *ring = s->rings; ring; ring = next) { /* rings of closed sockets */
                next = ring->next;
                (void) ring_drain_or_close(ring, 0);
        }
        while (s->rings)
                ring_free(s->rings);
}

ControlServer *control_server_free(ControlServer *s) {
        if (!s)
                return NULL;
        if (s->writer)
                control_server_stop(s);
        sd_event_source_disable_unref(s->timer);
        sd_event_source_disable_unref(s->more);
        capture_reader_free(s->decoder);
        frame_copier_free(s->copier);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

void control_server_set_address_func(ControlServer *s, ControlAddressFunc func, void *userdata) {
        frame_copier_set_address_func(s->copier, func, userdata);
}

void control_server_set_ring_budget(ControlServer *s, ControlRingBudget func, void *userdata) {
        s->ring_budget = func;
        s->ring_budget_userdata = userdata;
}

unsigned control_server_get_n_rings(const ControlServer *s) {
        return s->n_rings;
}

unsigned control_server_get_n_peers(const ControlServer *s) {
        return s->n_peers;
}

const ControlServerStats *control_server_get_stats(const ControlServer *s) {
        return &s->stats;
}
