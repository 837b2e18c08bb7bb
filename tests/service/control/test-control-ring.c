/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-control-ring.c: runs the control-ring server in-process on an
 * sd-event loop, starts collector-client (real libsysprof-capture-4
 * collector, or a hostile one) with SYSPROF_CONTROL_FD, and checks the
 * capture: every mark, log, counter value and allocation with the right pid,
 * thread and time; hostile rings dropped with a LOG frame while the others
 * stay intact; the file accepted by Sysprof's own reader.
 *
 * usage: test-control-ring threads|rate|hostile|backlog COLLECTOR_CLIENT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sysprof-capture.h>

#include "basic.h"
#include "capture-tmp.h"
#include "capture.h"
#include "control-ring.h"
#include "test-check.h"

/* What a client said about itself on stdout. */
typedef struct Client {
        pid_t pid;         /* as forked */
        int out;           /* its stdout */
        int status;
        bool exited;
        int reported_pid;
        int64_t start, end;
        int tids[64];
        int n_tids;
        unsigned counter_a, counter_b;
        char text[65536];
        size_t text_len;
} Client;

static void client_start(Client *c, int control_fd, char *const argv[]) {
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                perror("pipe2");
                exit(1);
        }
        memset(c, 0, sizeof(*c));
        pid_t pid = fork();
        if (pid < 0) {
                perror("fork");
                exit(1);
        }
        if (pid == 0) {
                dup2(pipefd[1], 1);
                int fd = dup(control_fd); /* without O_CLOEXEC: inherited */
                char num[16];
                snprintf(num, sizeof(num), "%d", fd);
                setenv("SYSPROF_CONTROL_FD", num, 1);
                execv(argv[0], argv);
                _exit(127);
        }
        close(pipefd[1]);
        c->pid = pid;
        c->out = pipefd[0];
        fcntl(c->out, F_SETFL, O_NONBLOCK);
}

static void client_poll(Client *c) {
        for (;;) {
                ssize_t k = read(c->out, c->text + c->text_len, sizeof(c->text) - 1 - c->text_len);
                if (k <= 0)
                        break;
                c->text_len += (size_t) k;
        }
        c->text[c->text_len] = 0;
        if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
                c->exited = true;
}

static void client_parse(Client *c) {
        client_poll(c);
        char *save = NULL;
        char *copy = strdup(c->text);
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                int tid;
                if (sscanf(line, "pid %d %" SCNd64, &c->reported_pid, &c->start) == 2)
                        continue;
                if (sscanf(line, "thread %d", &tid) == 1 && c->n_tids < 64)
                        c->tids[c->n_tids++] = tid;
                else if (sscanf(line, "counters %u %u", &c->counter_a, &c->counter_b) == 2)
                        continue;
                else
                        sscanf(line, "end %" SCNd64, &c->end);
        }
        free(copy);
        if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0)
                fail("client %d exited with status 0x%x; it said:\n%s", c->pid, c->status, c->text);
}

/* Runs the loop until every client exited and every control socket closed. */
static void run_until_done(sd_event *e, ControlServer *srv, Client *clients, int n) {
        int64_t deadline = now_monotonic_ns() + 60 * 1000000000ll;
        for (;;) {
                bool all = true;
                for (int i = 0; i < n; i++) {
                        client_poll(&clients[i]);
                        all = all && clients[i].exited;
                }
                if (all && control_server_get_n_peers(srv) == 0)
                        break;
                if (now_monotonic_ns() > deadline) {
                        fail("clients or control sockets still alive after 60 s");
                        break;
                }
                int r = sd_event_run(e, 20000);
                if (r < 0) {
                        fail("sd_event_run: %s", strerror(-r));
                        break;
                }
        }
}

static int client_tid_index(const Client *c, int tid) {
        for (int i = 0; i < c->n_tids; i++)
                if (c->tids[i] == tid)
                        return i;
        return -1;
}

