/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-opener.c: the forked child that holds periscoped's perf
 * capabilities and opens its perf events (see perf-opener.h). */
#include "perf-opener.h"
#include "perf-diagnose.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"
#include "perf-opener-policy.h"

/* How long the opener may take to be ready at start (a loaded machine
 * under the sanitizers is slow; nothing else runs yet). */
#define PERF_OPENER_START_TIMEOUT_MS 5000
/* How long one answer may take: the daemon's event loop waits meanwhile.
 * perf_event_open takes microseconds (the first event of a kind patches
 * the kernel's text: milliseconds); an opener that takes a second is
 * stopped or hung, and is given up (the daemon then restarts). */
#define PERF_OPENER_TIMEOUT_MS 1000
/* The same off the event loop's stack (a PerfOpenerWait, on a fiber): only
 * the caller that asked waits, and every other caller is served meanwhile;
 * an opener stopped (SIGSTOP, a debugger) for this long is given up. */
#define PERF_OPENER_WAIT_TIMEOUT_MS 10000
/* After its socket hung up, how long the opener may take to be reaped. */
#define PERF_OPENER_EXIT_TIMEOUT_MS 1000
#define PERF_OPENER_SOCKET_FD 3

struct PerfOpener {
        pid_t pid;
        int sock;
        bool sys_admin;
        bool gone;
        bool busy;          /* a request's answer is awaited by a PerfOpenerWait */
        unsigned unclaimed; /* answers to requests whose wait gave up (-ECANCELED): read and dropped */
        int *turns;         /* eventfds of the callers waiting for their turn, first come first */
        size_t n_turns, allocated_turns;
        /* The busy caller waits on wait_ep: the socket, and wake_efd, set
         * when a caller on the loop's stack, which cannot wait its turn,
         * read the busy caller's answer into stash for it. */
        int wait_ep, wake_efd;
        bool stashed;
        int stash;
        char gone_reason[96];
};

/* ---- capabilities ---- */

static int caps_get(uint64_t *ret_permitted) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        *ret_permitted = (uint64_t) d[0].permitted | (uint64_t) d[1].permitted << 32;
        return 0;
}

static bool has_permitted(uint64_t permitted, int cap) {
        return permitted & (UINT64_C(1) << cap);
}

bool perf_opener_wanted(void) {
        uint64_t p;
        return caps_get(&p) >= 0 && (has_permitted(p, CAP_PERFMON) || has_permitted(p, CAP_SYS_ADMIN));
}

int perf_event_paranoid(void) {
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        int v = 2;
        if (f) {
                if (fscanf(f, "%d", &v) != 1)
                        v = 2;
                fclose(f);
        }
        return v;
}

/* Keeps only `keep` (as far as permitted): the bounding set where
 * CAP_SETPCAP allows (under the unit's CapabilityBoundingSet= it does
 * not, and the unit's set stays, which no new privileges makes moot),
 * no ambient or inheritable capability, no new privileges on exec, not
 * dumpable. */
static int child_keep_capabilities(uint64_t keep) {
        uint64_t permitted;
        int r = caps_get(&permitted);
        if (r < 0)
                return r;
        bool setpcap = has_permitted(permitted, CAP_SETPCAP);
        for (int c = 0; c < 64; c++) {
                if (keep & (UINT64_C(1) << c))
                        continue;
                int in = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
                if (in < 0)
                        break; /* past the last capability */
                if (in == 1 && setpcap && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
                        return -errno;
        }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return -errno;
        uint64_t want = keep & permitted;
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {
                { .effective = (uint32_t) want, .permitted = (uint32_t) want },
                { .effective = (uint32_t) (want >> 32), .permitted = (uint32_t) (want >> 32) },
        };
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

/* ---- the child ---- */

/* Receives one request: exactly its size, no fd, nothing cut off. Every fd
 * that came with it is closed. 0 at the end of the stream, 1 for a
 * request, -EBADMSG for anything else. */
static int child_receive(int sock, PerfOpenerRequest *q) {
        uint8_t buf[sizeof(PerfOpenerRequest) + 1];
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 8)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
        struct msghdr msg = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control.buf)
        };
        ssize_t k;
        do
                k = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return errno == ECONNRESET ? 0 : -errno;
        bool fds = false;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        safe_close(fd);
                }
                fds = true;
        }
        if (k == 0 && !fds) {
                /* the end, or an empty datagram */
                struct pollfd p = { .fd = sock, .events = POLLIN };
                if (poll(&p, 1, 0) < 0 || (p.revents & (POLLHUP | POLLERR)))
                        return 0;
        }
        if (fds || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || k != sizeof(PerfOpenerRequest))
                return -EBADMSG;
        memcpy(q, buf, sizeof(*q));
        return 1;
}

