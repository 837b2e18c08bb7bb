/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sample-pump.c: the sample pump (service/pump/) with a fake sink:
 * records handed on in order, the spill forced and drained in slices from
 * the event loop, drops and lost samples counted once, malformed records
 * counted, a sink's error stopping the drain. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <systemd/sd-event.h>

#include "basic.h"
#include "capture.h"
#include "pump.h"
#include "test-check.h"

/* Samples carry TID and a callchain; other records a TID trailer. */
static const PerfRecordLayout layout = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN };

typedef struct FakeSink {
        sd_event *event;
        SamplePump *pump;
        ProcessMaps *maps;
        unsigned samples, mmaps, comms, forks, exits, wakes;
        uint32_t last_tid; /* samples carry their sequence number as tid */
        bool out_of_order;
        uint32_t fail_at_tid; /* sample() returns -EIO for it (0: never) */
        uint32_t drop_pid;    /* filter() drops its samples (0: none) */
        size_t last_n;
        uint64_t last_addrs[4];
        int wake_drain; /* what the drains started by wake() returned, the first error */
} FakeSink;

static int fake_sample(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        FakeSink *f = userdata;
        if (f->fail_at_tid && s->tid == f->fail_at_tid)
                return -EIO;
        if (s->tid <= f->last_tid)
                f->out_of_order = true;
        f->last_tid = s->tid;
        f->last_n = n;
        memcpy(f->last_addrs, addrs,
               (n < ELEMENTSOF(f->last_addrs) ? n : ELEMENTSOF(f->last_addrs)) * sizeof(uint64_t));
        f->samples++;
        return 0;
}

/* Counts one record of kind (m, c, f, e) that carried what the test sent. */
static int fake_note(FakeSink *f, char kind, bool as_sent) {
        CHECK_MSG(as_sent, "record '%c' arrived changed", kind);
        f->mmaps += kind == 'm';
        f->comms += kind == 'c';
        f->forks += kind == 'f';
        f->exits += kind == 'e';
        return 0;
}

static int fake_mmap2(const PerfMmap2 *m, void *userdata) {
        return fake_note(userdata, 'm',
                         m->pid == 42 && m->addr == 0x400000 && (m->prot & PROT_EXEC) &&
                                 !strcmp(m->filename, "/bin/x"));
}

static int fake_comm(const PerfComm *c, void *userdata) {
        return fake_note(userdata, 'c', c->pid == 42 && !strcmp(c->comm, "worker"));
}

static int fake_task(const PerfTask *t, bool fork, void *userdata) {
        return fake_note(userdata, fork ? 'f' : 'e', t->pid == 43 && t->ppid == 42);
}

static bool fake_filter(PerfSample *s, bool *dwarf, void *userdata) {
        FakeSink *f = userdata;
        CHECK(!*dwarf); /* no tables: frame pointers only */
        return s->pid != f->drop_pid;
}

static void fake_wake(void *userdata) {
        FakeSink *f = userdata;
        f->wakes++;
        int r = sample_pump_drain(f->pump, NULL, false);
        if (r < 0 && f->wake_drain == 0)
                f->wake_drain = r;
}

/* In the struct's order (each callback's type differs: a swap does not compile). */
static const SamplePumpSink fake_sink = { fake_sample, fake_mmap2, fake_comm, fake_task, fake_filter, fake_wake };

/* Record builders: each returns the record's size in bytes. */
static size_t put_header(uint64_t *buf, uint32_t type, size_t words) {
        struct perf_event_header h = { .type = type, .misc = PERF_RECORD_MISC_USER, .size = (uint16_t) (words * 8) };
        memcpy(buf, &h, sizeof(h));
        return words * 8;
}

static size_t build_sample(uint64_t *buf, uint32_t pid, uint32_t tid) {
        buf[1] = (uint64_t) pid | ((uint64_t) tid << 32);
        buf[2] = 2; /* callchain: the user marker and one address */
        buf[3] = CAPTURE_CONTEXT_USER;
        buf[4] = 0x401000 + tid;
        return put_header(buf, PERF_RECORD_SAMPLE, 5);
}