/* Sysprof's own reader must accept every frame of the file. */
static void check_sysprof_reads(int fd, uint64_t expect_frames) {
        lseek(fd, 0, SEEK_SET);
        SysprofCaptureReader *r = sysprof_capture_reader_new_from_fd(dup(fd));
        if (!r) {
                fail("libsysprof-capture rejects the capture");
                return;
        }
        uint64_t n = 0;
        SysprofCaptureFrameType type;
        while (sysprof_capture_reader_peek_type(r, &type)) {
                bool ok = true;
                switch (type) {
                case SYSPROF_CAPTURE_FRAME_MARK: ok = sysprof_capture_reader_read_mark(r) != NULL; break;
                case SYSPROF_CAPTURE_FRAME_LOG: ok = sysprof_capture_reader_read_log(r) != NULL; break;
                case SYSPROF_CAPTURE_FRAME_CTRDEF: ok = sysprof_capture_reader_read_counter_define(r) != NULL; break;
                case SYSPROF_CAPTURE_FRAME_CTRSET: ok = sysprof_capture_reader_read_counter_set(r) != NULL; break;
                case SYSPROF_CAPTURE_FRAME_ALLOCATION: ok = sysprof_capture_reader_read_allocation(r) != NULL; break;
                case SYSPROF_CAPTURE_FRAME_SAMPLE: ok = sysprof_capture_reader_read_sample(r) != NULL; break;
                default: ok = sysprof_capture_reader_skip(r); break;
                }
                if (!ok) {
                        fail("libsysprof-capture cannot read frame %" PRIu64 " (type %d)", n, type);
                        break;
                }
                n++;
        }
        if (n != expect_frames)
                fail("libsysprof-capture read %" PRIu64 " frames, our reader %" PRIu64, n, expect_frames);
        sysprof_capture_reader_unref(r);
}

typedef struct Seen {
        int *marks, *logs, *allocs, *ctr;  /* per tid index: next expected seq */
        int64_t *last_time;
} Seen;

/* Checks a "tid=T seq=S" text against the client: known tid, seq in order. */
static bool check_seq(const Client *c, const char *what, const char *text, int *next, int step, int *ret_tid) {
        int tid, seq;
        if (sscanf(text, "tid=%d seq=%d", &tid, &seq) != 2) {
                fail("%s text '%s' is not what the client wrote", what, text);
                return false;
        }
        int t = client_tid_index(c, tid);
        if (t < 0) {
                fail("%s names thread %d, which the client never had", what, tid);
                return false;
        }
        if (seq != next[t]) {
                fail("%s of thread %d: got seq %d, expected %d (lost or reordered)", what, tid, seq, next[t]);
                next[t] = seq;
        }
        next[t] += step;
        if (ret_tid)
                *ret_tid = t;
        return true;
}

/* Checks a capture against what a "threads T M" client did. strict: the
 * capture holds nothing else (in-process recording). */