_Noreturn static void child_serve(int sock) {
        pid_t self = getpid();
        for (;;) {
                PerfOpenerRequest q;
                int r = child_receive(sock, &q);
                if (r == 0)
                        _exit(0);
                if (r < 0 && r != -EBADMSG)
                        _exit(1);
                int fd = -1;
                if (r == -EBADMSG)
                        log_warning("perf opener: refused a malformed request (not one %zu-byte datagram without fds)",
                                    sizeof(PerfOpenerRequest));
                else {
                        _cleanup_free_ char *why = NULL;
                        r = perf_opener_check(&q, self, &why);
                        if (r < 0 && why)
                                log_warning("perf opener: refused: %s", why);
                        else if (r < 0)
                                log_warning_errno(r, "perf opener: refused: %m");
                        else {
                                struct perf_event_attr attr = q.attr;
                                long k = syscall(SYS_perf_event_open, &attr, (pid_t) q.pid, (int) q.cpu, -1,
                                                 PERF_FLAG_FD_CLOEXEC);
                                r = k < 0 ? -errno : 0;
                                fd = (int) k;
                        }
                }
                PerfOpenerAnswer a = { .error = r };
                r = fd_send_with_data(sock, &a, sizeof(a), fd, MSG_NOSIGNAL);
                safe_close(fd);
                if (r < 0)
                        _exit(r == -EPIPE || r == -ECONNRESET ? 0 : 1);
        }
}

/* In the child: its socket as fd 3, stderr kept (the journal: refusals are
 * logged), every other fd closed; gone with the daemon; its capabilities;
 * the first answer says whether it got there. */
_Noreturn static void child_main(pid_t parent, int sock, uint64_t keep) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                _exit(1);
        if (dup2(sock, PERF_OPENER_SOCKET_FD) < 0 || close_range(PERF_OPENER_SOCKET_FD + 1, ~0U, 0) < 0 ||
            close_range(0, 1, 0) < 0)
                _exit(1);
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_IGN);
        PerfOpenerAnswer ready = { .error = child_keep_capabilities(keep) };
        if (fd_send_with_data(PERF_OPENER_SOCKET_FD, &ready, sizeof(ready), -1, MSG_NOSIGNAL) < 0 || ready.error < 0)
                _exit(1);
        child_serve(PERF_OPENER_SOCKET_FD);
}

/* ---- the daemon's side ---- */

static void kill_and_reap(pid_t pid, int *ret_status) {
        int status = 0;
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (ret_status)
                *ret_status = status;
}

int perf_opener_start(PerfOpener **ret) {
        uint64_t permitted;
        int r = caps_get(&permitted);
        if (r < 0)
                return r;
        bool sys_admin = perf_event_paranoid() > 2 && has_permitted(permitted, CAP_SYS_ADMIN);
        uint64_t keep = UINT64_C(1) << CAP_PERFMON | (sys_admin ? UINT64_C(1) << CAP_SYS_ADMIN : 0);
        _cleanup_free_ PerfOpener *o = calloc(1, sizeof(PerfOpener));
        if (!o)
                return -ENOMEM;
        pid_t parent = getpid();
        int sock = -1;
        pid_t pid = fork_with_socket(&sock);
        if (pid < 0)
                return pid;
        if (pid == 0)
                child_main(parent, sock, keep);
        PerfOpenerAnswer ready = { .error = -EIO };
        int fd = -1;
        struct pollfd p = { .fd = sock, .events = POLLIN };
        if (poll(&p, 1, PERF_OPENER_START_TIMEOUT_MS) != 1 ||
            fd_receive_with_data(sock, &ready, sizeof(ready), MSG_CMSG_CLOEXEC, &fd) != sizeof(ready) || fd >= 0)
                ready.error = -EIO;
        safe_close(fd);
        if (ready.error < 0) {
                close(sock);
                kill_and_reap(pid, NULL);
                return ready.error;
        }
        *o = (PerfOpener){ .pid = pid, .sock = sock, .sys_admin = sys_admin, .wait_ep = -1, .wake_efd = -1 };
        *ret = TAKE_PTR(o);
        return 0;
}

