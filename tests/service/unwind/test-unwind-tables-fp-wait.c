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
 *   test-unwind-tables-fp-wait BINARY [IGNORED...] */
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

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s BINARY\n", argv[0]);
                return 2;
        }
        _cleanup_close_ int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        struct stat st = {};
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "FAIL: cannot open %s\n", argv[1]);
                return 1;
        }
        PinnedFile pin = { .dev = st.st_dev,
                           .inode = st.st_ino,
                           .fd = fd,
                           .path = argv[1],
                           .how = PINNED_VIA_PATH,
                           .identity_checked = true };
        sd_event *e = NULL;
        UnwindTables *tables = NULL;
        ProcessMaps *maps = NULL;
        CHECK(sd_event_new(&e) >= 0);
        CHECK(unwind_tables_new(e, NULL, &tables) >= 0);
        CHECK(process_maps_new(&maps) == 0);
        if (!e || !tables || !maps)
                return 1;
        Sink k = {};
        CHECK(unwind_tables_add_listener(tables, on_decided, &k) >= 0);
        ProcessMapping late = mapping_of(&pin, 0x400000, 0x31), never = mapping_of(&pin, 0x1000000, 0x32);
        CHECK(process_maps_add(maps, 1, &late) == 0 && process_maps_add(maps, 1, &never) == 0);

        SampleUnwinder u = { .tables = tables, .owner = 0 };
        bool deferred = false;
        SampleStackContext ctx = {
                .unwind = RECORD_UNWIND_FP, .maps = maps, .unwinder = &u, .deferred = &deferred, .tables = tables
        };
        uint64_t out[16];
        Sample a, b, c;

        /* The leaf's table is not there: the sample waits; the next one,
         * whose leaf is in no file, waits behind it (order). */
        sample_at(&a, 0x401000);
        CHECK(sample_stack_build(&ctx, &a.s, out, ELEMENTSOF(out)) == 0 && deferred);
        sample_at(&b, 0x900000);
        CHECK(sample_stack_build(&ctx, &b.s, out, ELEMENTSOF(out)) == 0 && deferred);
        CHECK(u.n_pending == 2 && u.stats.deferred == 2);
        /* the copies are the queue's: the caller's buffers may go */
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        CHECK(sample_unwinder_flush(&u, maps, false, out, ELEMENTSOF(out), false, SIZE_MAX, on_emit, &k) == 0);
        CHECK(k.emitted == 0 && u.n_pending == 2);

        /* The table comes (seconds later under emulation): both come out,
         * in order, with their whole chain. */
        int64_t deadline = now_monotonic_ms() + 30000;
        while (k.notified == 0 && now_monotonic_ms() < deadline)
                CHECK(sd_event_run(e, 100 * 1000) >= 0);
        bool known = false;
        CHECK(k.notified >= 1 && unwind_tables_peek(tables, &late, &known) != NULL && known);
        CHECK(sample_unwinder_flush(&u, maps, false, out, ELEMENTSOF(out), false, SIZE_MAX, on_emit, &k) == 0);
        CHECK(k.emitted == 2 && u.n_pending == 0 && u.pending_bytes == 0);
        CHECK(k.n[0] == 4 && k.first_addr[0] == 0x401000);
        CHECK(k.n[1] == 4 && k.first_addr[1] == 0x900000);

        /* Decided now: the next sample is built at once. */
        sample_at(&c, 0x402000);
        CHECK(sample_stack_build(&ctx, &c.s, out, ELEMENTSOF(out)) == 4 && !deferred && out[1] == 0x402000);

        /* Without the tables (x86-64's fp mode) nothing waits, even for a
         * file whose table was never asked for. */
        SampleStackContext plain = ctx;
        plain.tables = NULL;
        sample_at(&c, 0x1001000);
        CHECK(sample_stack_build(&plain, &c.s, out, ELEMENTSOF(out)) == 4 && !deferred);
        CHECK(unwind_tables_peek(tables, &never, &known) == NULL && !known);

        /* The end of a recording that cannot wait: a sample still waiting
         * comes out without the decision, not dropped. */
        CHECK(sample_stack_build(&ctx, &c.s, out, ELEMENTSOF(out)) == 0 && deferred && u.n_pending == 1);
        CHECK(sample_unwinder_flush(&u, maps, false, out, ELEMENTSOF(out), true, SIZE_MAX, on_emit, &k) == 0);
        CHECK(k.emitted == 3 && k.n[2] == 4 && k.first_addr[2] == 0x1001000 && u.n_pending == 0);

        sample_unwinder_done(&u);
        process_maps_free(maps);
        unwind_tables_free(tables);
        sd_event_unref(e);
        if (failures)
                return 1;
        printf("ok: fp samples waited for their leaf's table and came out in order\n");
        return 0;
}