static int verify_threads(int fd, const Client *c, int n_threads, int n_marks, uint32_t own, uint32_t n_own,
                          bool strict) {
        int r;
        if (c->n_tids != n_threads)
                fail("client reported %d threads", c->n_tids);

        CaptureReader *rd;
        char *err = NULL;
        lseek(fd, 0, SEEK_SET);
        if (capture_reader_open_fd(fd, &rd, &err) < 0) {
                fail("reading the capture: %s", err);
                return 1;
        }
        int next_mark[64] = { 0 }, next_log[64] = { 0 }, next_alloc[64] = { 0 };
        int64_t last_time[64] = { 0 };
        int64_t n_marks_seen = 0, n_logs = 0, n_allocs = 0, n_ctr_a = 0, n_ctr_b = 0;
        uint32_t cap_a = 0, cap_b = 0;
        uint64_t n_frames = 0;
        CaptureCounterSetValue *values = NULL;
        size_t n_values = 0, values_alloc = 0;
        CaptureFrame f;
        while ((r = capture_reader_next(rd, &f)) > 0) {
                n_frames++;
                bool ours = f.pid == c->reported_pid;
                /* In a service recording the client's frames sit among the
                 * service's own (samples, maps, system counters, ...). */
                if (!strict && !ours)
                        continue;
                if (!strict && f.type != CAPTURE_FRAME_MARK && f.type != CAPTURE_FRAME_LOG &&
                    f.type != CAPTURE_FRAME_ALLOCATION && f.type != CAPTURE_FRAME_CTRDEF && f.type != CAPTURE_FRAME_CTRSET)
                        continue;
                int t = -1;
                switch (f.type) {
                case CAPTURE_FRAME_MARK:
                        if (!ours || strcmp(f.mark.group, "periscope-test") != 0) {
                                fail("mark with pid %d group '%s'", f.pid, f.mark.group);
                                break;
                        }
                        if (check_seq(c, "mark", f.mark.message, next_mark, 1, &t)) {
                                if (f.time < c->start || f.time > c->end)
                                        fail("mark time %" PRId64 " outside the client's life [%" PRId64 ", %" PRId64 "]",
                                             f.time, c->start, c->end);
                                if (f.time < last_time[t])
                                        fail("marks of one thread go back in time");
                                last_time[t] = f.time;
                                int seq = next_mark[t] - 1;
                                if (f.mark.duration != 1000 + seq)
                                        fail("mark duration %" PRId64 ", expected %d", f.mark.duration, 1000 + seq);
                        }
                        n_marks_seen++;
                        break;
                case CAPTURE_FRAME_LOG:
                        if (!ours) {
                                fail("log with pid %d: %s", f.pid, f.log.message);
                                break;
                        }
                        if (f.log.severity != 32 || strcmp(f.log.domain, "periscope-test") != 0)
                                fail("log severity %u domain '%s'", f.log.severity, f.log.domain);
                        check_seq(c, "log", f.log.message, next_log, 10, NULL);
                        if (f.time < c->start || f.time > c->end)
                                fail("log time outside the client's life");
                        n_logs++;
                        break;
                case CAPTURE_FRAME_ALLOCATION: {
                        if (!ours) {
                                fail("allocation with pid %d", f.pid);
                                break;
                        }
                        t = client_tid_index(c, f.allocation.tid);
                        if (t < 0 || f.allocation.n_addrs != 3 || f.allocation.addrs[0] != (uint64_t) f.allocation.tid ||
                            f.allocation.addrs[2] != 0x4242) {
                                fail("allocation of tid %d with %u addresses is not what the client sent",
                                     f.allocation.tid, f.allocation.n_addrs);
                                break;
                        }
                        int seq = (int) f.allocation.addrs[1];
                        if (seq != next_alloc[t] || f.allocation.alloc_addr != 0x10000 + (uint64_t) seq ||
                            f.allocation.alloc_size != seq + 1)
                                fail("allocation seq %d (expected %d) addr 0x%" PRIx64 " size %" PRId64, seq,
                                     next_alloc[t], f.allocation.alloc_addr, f.allocation.alloc_size);
                        next_alloc[t] = seq + 10;
                        n_allocs++;
                        break;
                }
                case CAPTURE_FRAME_CTRDEF:
                        for (int i = 0; i < f.ctrdef.n_counters; i++) {
                                const CaptureCounterDef *d = &f.ctrdef.counters[i];
                                if (n_own && d->id >= own && d->id < own + n_own)
                                        fail("program counter got id %u, taken by the service's counters", d->id);
                                if (strcmp(d->name, "counter-a") == 0 && d->type == CAPTURE_COUNTER_INT64)
                                        cap_a = d->id;
                                else if (strcmp(d->name, "counter-b") == 0 && d->type == CAPTURE_COUNTER_DOUBLE)
                                        cap_b = d->id;
                                else
                                        fail("unexpected counter '%s'", d->name);
                        }
                        break;
                case CAPTURE_FRAME_CTRSET:
                        /* Values may come before their definition (written
                         * from other threads' rings): check after the pass. */
                        for (uint32_t i = 0; i < f.ctrset.n_values; i++) {
                                if (n_values == values_alloc) {
                                        values_alloc = values_alloc ? values_alloc * 2 : 1024;
                                        values = realloc(values, values_alloc * sizeof(*values));
                                }
                                values[n_values++] = f.ctrset.values[i];
                        }
                        break;
                default:
                        fail("unexpected %s frame", capture_frame_type_to_string(f.type));
                }
        }
        if (r < 0)
                fail("capture unreadable: %s", capture_reader_error(rd));
        for (size_t i = 0; i < n_values; i++) {
                const CaptureCounterSetValue *v = &values[i];
                if (v->id == cap_a && cap_a) {
                        int tid = (int) (v->value.v64 / 1000000);
                        if (client_tid_index(c, tid) < 0)
                                fail("counter-a value %" PRId64 " names no thread", v->value.v64);
                        n_ctr_a++;
                } else if (v->id == cap_b && cap_b) {
                        n_ctr_b++;
                } else
                        fail("value for counter %u, which was never defined", v->id);
        }
        free(values);
        int64_t want = (int64_t) n_threads * n_marks, want10 = (int64_t) n_threads * (n_marks / 10);
        if (n_marks_seen != want)
                fail("%" PRId64 " marks, expected %" PRId64, n_marks_seen, want);
        if (n_logs != want10)
                fail("%" PRId64 " logs, expected %" PRId64, n_logs, want10);
        if (n_allocs != want10)
                fail("%" PRId64 " allocations, expected %" PRId64, n_allocs, want10);
        if (!cap_a || !cap_b)
                fail("counter definitions missing");
        if (cap_a == c->counter_a && cap_b == c->counter_b)
                fail("counter ids were not remapped");
        if (n_ctr_a != want10 || n_ctr_b != want10)
                fail("counter values: %" PRId64 " and %" PRId64 ", expected %" PRId64 " each", n_ctr_a, n_ctr_b, want10);
        capture_reader_free(rd);
        check_sysprof_reads(fd, n_frames);
        printf("threads: %" PRId64 " marks, %" PRId64 " logs, %" PRId64 " allocations, %" PRId64 " counter values\n",
               n_marks_seen, n_logs, n_allocs, n_ctr_a + n_ctr_b);
        return failures ? 1 : 0;
}