PerfOpener *perf_opener_free(PerfOpener *o) {
        if (!o)
                return NULL;
        safe_close(o->sock);
        free(o->turns);
        safe_close(o->wait_ep);
        safe_close(o->wake_efd);
        if (o->stashed)
                safe_close(o->stash);
        if (o->pid > 0)
                kill_and_reap(o->pid, NULL);
        free(o);
        return NULL;
}

pid_t perf_opener_pid(const PerfOpener *o) {
        return o->pid;
}

bool perf_opener_has_sys_admin(const PerfOpener *o) {
        return o->sys_admin;
}

bool perf_opener_gone(const PerfOpener *o) {
        return o->gone;
}

int perf_opener_socket(const PerfOpener *o) {
        return o->sock;
}

/* Whether pid has exited within timeout_ms (reaped, its status in
 * *status), polling every millisecond or so. */
static bool reaped_within(pid_t pid, int timeout_ms, int *status) {
        for (int waited = 0;; waited++) {
                pid_t k = waitpid(pid, status, WNOHANG);
                if (k == pid)
                        return true;
                if ((k < 0 && errno != EINTR) || waited >= timeout_ms)
                        return false;
                (void) poll(NULL, 0, 1);
        }
}

/* The opener is not asked again: killed if it still runs (after
 * exit_timeout_ms), reaped, and what became of it remembered for the
 * error messages. */
static int perf_opener_lost_after(PerfOpener *o, const char *what, int exit_timeout_ms) {
        int status = 0;
        pid_t pid = o->pid;
        if (o->gone)
                return -PERF_OPENER_GONE;
        o->gone = true;
        o->pid = 0;
        bool had_exited = reaped_within(pid, exit_timeout_ms, &status);
        if (!had_exited)
                kill_and_reap(pid, &status);
        if (had_exited && WIFEXITED(status))
                snprintf(o->gone_reason, sizeof(o->gone_reason), "pid %d exited with status %d", (int) pid,
                         WEXITSTATUS(status));
        else if (had_exited && WIFSIGNALED(status))
                snprintf(o->gone_reason, sizeof(o->gone_reason), "pid %d was killed by signal %d", (int) pid,
                         WTERMSIG(status));
        else
                snprintf(o->gone_reason, sizeof(o->gone_reason), "pid %d %s, and was killed", (int) pid, what);
        return -PERF_OPENER_GONE;
}

static int perf_opener_lost(PerfOpener *o, const char *what) {
        return perf_opener_lost_after(o, what, 0);
}

void perf_opener_hung_up(PerfOpener *o) {
        (void) perf_opener_lost_after(o, "closed its socket", PERF_OPENER_EXIT_TIMEOUT_MS);
}

const char *perf_opener_gone_reason(const PerfOpener *o) {
        return o->gone ? o->gone_reason : NULL;
}

/* Whether this process cannot take one more fd (RLIMIT_NOFILE): the
 * kernel then drops an fd passed to it, and the answer arrives without. */
static bool fd_table_full(int fd) {
        int probe = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (probe < 0)
                return errno == EMFILE;
        safe_close(probe);
        return false;
}

/* The fd the busy caller waits on (epoll: the socket and wake_efd). The
 * daemon's hang-up watch has the socket itself in the event loop, which
 * cannot hold it twice. */
static int wait_fd(PerfOpener *o) {
        if (o->wait_ep >= 0)
                return o->wait_ep;
        _cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0)
                return -errno;
        _cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0)
                return -errno;
        struct epoll_event ev = { .events = EPOLLIN };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, o->sock, &ev) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) < 0)
                return -errno;
        o->wake_efd = TAKE_FD(efd);
        o->wait_ep = TAKE_FD(ep);
        return o->wait_ep;
}

/* Receives the next answer: its fd or negative errno, as the request's;
 * -EAGAIN when there is none yet. */
