/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control-ring.h: the service side of Sysprof's collector protocol (the
 * control fd a profiled program finds in SYSPROF_CONTROL_FD).
 *
 * A program writes the 10 bytes "CreatRing\0" on its control socket; the
 * server answers with one byte carrying a sealed memfd (SCM_RIGHTS): one
 * header page { u32 head (reader position), u32 tail (writer position),
 * u32 offset (of the data, = page size), u32 size (of the data) } followed by
 * the data area, which both sides map twice back to back so a frame that
 * wraps is still contiguous. The program appends capture frames and moves
 * tail; the server drains every ring at least every 10 ms into the
 * recording's CaptureWriter and moves head. A frame of type 0xFF ends a ring.
 *
 * Nothing in a ring is trusted: positions, lengths and frame contents go
 * through the capture reader's checks, and a ring that lies is dropped with
 * a LOG frame in the capture saying why. Only MARK, LOG, CTRDEF, CTRSET,
 * SAMPLE and ALLOCATION frames are copied; counter ids are remapped per
 * (pid, id) into the recording's id space. See docs/control-fd.md. */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

#include "capture.h"
#include "basic.h"
#include "counters.h"
#include "frame-copy.h"

#define CONTROL_REQUEST "CreatRing"
#define CONTROL_REQUEST_LEN 10          /* the text and its NUL */
/* Bytes of frame data per ring. Sysprof 3.46's collector drops a frame at
 * once when its ring is full, so the ring must cover the longest time the
 * service may not get to run: 4 MiB hold ~370 ms of 100 000 marks per
 * second. Pages are charged to the program that writes them. */
#define CONTROL_RING_DATA_SIZE (4u << 20)
#define CONTROL_MAX_RINGS 128           /* per server */
#define CONTROL_MAX_RINGS_PER_PEER 64   /* so one program cannot take them all */
#define CONTROL_MAX_PEERS 64            /* connected control sockets per server */
#define CONTROL_MAX_COUNTERS 8192       /* remapped counters per server */
#define CONTROL_DRAIN_INTERVAL_USEC 10000
#define CONTROL_DRAIN_BUSY_USEC 2000    /* next drain when the last one found a lot */
/* A drain works at most this long before the loop serves what is pending
 * (bus calls, other recordings' rings) and goes on after: a program
 * flooding its rings with 16 MiB of frames held the service for 1.4 s. */
#define CONTROL_DRAIN_SLICE_NSEC (5 * 1000 * 1000)
#define CONTROL_DRAIN_CLOCK_FRAMES 64   /* frames between looks at the clock */

typedef struct ControlServer ControlServer;

typedef struct ControlServerStats {
        uint64_t rings_created;
        uint64_t rings_refused;   /* over the limit: the reply carried no fd */
        uint64_t rings_ended;     /* closed by their end-of-ring frame */
        uint64_t rings_dropped;   /* closed because they broke the rules */
        uint64_t peers;           /* control sockets served so far */
        uint64_t frames_copied;
        uint64_t frames_skipped;  /* well-formed but of a type not copied */
        uint64_t bytes_drained;
        int write_error;          /* first error from the CaptureWriter, or 0 */
} ControlServerStats;

/* Creates a server that drains into writer and allocates counter ids from
 * ids; both must outlive it. Sources are attached to event. */
int control_server_new(sd_event *event, CaptureWriter *writer, CounterIdAllocator *ids, ControlServer **ret);

/* Drains every ring one last time, closes every socket and ring, frees. */
ControlServer *control_server_free(ControlServer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(ControlServer *, control_server_free);

/* Makes a connected socket pair, serves one end and returns the other
 * (blocking, O_CLOEXEC) for the client to hand to programs: the fd behind
 * Recording1.OpenControlFd and SYSPROF_CONTROL_FD. */
int control_server_open_fd(ControlServer *s, int *ret_fd);

/* Called with the code addresses of each SAMPLE and ALLOCATION frame copied
 * (see frame-copy.h). */
void control_server_set_address_func(ControlServer *s, ControlAddressFunc func, void *userdata);

/* Asked before each ring is made (delta +1; < 0 refuses it, with a message
 * for the capture's LOG frame) and told when a ring goes (delta -1): the
 * daemon's per-user limit on control rings. */
typedef int (*ControlRingBudget)(int delta, char *message, size_t message_size, void *userdata);
void control_server_set_ring_budget(ControlServer *s, ControlRingBudget func, void *userdata);

/* Serves an already connected stream socket; takes ownership of fd. */
int control_server_add_peer(ControlServer *s, int fd);

/* Copies everything the rings hold now into the capture (on Stop, before
 * the final flush). Returns the first writer error, else 0. */
int control_server_drain(ControlServer *s);

/* Stops answering requests and closes every socket and ring after a final
 * drain (of everything left, at once); the capture keeps what was drained.
 * A control_server_drain_async() under way ends here without its call. */
void control_server_stop(ControlServer *s);

/* At a recording's end: stops answering requests and closes every socket;
 * each ring keeps what its writer had written by now (its tail), to be
 * drained by control_server_drain_async() (or control_server_stop()). */
void control_server_close(ControlServer *s);

/* Bytes the rings hold (after control_server_close(): up to their final
 * tails), for progress. */
uint64_t control_server_get_backlog(const ControlServer *s);

/* After control_server_close(): drains the rings a slice at a time from
 * the event loop (idle priority: everything else pending goes first), so a
 * flooded ring's backlog does not hold the service at the Stop; done() is
 * called from the loop once every ring is drained. Returns 0 when nothing
 * was left (done is not called), 1 when it goes on, or a negative errno. */
typedef void (*ControlDrained)(void *userdata);
int control_server_drain_async(ControlServer *s, ControlDrained done, void *userdata);

/* Number of rings being drained now. */
unsigned control_server_get_n_rings(const ControlServer *s);

/* Number of control sockets still open (a socket closes when every process
 * holding its other end has closed it). */
unsigned control_server_get_n_peers(const ControlServer *s);

const ControlServerStats *control_server_get_stats(const ControlServer *s);