static size_t build_comm(uint64_t *buf) {
        buf[1] = 42 | (42ull << 32);
        memset(&buf[2], 0, 8);
        memcpy(&buf[2], "worker", 7);
        buf[3] = 42 | (42ull << 32); /* sample_id trailer: TID */
        return put_header(buf, PERF_RECORD_COMM, 4);
}

static size_t build_task(uint64_t *buf, uint32_t type) {
        buf[1] = 43 | (42ull << 32); /* pid, ppid */
        buf[2] = 43 | (42ull << 32); /* tid, ptid */
        buf[3] = 1000;               /* time */
        buf[4] = 43 | (43ull << 32);
        return put_header(buf, type, 5);
}

static size_t build_mmap2(uint64_t *buf) {
        buf[1] = 42 | (42ull << 32);
        buf[2] = 0x400000;         /* addr */
        buf[3] = 0x1000;           /* len */
        buf[4] = 0;                /* pgoff */
        buf[5] = 8 | (1ull << 32); /* maj, min */
        buf[6] = 1234;             /* ino */
        buf[7] = 1;                /* ino_generation */
        buf[8] = (uint64_t) (PROT_READ | PROT_EXEC) | ((uint64_t) MAP_PRIVATE << 32);
        memset(&buf[9], 0, 8);
        memcpy(&buf[9], "/bin/x", 7);
        buf[10] = 42 | (42ull << 32);
        return put_header(buf, PERF_RECORD_MMAP2, 11);
}

static size_t build_lost(uint64_t *buf, uint64_t lost) {
        buf[1] = 7; /* id */
        buf[2] = lost;
        buf[3] = 42 | (42ull << 32);
        return put_header(buf, PERF_RECORD_LOST, 4);
}

static SamplePump *new_pump(FakeSink *f, size_t max_spill_bytes) {
        MUST(sd_event_new(&f->event));
        SamplePumpSetup setup = {
                .event = f->event,
                .layout = layout,
                .unwind = RECORD_UNWIND_FP,
                .kernel = false,
                .max_spill_bytes = max_spill_bytes,
                .sink = &fake_sink,
                .userdata = f,
        };
        MUST(process_maps_new(&f->maps));
        setup.maps = f->maps;
        MUST(sample_pump_new(&setup, &f->pump));
        return f->pump;
}

static void free_pump(FakeSink *f) {
        f->pump = sample_pump_free(f->pump);
        f->maps = process_maps_free(f->maps);
        f->event = sd_event_unref(f->event);
}

/* Samples of pid with tids first..last, moved to the spill as a wait would. */
static void spill_samples(SamplePump *p, uint32_t pid, uint32_t first, uint32_t last) {
        uint64_t buf[8];
        for (uint32_t i = first; i <= last; i++) {
                size_t size = build_sample(buf, pid, i);
                MUST(sample_pump_spill_record((void *) buf, size, p));
        }
}

static void run_until_idle(sd_event *e) {
        for (int i = 0; i < 10000; i++) {
                int r = sd_event_run(e, 0);
                MUST(r);
                if (r == 0)
                        return;
        }
        fail("the event loop never went idle");
}