/* collector-client, from the command line. */
static const char *collector_client;

/* Starts collector-client's "threads T M" on a new control socket of srv. */
static int threads_client_start(ControlServer *srv, const char *client_path, int n_threads, int n_marks, Client *c) {
        int cfd;
        int r = control_server_open_fd(srv, &cfd);
        if (r < 0)
                return r;
        char nt[16], nm[16];
        snprintf(nt, sizeof(nt), "%d", n_threads);
        snprintf(nm, sizeof(nm), "%d", n_marks);
        char *argv[] = { (char *) client_path, (char *) "threads", nt, nm, NULL };
        client_start(c, cfd, argv);
        close(cfd);
        return 0;
}

/* Four threads of the real collector: every mark, log, counter value and
 * allocation, with its pid, thread and time; the rings ended and freed. */
TEST(threads) {
        const int n_threads = 4, n_marks = 5000;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        MUST(sd_event_new(&e));
        FILE *tmp = tmpfile();
        int fd = fileno(tmp);
        CaptureWriter *w;
        int64_t t0 = now_monotonic_ns();
        MUST(capture_writer_new_fd(fd, t0, &w));
        CounterIdAllocator ids = {};
        /* The service's own counters take ids first, as in a recording. */
        uint32_t own = counter_ids_allocate(&ids, 5);
        ControlServer *srv;
        int r = control_server_new(e, w, &ids, &srv);
        if (r < 0) {
                fail("control_server_new: %s", strerror(-r));
                return;
        }
        Client c;
        MUST(threads_client_start(srv, collector_client, n_threads, n_marks, &c));
        run_until_done(e, srv, &c, 1);
        client_parse(&c);

        const ControlServerStats *st = control_server_get_stats(srv);
        if (st->rings_created < (uint64_t) n_threads)
                fail("%" PRIu64 " rings for %d threads", st->rings_created, n_threads);
        if (st->rings_dropped != 0)
                fail("%" PRIu64 " rings dropped from a well-behaved collector", st->rings_dropped);
        if (st->rings_ended < (uint64_t) n_threads)
                fail("only %" PRIu64 " rings ended with their end frame (%d threads exited)", st->rings_ended, n_threads);
        if (control_server_get_n_rings(srv) != 0)
                fail("%u rings left after the client went away", control_server_get_n_rings(srv));
        control_server_free(srv);
        MUST(capture_writer_flush(w));
        capture_writer_free(w);

        (void) verify_threads(fd, &c, n_threads, n_marks, own, 5, true); /* its failures are counted */
        fclose(tmp);
}