static int receive_answer(PerfOpener *o) {
        PerfOpenerAnswer a;
        int fd = -1;
        ssize_t k = fd_receive_with_data(o->sock, &a, sizeof(a), MSG_CMSG_CLOEXEC | MSG_DONTWAIT, &fd);
        if (k == -EAGAIN)
                return -EAGAIN;
        if (k == 0 || k == -ECONNRESET) /* its end closed: it died */
                return perf_opener_lost_after(o, "closed its socket", PERF_OPENER_EXIT_TIMEOUT_MS);
        /* The opener opened the event, this process could not take it:
         * the daemon's fd limit, not the opener, is at fault. */
        if (k == sizeof(a) && a.error == 0 && fd < 0 && fd_table_full(o->sock))
                return -EMFILE;
        if (k != sizeof(a) || (a.error == 0) != (fd >= 0) || a.error > 0 || a.error < -4095) {
                safe_close(fd);
                return perf_opener_lost(o, "answered nonsense");
        }
        return a.error < 0 ? a.error : fd;
}

/* Reads what the opener sent: true with *ret the awaited answer (an fd or
 * an error); false to wait on (a message not complete yet, or the answer
 * of a request whose caller gave up, closed). */
static bool take_answer(PerfOpener *o, int *ret) {
        int r = receive_answer(o);
        if (r == -EAGAIN)
                return false;
        if (o->unclaimed == 0 || o->gone) {
                *ret = r;
                return true;
        }
        o->unclaimed--;
        safe_close(r);
        return false;
}

/* The answer to the oldest request still awaited, on this stack (at most
 * a second), after those whose callers gave up. */
static int receive_here(PerfOpener *o) {
        for (;;) {
                struct pollfd p = { .fd = o->sock, .events = POLLIN };
                int r;
                do
                        r = poll(&p, 1, PERF_OPENER_TIMEOUT_MS);
                while (r < 0 && errno == EINTR);
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return perf_opener_lost(o, "did not answer within 1 s");
                if (take_answer(o, &r))
                        return r;
        }
}

/* The same through wait (the busy caller's), for up to 10 s, or its
 * answer from the stash. -ECANCELED and other errors of wait as they are. */
static int receive_waiting(PerfOpener *o, PerfOpenerWait wait, void *userdata) {
        int fd = wait_fd(o);
        if (fd < 0)
                return fd;
        for (;;) {
                int r = wait(fd, PERF_OPENER_WAIT_TIMEOUT_MS, userdata);
                if (o->stashed) {
                        eventfd_t v;
                        (void) eventfd_read(o->wake_efd, &v);
                        o->stashed = false;
                        if (r >= 0)
                                return o->stash;
                        safe_close(o->stash); /* given up, answered meanwhile */
                        return r;
                }
                if (r < 0) {
                        o->unclaimed++; /* its answer comes later, to the next request */
                        return r;
                }
                if (o->gone) /* the hang-up watch saw it go meanwhile */
                        return -PERF_OPENER_GONE;
                if (r == 0)
                        return perf_opener_lost(o, "did not answer within 10 s");
                if (take_answer(o, &r))
                        return r;
        }
}

/* The request under way is answered (or given up): the first caller
 * waiting for its turn is woken. */
static void release_turn(PerfOpener *o) {
        o->busy = false;
        if (o->n_turns > 0)
                (void) eventfd_write(o->turns[0], 1);
}

/* Waits, through wait, until no request is under way: each caller on an
 * eventfd of its own, woken in turn. 0, or wait's error. */
static int wait_turn(PerfOpener *o, PerfOpenerWait wait, void *userdata) {
        _cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0)
                return -errno;
        if (GROW_ARRAY(o->turns, o->allocated_turns, o->n_turns + 1, 4) < 0)
                return -ENOMEM;
        o->turns[o->n_turns++] = efd;
        int r = 0;
        /* a timeout while another's request is under way: that request's
         * own wait is bounded, the turn comes */
        while (o->busy && !o->gone && r >= 0) {
                r = wait(efd, PERF_OPENER_WAIT_TIMEOUT_MS, userdata);
                eventfd_t v;
                if (r > 0)
                        (void) eventfd_read(efd, &v);
        }
        for (size_t i = 0; i < o->n_turns; i++)
                if (o->turns[i] == efd) {
                        memmove(o->turns + i, o->turns + i + 1, (o->n_turns - i - 1) * sizeof(int));
                        o->n_turns--;
                        break;
                }
        /* a turn it was given and does not take goes on to the next (the
         * opener gone: each tells the next) */
        if ((r < 0 || o->gone) && !o->busy)
                release_turn(o);
        return r < 0 ? r : 0;
}