TEST(records_handed_on) {
        FakeSink f = { .drop_pid = 666 };
        SamplePump *p = new_pump(&f, 0);
        uint64_t buf[64];
        size_t size;

        size = build_comm(buf);
        MUST(sample_pump_record((void *) buf, size, p));
        size = build_mmap2(buf);
        MUST(sample_pump_record((void *) buf, size, p));
        size = build_task(buf, PERF_RECORD_FORK);
        MUST(sample_pump_record((void *) buf, size, p));
        for (uint32_t i = 1; i <= 3; i++) {
                size = build_sample(buf, 42, i);
                MUST(sample_pump_record((void *) buf, size, p));
        }
        size = build_sample(buf, 666, 4); /* the filter drops it */
        MUST(sample_pump_record((void *) buf, size, p));
        size = build_task(buf, PERF_RECORD_EXIT);
        MUST(sample_pump_record((void *) buf, size, p));
        size = build_lost(buf, 5);
        MUST(sample_pump_record((void *) buf, size, p));
        /* malformed: a sample cut before its callchain, a LOST without count */
        size = build_sample(buf, 42, 9);
        put_header(buf, PERF_RECORD_SAMPLE, 2);
        MUST(sample_pump_record((void *) buf, 16, p));
        put_header(buf, PERF_RECORD_LOST, 1);
        MUST(sample_pump_record((void *) buf, 8, p));

        CHECK(f.comms == 1 && f.mmaps == 1 && f.forks == 1 && f.exits == 1);
        CHECK(f.samples == 3 && !f.out_of_order && f.last_tid == 3);
        CHECK(f.last_n == 2 && f.last_addrs[0] == CAPTURE_CONTEXT_USER && f.last_addrs[1] == 0x401003);
        SamplePumpStats st;
        sample_pump_get_stats(p, &st);
        CHECK(st.lost_samples == 5 && st.bad_records == 2 && st.spilled_records == 0 && !st.waiting);
        /* nothing waits: a drain hands nothing and asks for no slice */
        CHECK(sample_pump_drain(p, NULL, false) == 0);
        run_until_idle(f.event);
        CHECK(f.wakes == 0 && f.samples == 3);
        free_pump(&f);
}

TEST(spill_in_slices) {
        FakeSink f = {};
        /* room for 1000 samples of 40 bytes: the rest is dropped */
        SamplePump *p = new_pump(&f, 1000 * 40);
        uint64_t buf[64];
        size_t size;

        /* the rings moved to the spill while the daemon waited */
        spill_samples(p, 42, 1, 1200);
        size = build_lost(buf, 3);
        MUST(sample_pump_spill_record((void *) buf, size, p)); /* dropped: not a sample, not lost */
        SamplePumpStats st;
        sample_pump_get_stats(p, &st);
        CHECK(st.spilled_records == 1000 && st.waiting && st.lost_samples == 200);
        /* a record read now joins the spill behind them (order kept): the
         * spill is full, so it is dropped and counted too */
        size = build_sample(buf, 42, 5000);
        MUST(sample_pump_record((void *) buf, size, p));
        CHECK(f.samples == 0);

        /* one slice, then the rest from the idle-priority source */
        CHECK(sample_pump_drain(p, NULL, false) == 1);
        CHECK(f.samples == SAMPLE_UNWIND_FLUSH_BATCH && f.last_tid == SAMPLE_UNWIND_FLUSH_BATCH);
        sample_pump_get_stats(p, &st);
        CHECK(st.sliced && st.waiting && st.lost_samples == 201);
        run_until_idle(f.event);
        CHECK(f.wake_drain == 0);
        CHECK(f.samples == 1000 && f.last_tid == 1000 && !f.out_of_order);
        /* 1000 records in slices of 256: the first drain and 3 from the loop */
        CHECK(f.wakes == 3);
        sample_pump_get_stats(p, &st);
        CHECK(!st.waiting && !st.sliced && st.slices == 3);
        /* the drops were counted once, however many drains ran */
        CHECK(st.lost_samples == 201);
        CHECK(sample_pump_drain(p, NULL, false) == 0);
        sample_pump_get_stats(p, &st);
        CHECK(st.lost_samples == 201);
        free_pump(&f);
}

/* the last drain hands everything at once, and asks for no slice */
TEST(last_drain_hands_all) {
        FakeSink f = {};
        SamplePump *p = new_pump(&f, 1000 * 40);
        spill_samples(p, 42, 2001, 2600);
        CHECK(sample_pump_drain(p, NULL, true) == 0);
        CHECK(f.samples == 600 && f.last_tid == 2600 && !f.out_of_order);
        run_until_idle(f.event);
        CHECK(f.wakes == 0);
        SamplePumpStats st;
        sample_pump_get_stats(p, &st);
        CHECK(!st.waiting && !st.sliced && st.lost_samples == 0);
        free_pump(&f);
}

TEST(sink_error_stops) {
        FakeSink f = { .fail_at_tid = 10 };
        SamplePump *p = new_pump(&f, 0);
        spill_samples(p, 42, 1, 20);
        CHECK(sample_pump_drain(p, NULL, false) == -EIO);
        CHECK(f.samples == 9);
        free_pump(&f);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
