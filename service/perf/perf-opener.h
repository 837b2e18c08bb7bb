/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-opener.h: the one process of periscoped that calls perf_event_open.
 * Debian's kernels (kernel.perf_event_paranoid=3, a Debian patch) refuse
 * perf_event_open to a process without CAP_SYS_ADMIN. Rather than keep that
 * capability in the whole daemon, periscoped forks this opener at start,
 * before it drops its capabilities: a child that keeps CAP_PERFMON, and
 * CAP_SYS_ADMIN only when perf_event_paranoid is above 2, nothing else (no
 * other capability, no new privileges, no fd but its socket), and answers
 * one request over a SOCK_SEQPACKET socketpair: a PerfOpenerRequest (an
 * attr, pid, cpu, group fd and flags) in one datagram of exactly its size;
 * one int32 back, 0 with the event's fd attached (SCM_RIGHTS), or a
 * negative errno without one. It decides nothing about who may profile
 * what (the daemon does); it refuses what periscoped never asks
 * (perf-opener-policy.h). docs/security.md says what it costs. */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "basic.h"

typedef struct PerfOpener PerfOpener;

/* One request, one datagram of exactly sizeof(PerfOpenerRequest) bytes and
 * no fd. */
typedef struct PerfOpenerRequest {
        int32_t pid;                 /* > 0: a task; -1: every task on cpu */
        int32_t cpu;                 /* -1: every CPU (with a task) */
        int32_t group_fd;            /* always -1: no groups */
        uint32_t reserved;           /* 0 */
        uint64_t flags;              /* PERF_FLAG_FD_CLOEXEC or 0 */
        struct perf_event_attr attr; /* attr.size == sizeof(struct perf_event_attr) */
} PerfOpenerRequest;

/* The answer to each request (and the opener's first message, its
 * readiness): 0 with exactly one fd, or a negative errno with none. */
typedef struct PerfOpenerAnswer {
        int32_t error;
} PerfOpenerAnswer;

/* What the daemon gets when the opener has gone (exited, killed, or
 * answered nonsense): it is not asked again. */
#define PERF_OPENER_GONE ENOLINK

/* kernel.perf_event_paranoid (2 when it cannot be read). */
int perf_event_paranoid(void);

/* Whether a process holding these capabilities should start an opener:
 * when it may use perf with privilege (CAP_PERFMON or CAP_SYS_ADMIN
 * permitted). A daemon without either (run by a user) opens its events
 * itself. */
bool perf_opener_wanted(void);

/* Forks the opener: it keeps CAP_PERFMON and, when
 * /proc/sys/kernel/perf_event_paranoid is above 2 (Debian's level 3),
 * CAP_SYS_ADMIN, as far as this process has them. Call it before the
 * daemon drops its own capabilities, while it has no other thread and no
 * fd it would not give the child (the child closes all but its socket
 * anyway). Returns 0, or a negative errno. */
int perf_opener_start(PerfOpener **ret);

/* Ends the opener (closes its socket, SIGKILL, reaped). NULL is a no-op. */
PerfOpener *perf_opener_free(PerfOpener *o);

/* The opener's pid, and whether it holds CAP_SYS_ADMIN (for logs, tests). */
pid_t perf_opener_pid(const PerfOpener *o);
bool perf_opener_has_sys_admin(const PerfOpener *o);

/* True once the opener has gone: every open fails with -PERF_OPENER_GONE. */
bool perf_opener_gone(const PerfOpener *o);

/* The daemon's end of the socket hung up (the opener died, or was given
 * up by a request and killed): it is gone from now on, reaped (killed if
 * it has not exited within a second), and how it ended kept. */
void perf_opener_hung_up(PerfOpener *o);

/* How it ended ("pid 123 was killed by signal 9"), NULL while it runs. */
const char *perf_opener_gone_reason(const PerfOpener *o);

/* perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC): through the
 * opener when o is not NULL, else by this process itself. Returns the fd
 * or a negative errno: the kernel's, -EBADRQC for an event the opener does
 * not serve, -EMFILE when this process could not take the fd the opener
 * sent (its fd limit; the opener goes on), -PERF_OPENER_GONE when the
 * opener has gone (it did not answer in time, answered nonsense, or
 * died). The wait is synchronous: at most a second, once. */
int perf_open(PerfOpener *o, const struct perf_event_attr *attr, pid_t pid, int cpu);

/* How a caller off the event loop's stack waits for the opener's answer:
 * until fd is readable (1), timeout_ms passed (0), or it gives up
 * (negative, -ECANCELED). fiber_wait_readable() (service/fiber/) is one. */
typedef int (*PerfOpenerWait)(int fd, unsigned timeout_ms, void *userdata);

/* perf_open() whose wait for the opener goes through wait (NULL: as
 * perf_open()): the event loop serves every other caller meanwhile, for
 * up to 10 s (an opener stopped for longer is given up). One request is
 * answered at a time: a waiting caller waits for its turn (woken in
 * order); a caller without wait, which cannot, reads the answer under way
 * for its caller (at most a second) and goes next. A wait that gives up
 * returns its error (its answer is dropped when it comes). */
int perf_open_wait(PerfOpener *o, const struct perf_event_attr *attr, pid_t pid, int cpu, PerfOpenerWait wait,
                   void *userdata);

/* Sends one request as is and returns the opener's answer: the fd, or
 * its negative errno (tests ask what perf_open never would). */
int perf_opener_request(PerfOpener *o, const PerfOpenerRequest *q);
int perf_opener_request_wait(PerfOpener *o, const PerfOpenerRequest *q, PerfOpenerWait wait, void *userdata);

/* The daemon's end of the socket (tests send malformed datagrams). */
int perf_opener_socket(const PerfOpener *o);

/* Writes into buf (size bytes) and returns a sentence on why
 * perf_event_open failed with err here: the opener gone, the capability
 * missing, kernel.perf_event_paranoid; o is the daemon's opener or NULL. */
const char *perf_open_error_hint(const PerfOpener *o, int err, char *buf, size_t size);

/* The same for a given perf_event_paranoid (tests). */
const char *perf_open_error_hint_at(const PerfOpener *o, int paranoid, int err, char *buf, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC(PerfOpener *, perf_opener_free);