int perf_opener_request_wait(PerfOpener *o, const PerfOpenerRequest *q, PerfOpenerWait wait, void *userdata) {
        /* One request at a time. A caller with a wait waits for its turn;
         * one on the loop's stack reads the busy caller's answer for it
         * (which is woken to take it) and goes first. */
        bool for_other = false;
        if (o->busy && !o->gone && wait) {
                int r = wait_turn(o, wait, userdata);
                if (r < 0)
                        return r;
        } else if (o->busy && !o->gone) {
                for_other = true;
                if (!o->stashed) {
                        o->stash = receive_here(o);
                        o->stashed = true;
                        (void) eventfd_write(o->wake_efd, 1);
                }
        }
        if (o->gone)
                return -PERF_OPENER_GONE;
        /* what it waits on, before the request: an answer nobody awaits
         * would be taken for the next request's */
        if (wait && !for_other) {
                int fd = wait_fd(o);
                if (fd < 0)
                        return fd;
        }
        int r = fd_send_with_data(o->sock, q, sizeof(*q), -1, MSG_NOSIGNAL);
        if (r == -EPIPE || r == -ECONNRESET) /* its end closed: it died */
                return perf_opener_lost_after(o, "closed its socket", PERF_OPENER_EXIT_TIMEOUT_MS);
        if (r < 0)
                return perf_opener_lost(o, "did not take a request");
        if (for_other) /* still the other's turn: it takes its answer */
                return receive_here(o);
        o->busy = true;
        r = wait ? receive_waiting(o, wait, userdata) : receive_here(o);
        release_turn(o);
        return r;
}

int perf_opener_request(PerfOpener *o, const PerfOpenerRequest *q) {
        return perf_opener_request_wait(o, q, NULL, NULL);
}

int perf_open_wait(PerfOpener *o, const struct perf_event_attr *attr, pid_t pid, int cpu, PerfOpenerWait wait,
                   void *userdata) {
        if (!o) {
                struct perf_event_attr copy = *attr;
                long fd = syscall(SYS_perf_event_open, &copy, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
                return fd < 0 ? -errno : (int) fd;
        }
        PerfOpenerRequest q = {
                .pid = pid,
                .cpu = cpu,
                .group_fd = -1,
                .flags = PERF_FLAG_FD_CLOEXEC,
                .attr = *attr,
        };
        return perf_opener_request_wait(o, &q, wait, userdata);
}

int perf_open(PerfOpener *o, const struct perf_event_attr *attr, pid_t pid, int cpu) {
        return perf_open_wait(o, attr, pid, cpu, NULL, NULL);
}

/* Why an open failed with err, in env as the process that called
 * perf_event_open saw it: the opener (CAP_PERFMON, and CAP_SYS_ADMIN where
 * it got it) or, without one, periscoped itself. The seccomp filter is
 * inherited at the fork, so env's (this process's) tells for both. */
static const char *explain(const PerfOpener *o, PerfOpenEnvironment *env, int err, char *buf, size_t size) {
        if (err == -PERF_OPENER_GONE && o) {
                snprintf(buf, size,
                         "periscoped's perf opener, the process that holds its perf capabilities, "
                         "is gone (%s); periscoped ends its recordings and exits to be started again: "
                         "try again in a few seconds",
                         o->gone_reason);
                return buf;
        }
        if (err == -EBADRQC) {
                snprintf(buf, size, "periscoped's perf opener refused the event: periscoped never asks for it");
                return buf;
        }
        if (o) {
                env->holder = "periscoped's perf opener";
                env->caps_known = true;
                env->cap_perfmon = true;
                env->cap_sys_admin = o->sys_admin;
        }
        return perf_explain_open_error_env(err, env, buf, size);
}

const char *perf_open_error_hint(const PerfOpener *o, int err, char *buf, size_t size) {
        PerfOpenEnvironment env;
        perf_open_environment_read(&env);
        return explain(o, &env, err, buf, size);
}

const char *perf_open_error_hint_at(const PerfOpener *o, int paranoid, int err, char *buf, size_t size) {
        PerfOpenEnvironment env;
        perf_open_environment_read(&env);
        env.paranoid_known = true;
        env.paranoid = paranoid;
        return explain(o, &env, err, buf, size);
}
