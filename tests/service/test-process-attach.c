/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-process-attach.c: the events of a process, on real perf events
 * (cpu-clock), through process_attach_events():
 *   - every thread of a two-threaded spinning child is sampled;
 *   - a revoked task gives no samples any more, also after enabling all
 *     events again (what a task whose pid was reused must get);
 *   - a pid that is not the owner's is refused before anything is opened;
 *   - a reaped pid is gone.
 * Needs root (perf_event_open on another process), as ./test.sh runs it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-record.h"
#include "process-attach.h"
#include "test-check.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

static volatile unsigned long sink;

static void *spin(void *arg) {
        (void) arg;
        for (;;)
                sink++;
        return NULL;
}

/* A child with a second thread, both spinning; dies with us. */
static pid_t spawn_spinner(void) {
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                pthread_t t;
                pthread_create(&t, NULL, spin, NULL);
                spin(NULL);
        }
        return pid;
}

typedef struct Count {
        pid_t pid;
        int samples;               /* of pid */
        pid_t tids[8];
        int n_tids;
} Count;

static int count_sample(const struct perf_event_header *h, size_t size, void *userdata) {
        Count *c = userdata;
        PerfRecordLayout layout = { .sample_type = SAMPLE_TYPE };
        PerfSample s;
        if (h->type != PERF_RECORD_SAMPLE || perf_record_parse_sample(&layout, h, size, &s) < 0)
                return 0;
        if ((pid_t) s.pid != c->pid)
                return 0;
        c->samples++;
        bool known = false;
        for (int i = 0; i < c->n_tids && !known; i++)
                known = c->tids[i] == (pid_t) s.tid;
        if (!known && c->n_tids < 8)
                c->tids[c->n_tids++] = (pid_t) s.tid;
        return 0;
}

static Count run_for(PerfEvents *p, pid_t pid, int ms) {
        Count c = { .pid = pid };
        (void) perf_events_drain(p, count_sample, &(Count) { .pid = pid }); /* what came before */
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000 };
        nanosleep(&ts, NULL);
        (void) perf_events_drain(p, count_sample, &c);
        return c;
}

/* What every case starts from: a two-threaded spinner and no events yet. */
typedef struct Fixture {
        pid_t child;
        PerfEvents *p;
} Fixture;

static void fixture_init(Fixture *fx) {
        fx->child = spawn_spinner();
        MUST(fx->child);
        usleep(50000); /* its thread exists */
        PerfEventsConfig cfg = { .frequency = 1000, .sample_type = SAMPLE_TYPE };
        MUST(perf_events_new(&cfg, &fx->p));
}

static void fixture_done(Fixture *fx) {
        if (fx->child > 0) {
                kill(fx->child, SIGKILL);
                waitpid(fx->child, NULL, 0);
        }
        fx->p = perf_events_free(fx->p);
}

/* The child's events attached and enabled, 400 ms of its samples counted. */
static Count attach_and_sample(Fixture *fx) {
        CHECK(process_attach_events(fx->p, fx->child, true, 0, NULL) == 0);
        CHECK(perf_events_enable(fx->p) == 0);
        Count c = run_for(fx->p, fx->child, 400);
        printf("attached: %d samples from %d threads\n", c.samples, c.n_tids);
        return c;
}

/* Not the owner's: refused, nothing opened. */
TEST(other_owner_refused) {
        Fixture fx;
        fixture_init(&fx);
        bool not_owner = false;
        CHECK(process_attach_events(fx.p, fx.child, true, 65534, &not_owner) == -EPERM);
        CHECK(not_owner);
        CHECK(perf_events_get_n_events(fx.p) == 0);
        fixture_done(&fx);
}

TEST(every_thread_sampled) {
        Fixture fx;
        fixture_init(&fx);
        Count c = attach_and_sample(&fx);
        CHECK(c.samples > 50 && c.n_tids == 2);
        fixture_done(&fx);
}

/* Revoked (both threads): silent, even after enabling everything again. */
TEST(revoked_task_silent) {
        Fixture fx;
        fixture_init(&fx);
        Count c = attach_and_sample(&fx);
        CHECK(c.n_tids == 2);
        for (int i = 0; i < c.n_tids; i++)
                CHECK(perf_events_revoke_task(fx.p, c.tids[i]) > 0);
        Count after = run_for(fx.p, fx.child, 300);
        CHECK(perf_events_enable(fx.p) == 0);
        Count again = run_for(fx.p, fx.child, 300);
        printf("revoked: %d samples, after enabling all: %d\n", after.samples, again.samples);
        CHECK(after.samples == 0 && again.samples == 0);
        fixture_done(&fx);
}

TEST(reaped_pid_gone) {
        Fixture fx;
        fixture_init(&fx);
        kill(fx.child, SIGKILL);
        waitpid(fx.child, NULL, 0);
        CHECK(process_attach_events(fx.p, fx.child, false, 0, NULL) == -ESRCH);
        fx.child = 0;
        fixture_done(&fx);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