/* A control server writing into a new temporary capture. */
static int server_tmp_new(sd_event **e, FILE **tmp, int *fd, CaptureWriter **w, CounterIdAllocator *ids,
                          ControlServer **ret) {
        int r = capture_tmp_new(e, tmp, fd, w);
        return r < 0 ? r : control_server_new(*e, *w, ids, ret);
}

/* Starts collector-client's "rate N" on a new control socket of srv. */
static int rate_client_start(ControlServer *srv, const char *client_path, int n, Client *c) {
        int cfd;
        int r = control_server_open_fd(srv, &cfd);
        if (r < 0)
                return r;
        char num[16];
        snprintf(num, sizeof(num), "%d", n);
        char *argv[] = { (char *) client_path, (char *) "rate", num, NULL };
        client_start(c, cfd, argv);
        close(cfd);
        return 0;
}

/* The rate client's marks in the capture at fd, each checked (only marks,
 * its pid, in order); their number, or -1 when the capture is unreadable. */
static int64_t read_rate_marks(int fd, const Client *c) {
        CaptureReader *rd;
        lseek(fd, 0, SEEK_SET);
        if (capture_reader_open_fd(fd, &rd, NULL) < 0)
                return -1;
        int next[64] = { 0 };
        int64_t count = 0;
        CaptureFrame f;
        while (capture_reader_next(rd, &f) > 0) {
                if (f.type != CAPTURE_FRAME_MARK) {
                        fail("unexpected %s frame", capture_frame_type_to_string(f.type));
                        continue;
                }
                if (f.pid != c->reported_pid)
                        fail("mark pid %d, client %d", f.pid, c->reported_pid);
                check_seq(c, "mark", f.mark.message, next, 1, NULL);
                count++;
        }
        capture_reader_free(rd);
        return count;
}

/* A control server on a new temporary capture, and the rate client
 * sending n marks to it. */
typedef struct RateRun {
        sd_event *e;
        FILE *tmp;
        int fd;
        CaptureWriter *w;
        CounterIdAllocator ids;
        ControlServer *srv;
        Client c;
} RateRun;

static int rate_run_start(RateRun *x, const char *client_path, int n) {
        *x = (RateRun){ .fd = -1 };
        int r = server_tmp_new(&x->e, &x->tmp, &x->fd, &x->w, &x->ids, &x->srv);
        return r < 0 ? r : rate_client_start(x->srv, client_path, n, &x->c);
}

/* Closes the server and the capture: the marks that arrived, checked. */
static int64_t rate_run_finish(RateRun *x) {
        control_server_free(x->srv);
        capture_writer_flush(x->w);
        capture_writer_free(x->w);
        int64_t count = read_rate_marks(x->fd, &x->c);
        fclose(x->tmp);
        sd_event_unref(x->e);
        return count;
}

/* 100 000 marks as fast as the collector sends them: all arrive, in order. */
TEST(rate) {
        const int n = 100000;
        RateRun x;
        MUST(rate_run_start(&x, collector_client, n));
        run_until_done(x.e, x.srv, &x.c, 1);
        client_parse(&x.c);
        int64_t count = rate_run_finish(&x);
        double secs = (double) (x.c.end - x.c.start) / 1e9;
        printf("rate: %" PRId64 " of %d marks arrived, sent in %.2f s (%.0f per second)\n", count, n, secs, n / secs);
        if (count != n)
                fail("%" PRId64 " of %d marks arrived", count, n);
}

static void on_backlog_drained(void *userdata) {
        *(bool *) userdata = true;
}

/* A recording's end with frames still in a ring (its writer wrote them
 * while the loop was busy elsewhere): control_server_close() keeps them,
 * control_server_drain_async() copies them from the loop and says when it
 * is done, and every frame reaches the capture in order. */
