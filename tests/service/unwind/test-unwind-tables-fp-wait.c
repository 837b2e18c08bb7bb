/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwind-tables-fp-wait.c: frame-pointer samples with the leaf
 * decision (aarch64's LR fix-up, sample-stack.h) wait for their leaf's
 * table like DWARF samples: a sample whose table compiles (the real
 * sandboxed helper, off the loop) is queued, later samples queue behind it,
 * and once the table is decided they come out in order with their whole
 * chain, none dropped; at the end (force) a sample still waiting comes out
 * without the decision. Without the tables (x86-64's fp mode) nothing
 * waits. Runs on any machine; the decision itself is test-unwinder-aarch64's.
 *
 *   test-unwind-tables-fp-wait BINARY OTHER-BINARY [CASE...] (OTHER-BINARY unused) */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "sample-stack-choose.h"
#include "test-check.h"
#include "unwind-tables.h"

typedef struct Sink {
        unsigned notified, emitted;
        uint64_t first_addr[8];
        size_t n[8];
} Sink;

static void on_decided(void *userdata) {
        Sink *k = userdata;
        k->notified++;
}

static int on_emit(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        Sink *k = userdata;
        if (k->emitted < ELEMENTSOF(k->n)) {
                k->first_addr[k->emitted] = n > 1 ? addrs[1] : 0;
                k->n[k->emitted] = n;
        }
        k->emitted++;
        return 0;
}

static ProcessMapping mapping_of(PinnedFile *pin, uint64_t start, uint8_t id) {
        return (ProcessMapping){ .start = start,
                                 .end = start + 0x400000,
                                 .dev_major = major(pin->dev),
                                 .dev_minor = minor(pin->dev),
                                 .inode = pin->inode,
                                 .build_id_size = 1,
                                 .build_id = { id },
                                 .filename = pin->path,
                                 .pinned = pin };
}

/* A user-mode fp sample of pid 1 with the registers the leaf decision reads. */
typedef struct Sample {
        uint64_t chain[4], regs[PERF_REGS_UNWIND_N];
        PerfSample s;
} Sample;

static void sample_at(Sample *x, uint64_t ip) {
        *x = (Sample){ .chain = { CAPTURE_CONTEXT_USER, ip, ip + 0x100, ip + 0x200 } };
        for (size_t i = 0; i < PERF_REGS_UNWIND_N; i++)
                x->regs[i] = ip; /* bp/sp/ip (x86-64) or x29/x30/sp/pc: the pc is ip either way */
#if defined(__aarch64__)
        x->regs[1] = ip + 0x100; /* LR: the chain's caller already, nothing to put in */
#endif
        x->s = (PerfSample){ .pid = 1,
                             .tid = 1,
                             .ip = ip,
                             .user_mode = true,
                             .n_callchain = 4,
                             .callchain = x->chain,
                             .regs_abi = PERF_SAMPLE_REGS_ABI_64,
                             .n_regs = PERF_REGS_UNWIND_N,
                             .regs = x->regs };
}

/* The binary of the command line. */
static const char *binary_path;

/* What every case starts from: pid 1 maps the binary twice (two build-ids:
 * "late" at 0x400000, "never" at 0x1000000), tables on an event loop with a
 * listener, and an fp unwinder that waits for its leaf's table. */
typedef struct Fixture {
        PinnedFile pin;
        sd_event *e;
        UnwindTables *tables;
        ProcessMaps *maps;
        Sink k;
        ProcessMapping late, never;
        SampleUnwinder u;
        bool deferred;
        SampleStackContext ctx;
        uint64_t out[16]; /* the stack the last build wrote */
} Fixture;

static bool fixture_init(Fixture *fx) {
        *fx = (Fixture){};
        int fd = open(binary_path, O_RDONLY | O_CLOEXEC);
        struct stat st = {};
        if (fd < 0 || fstat(fd, &st) < 0) {
                fail("cannot open %s", binary_path);
                safe_close(fd);
                return false;
        }
        fx->pin = (PinnedFile){ .dev = st.st_dev,
                                .inode = st.st_ino,
                                .fd = fd,
                                .path = (char *) binary_path,
                                .how = PINNED_VIA_PATH,
                                .identity_checked = true };
        MUST(sd_event_new(&fx->e));
        MUST(unwind_tables_new(fx->e, NULL, &fx->tables));
        MUST(process_maps_new(&fx->maps));
        CHECK(unwind_tables_add_listener(fx->tables, on_decided, &fx->k) >= 0);
        fx->late = mapping_of(&fx->pin, 0x400000, 0x31);
        fx->never = mapping_of(&fx->pin, 0x1000000, 0x32);
        CHECK(process_maps_add(fx->maps, 1, &fx->late) == 0 && process_maps_add(fx->maps, 1, &fx->never) == 0);
        fx->u = (SampleUnwinder){ .tables = fx->tables, .owner = 0 };
        fx->ctx = (SampleStackContext){ .unwind = RECORD_UNWIND_FP,
                                        .maps = fx->maps,
                                        .unwinder = &fx->u,
                                        .deferred = &fx->deferred,
                                        .tables = fx->tables };
        return true;
}

static void fixture_done(Fixture *fx) {
        sample_unwinder_done(&fx->u);
        fx->maps = process_maps_free(fx->maps);
        fx->tables = unwind_tables_free(fx->tables);
        fx->e = sd_event_unref(fx->e);
        fx->pin.fd = safe_close(fx->pin.fd);
}

/* Runs the loop until the listener was told (the table comes seconds later
 * under emulation; at most 30 s); whether late's table is known then. */
static bool run_until_decided(Fixture *fx) {
        int64_t deadline = now_monotonic_ms() + 30000;
        while (fx->k.notified == 0 && now_monotonic_ms() < deadline)
                CHECK(sd_event_run(fx->e, 100 * 1000) >= 0);
        bool known = false;
        return fx->k.notified >= 1 && unwind_tables_peek(fx->tables, &fx->late, &known) != NULL && known;
}

static int flush(Fixture *fx, bool force) {
        uint64_t out[16];
        return sample_unwinder_flush(&fx->u, fx->maps, false, out, ELEMENTSOF(out), force, SIZE_MAX, on_emit, &fx->k);
}

/* Builds the stack of a sample at ip (kept in *x) with ctx into fx->out;
 * returns how many addresses it wrote (0: the sample waits). */
static size_t build_at(Fixture *fx, const SampleStackContext *ctx, Sample *x, uint64_t ip) {
        sample_at(x, ip);
        return sample_stack_build(ctx, &x->s, fx->out, ELEMENTSOF(fx->out));
}

/* The leaf's table is not there: the sample waits; the next one, whose leaf
 * is in no file, waits behind it (order). The table comes: both come out,
 * in order, with their whole chain. */
TEST(waiting_samples_come_out_in_order) {
        Fixture fx;
        if (fixture_init(&fx)) {
                Sample a, b;
                CHECK(build_at(&fx, &fx.ctx, &a, 0x401000) == 0 && fx.deferred);
                CHECK(build_at(&fx, &fx.ctx, &b, 0x900000) == 0 && fx.deferred);
                CHECK(fx.u.n_pending == 2 && fx.u.stats.deferred == 2);
                /* the copies are the queue's: the caller's buffers may go */
                memset(&a, 0, sizeof(a));
                memset(&b, 0, sizeof(b));
                CHECK(flush(&fx, false) == 0);
                CHECK(fx.k.emitted == 0 && fx.u.n_pending == 2);

                CHECK(run_until_decided(&fx));
                CHECK(flush(&fx, false) == 0);
                CHECK(fx.k.emitted == 2 && fx.u.n_pending == 0 && fx.u.pending_bytes == 0);
                CHECK(fx.k.n[0] == 4 && fx.k.first_addr[0] == 0x401000);
                CHECK(fx.k.n[1] == 4 && fx.k.first_addr[1] == 0x900000);
        }
        fixture_done(&fx);
}

/* Decided: the next sample is built at once. */
TEST(decided_builds_at_once) {
        Fixture fx;
        if (fixture_init(&fx)) {
                Sample a, c;
                CHECK(build_at(&fx, &fx.ctx, &a, 0x401000) == 0 && fx.deferred);
                CHECK(run_until_decided(&fx));
                CHECK(flush(&fx, false) == 0 && fx.k.emitted == 1);
                CHECK(build_at(&fx, &fx.ctx, &c, 0x402000) == 4 && !fx.deferred && fx.out[1] == 0x402000);
        }
        fixture_done(&fx);
}

/* Without the tables (x86-64's fp mode) nothing waits, even for a file
 * whose table was never asked for. */
TEST(without_tables_nothing_waits) {
        Fixture fx;
        if (fixture_init(&fx)) {
                Sample c;
                SampleStackContext plain = fx.ctx;
                plain.tables = NULL;
                CHECK(build_at(&fx, &plain, &c, 0x1001000) == 4 && !fx.deferred);
                bool known = false;
                CHECK(unwind_tables_peek(fx.tables, &fx.never, &known) == NULL && !known);
        }
        fixture_done(&fx);
}

/* The end of a recording that cannot wait: a sample still waiting comes
 * out without the decision, not dropped. */
TEST(forced_end_emits_waiting) {
        Fixture fx;
        if (fixture_init(&fx)) {
                Sample c;
                CHECK(build_at(&fx, &fx.ctx, &c, 0x1001000) == 0 && fx.deferred && fx.u.n_pending == 1);
                CHECK(flush(&fx, true) == 0);
                CHECK(fx.k.emitted == 1 && fx.k.n[0] == 4 && fx.k.first_addr[0] == 0x1001000 && fx.u.n_pending == 0);
        }
        fixture_done(&fx);
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: %s BINARY OTHER-BINARY [CASE...]\n", argv[0]);
                return 2;
        }
        /* OTHER-BINARY: meson passes the tables tests the same two; this one needs one */
        binary_path = argv[1];
        return test_main(argc - 2, argv + 2);
}