TEST(backlog) {
        const int n = 20000;
        RateRun x;
        MUST(rate_run_start(&x, collector_client, n));
        sd_event *e = x.e;
        ControlServer *srv = x.srv;
        Client *c = &x.c;
        /* the loop runs until the ring is there, then not while the client writes */
        int64_t deadline = now_monotonic_ns() + 30 * 1000000000ll;
        while (control_server_get_n_rings(srv) == 0 && now_monotonic_ns() < deadline)
                CHECK(sd_event_run(e, 20000) >= 0);
        CHECK(control_server_get_n_rings(srv) == 1);
        while (!c->exited && now_monotonic_ns() < deadline) {
                client_poll(c);
                usleep(10000);
        }
        client_parse(c);

        control_server_close(srv);
        uint64_t backlog = control_server_get_backlog(srv);
        CHECK(backlog > 0);
        bool drained = false;
        CHECK(control_server_drain_async(srv, on_backlog_drained, &drained) == 1);
        unsigned iterations = 0;
        while (!drained && now_monotonic_ns() < deadline) {
                CHECK(sd_event_run(e, 20000) >= 0);
                iterations++;
        }
        CHECK(drained);
        CHECK(control_server_get_n_rings(srv) == 0);
        CHECK(control_server_get_backlog(srv) == 0);
        int64_t count = rate_run_finish(&x);
        printf("backlog: %.2f MiB left in the ring at the close, drained in %u loop iterations; %" PRId64
               " of %d marks arrived\n", backlog / 1048576.0, iterations, count, n);
        if (count != n)
                fail("%" PRId64 " of %d marks arrived", count, n);
}

static int count_logs(CaptureReader *rd, const char *needle) {
        CaptureFrame f;
        int n = 0;
        capture_reader_rewind(rd);
        while (capture_reader_next(rd, &f) > 0)
                if (f.type == CAPTURE_FRAME_LOG && strstr(f.log.message, needle))
                        n++;
        return n;
}

static bool has_mark(CaptureReader *rd, const char *name) {
        CaptureFrame f;
        capture_reader_rewind(rd);
        while (capture_reader_next(rd, &f) > 0)
                if (f.type == CAPTURE_FRAME_MARK && strcmp(f.mark.name, name) == 0)
                        return true;
        return false;
}

/* Hostile rings (lying heads, a shrink, a client that never reads, a bad
 * request) are dropped with a LOG frame; the rings that kept the rules and
 * the well-behaved client next to them lose nothing. */
TEST(hostile) {
        const int n_threads = 3, n_marks = 2000;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        FILE *tmp = NULL;
        int fd = -1;
        CaptureWriter *w;
        CounterIdAllocator ids = {};
        ControlServer *srv;
        MUST(server_tmp_new(&e, &tmp, &fd, &w, &ids, &srv));

        /* Each misbehaving program gets its own control socket, as does the
         * well-behaved one that runs at the same time. */
        const char *modes[] = { "hostile", "noread", "badrequest" };
        Client clients[4];
        for (int i = 0; i < 3; i++) {
                int cfd;
                MUST(control_server_open_fd(srv, &cfd));
                char *argv[] = { (char *) collector_client, (char *) modes[i], NULL };
                client_start(&clients[i], cfd, argv);
                close(cfd);
        }
        MUST(threads_client_start(srv, collector_client, n_threads, n_marks, &clients[3]));

        run_until_done(e, srv, clients, 4);
        for (int i = 0; i < 4; i++)
                client_parse(&clients[i]);
        const ControlServerStats st = *control_server_get_stats(srv);
        control_server_free(srv);
        capture_writer_flush(w);
        capture_writer_free(w);

        if (!strstr(clients[0].text, "shrink refused"))
                fail("the hostile client could shrink its ring: %s", clients[0].text);
        if (st.rings_dropped != 5)
                fail("%" PRIu64 " rings dropped, expected the 5 that lied", st.rings_dropped);

        CaptureReader *rd;
        char *err = NULL;
        lseek(fd, 0, SEEK_SET);
        if (capture_reader_open_fd(fd, &rd, &err) < 0) {
                fail("capture unreadable: %s", err);
                free(err);
                fclose(tmp);
                return;
        }
        int dropped_logs = count_logs(rd, "dropped");
        if (dropped_logs != 5)
                fail("%d LOG frames say a ring was dropped, expected 5", dropped_logs);
        if (count_logs(rd, "other than a CreatRing") != 1)
                fail("no LOG frame for the bad request");
        if (count_logs(rd, "refused") + count_logs(rd, "cannot send") < 1)
                fail("no LOG frame about the client that never reads");
        const char *kept[] = { "after-skipped", "after-shrink", "head-lie" };
        for (size_t i = 0; i < 3; i++)
                if (!has_mark(rd, kept[i]))
                        fail("mark '%s' from a ring that kept the rules is missing", kept[i]);

        /* The well-behaved program lost nothing. */
        Client *good = &clients[3];
        int next[64] = { 0 };
        int64_t n = 0;
        uint64_t n_frames = 0;
        CaptureFrame f;
        capture_reader_rewind(rd);
        int r;
        while ((r = capture_reader_next(rd, &f)) > 0) {
                n_frames++;
                if (f.type == CAPTURE_FRAME_MARK && f.pid == good->reported_pid) {
                        check_seq(good, "mark", f.mark.message, next, 1, NULL);
                        n++;
                }
                if (f.type == CAPTURE_FRAME_MAP)
                        fail("a MAP frame from a ring was copied");
        }
        if (r < 0)
                fail("capture unreadable: %s", capture_reader_error(rd));
        if (n != (int64_t) n_threads * n_marks)
                fail("well-behaved client: %" PRId64 " of %d marks", n, n_threads * n_marks);
        capture_reader_free(rd);
        check_sysprof_reads(fd, n_frames);
        fclose(tmp);
        printf("hostile: %" PRIu64 " rings created, %" PRIu64 " dropped, %" PRIu64 " refused, %" PRIu64
               " frames skipped; good client %" PRId64 " marks\n",
               st.rings_created, st.rings_dropped, st.rings_refused, st.frames_skipped, n);
}

/* A client that ran elsewhere (under `periscope record`): what it printed. */
static int client_from_file(Client *c, const char *path) {
        memset(c, 0, sizeof(*c));
        c->out = -1;
        c->exited = true;
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        c->text_len = fread(c->text, 1, sizeof(c->text) - 1, f);
        fclose(f);
        client_parse(c);
        return 0;
}

/* verify-threads CAPTURE STDOUT T M | verify-rate CAPTURE STDOUT N */
static int verify_main(int argc, char **argv) {
        Client c;
        if (argc != 5 && argc != 6)
                return 2;
        if (client_from_file(&c, argv[3]) < 0) {
                fail("cannot read %s", argv[3]);
                return 1;
        }
        FILE *f = fopen(argv[2], "re");
        if (!f) {
                fail("cannot open %s", argv[2]);
                return 1;
        }
        int fd = fileno(f), ret;
        if (strcmp(argv[1], "verify-threads") == 0 && argc == 6)
                ret = verify_threads(fd, &c, atoi(argv[4]), atoi(argv[5]), 0, 0, false);
        else if (strcmp(argv[1], "verify-rate") == 0) {
                CaptureReader *rd;
                if (capture_reader_open_fd(fd, &rd, NULL) < 0)
                        return 1;
                int next[64] = { 0 }, n = atoi(argv[4]);
                int64_t count = 0;
                CaptureFrame fr;
                while (capture_reader_next(rd, &fr) > 0)
                        if (fr.type == CAPTURE_FRAME_MARK && fr.pid == c.reported_pid) {
                                check_seq(&c, "mark", fr.mark.message, next, 1, NULL);
                                count++;
                        }
                capture_reader_free(rd);
                printf("rate: %" PRId64 " of %d marks arrived\n", count, n);
                if (count != n)
                        fail("%" PRId64 " of %d marks arrived", count, n);
                ret = failures ? 1 : 0;
        } else
                return 2;
        fclose(f);
        return ret;
}

int main(int argc, char **argv) {
        if (argc >= 2 && strncmp(argv[1], "verify-", 7) == 0) {
                int r = verify_main(argc, argv);
                if (failures)
                        fprintf(stderr, "%d failures\n", failures);
                return r || failures ? (r == 2 ? 2 : 1) : 0;
        }
        if (argc != 3) {
                fprintf(stderr, "usage: %s threads|rate|hostile|backlog COLLECTOR_CLIENT\n", argv[0]);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        collector_client = argv[2];
        /* the case named first, as meson runs each alone */
        char *names[] = { argv[0], argv[1], NULL };
        return test_main(2, names);
}
