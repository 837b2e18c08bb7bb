/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-unwind.c: kernel callchain + user stack unwound from the copy. */
#include "sample-unwind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "sample-stack.h"

#define LOOKUP_MEMO 4

/* A queued sample: a deep copy of what the unwinder needs. */
struct SampleUnwindPending {
        PerfSample sample;                /* pointers below point into the copies */
        uint64_t *callchain;
        uint64_t regs[PERF_REGS_UNWIND_N];
        uint8_t *stack;
        bool fp; /* frame-pointer mode, waiting for its leaf's table */
};

/* Per-sample lookup state: the last few mappings and their tables, so a
 * stack that bounces between a program and libc costs no repeated searches.
 * A table not decided yet is asked for (unwind_tables_request()); the
 * unwind then stops and notes it missing, or, when `force`, goes on as if
 * the file had none (its frame-pointer fallback). Nothing compiles here. */
typedef struct Lookup {
        UnwindTables *tables;
        uint32_t owner;
        const ProcessMaps *maps;
        int32_t pid;
        int64_t time;              /* the sample's: before an exec, the old image is looked up */
        bool force;
        bool missing;
        const ProcessMapping *memo[LOOKUP_MEMO];
        const UnwindTable *memo_table[LOOKUP_MEMO];
        unsigned next;
} Lookup;

static bool lookup_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit) {
        Lookup *l = userdata;
        const ProcessMapping *m;
        const UnwindTable *t;

        for (unsigned i = 0; i < LOOKUP_MEMO; i++) {
                m = l->memo[i];
                if (m && ip >= m->start && ip < m->end) {
                        *table = l->memo_table[i];
                        *offset = ip - m->start + m->pgoff;
                        *jit = process_mapping_name_is_anonymous(m->filename);
                        return true;
                }
        }
        m = process_maps_lookup_at(l->maps, l->pid, ip, l->time);
        if (!m)
                return false;
        bool known;
        t = unwind_tables_peek(l->tables, m, &known);
        if (!known) {
                /* < 0: cannot be asked for now (a vdso whose process is
                 * gone): this sample goes on without it */
                int r = unwind_tables_request(l->tables, l->owner, l->pid, m, true);
                if (r > 0)
                        t = unwind_tables_peek(l->tables, m, &known);
                else if (r == 0 && !l->force) {
                        l->missing = true;
                        return false; /* ends this unwind; the sample is queued */
                }
        }
        unsigned slot = l->next++ % LOOKUP_MEMO;
        l->memo[slot] = m;
        l->memo_table[slot] = t;
        *table = t;
        *offset = ip - m->start + m->pgoff;
        *jit = process_mapping_name_is_anonymous(m->filename);
        return true;
}

/* Copies the kernel part of the callchain (marker first) into addrs; stops
 * at the user marker. Returns how many were written. */
static size_t kernel_part(const PerfSample *s, uint64_t *addrs, size_t max) {
        size_t n = 0;
        bool in_kernel = false;

        for (uint64_t i = 0; i < s->n_callchain && n < max; i++) {
                uint64_t a = s->callchain[i];
                if (capture_address_is_context(a)) {
                        if (a != CAPTURE_CONTEXT_KERNEL)
                                break; /* user (excluded anyway), guest, hypervisor */
                        in_kernel = true;
                        continue;
                }
                if (!in_kernel)
                        continue;
                if (n == 0) {
                        if (max < 2)
                                break;
                        addrs[n++] = CAPTURE_CONTEXT_KERNEL;
                }
                addrs[n++] = a;
        }
        return n;
}

/* Unwinds s into addrs; returns false (and writes nothing useful) when a
 * table is still being compiled, unless `force`. */
static bool build(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, bool force, const PerfSample *s,
                  uint64_t *addrs, size_t max, size_t *ret_n) {
        size_t n = 0;

        *ret_n = 0;
        if (max < 2)
                return true;
        /* Leave at least half of the room to the user part. */
        if (kernel)
                n = kernel_part(s, addrs, max / 2);

        UnwindRegs regs;
        if (sample_unwind_regs(s, maps, &regs) && n + 2 <= max) {
                UnwindStack stack = { .base = regs.sp, .data = s->stack,
                                      .size = s->stack ? (size_t) s->stack_dyn_size : 0 };
                Lookup l = { .tables = u->tables, .owner = u->owner, .maps = maps, .pid = (int32_t) s->pid, .time = (int64_t) s->time,
                             .force = force };
                UnwindResult res;

                unwinder_unwind(&regs, &stack, lookup_find, &l, addrs + n + 1, max - n - 1, &res);
                if (l.missing)
                        return false;
                if (res.n_frames > 0) {
                        addrs[n] = CAPTURE_CONTEXT_USER;
                        n += 1 + res.n_frames;
                }
                u->stats.samples++;
                u->stats.frames += res.n_frames;
                u->stats.stops[res.stop]++;
                u->stats.fp_frames += res.n_fp_frames;
        } else if (s->user_mode && s->ip != 0 && n + 2 <= max) {
                /* No usable registers (a 32-bit task): the sampled IP alone. */
                addrs[n++] = CAPTURE_CONTEXT_USER;
                addrs[n++] = s->ip;
        }
        *ret_n = n;
        return true;
}

static size_t pending_bytes(const SampleUnwindPending *p) {
        return (size_t) p->sample.stack_dyn_size + (size_t) p->sample.n_callchain * sizeof(uint64_t) + sizeof(*p);
}

static int queue(SampleUnwinder *u, const PerfSample *s, bool fp) {
        size_t stack_bytes = s->stack ? (size_t) s->stack_dyn_size : 0;
        SampleUnwindPending *p;

        if (u->n_pending == u->allocated_pending) {
                size_t n = u->allocated_pending ? u->allocated_pending * 2 : 64;
                p = reallocarray(u->pending, n, sizeof(*p));
                if (!p)
                        return -ENOMEM;
                u->pending = p;
                u->allocated_pending = n;
        }
        p = &u->pending[u->n_pending];
        *p = (SampleUnwindPending){ .sample = *s, .fp = fp };
        if (s->n_callchain > 0) {
                p->callchain = malloc(s->n_callchain * sizeof(uint64_t));
                if (!p->callchain)
                        return -ENOMEM;
                memcpy(p->callchain, s->callchain, s->n_callchain * sizeof(uint64_t));
        }
        if (stack_bytes > 0) {
                p->stack = malloc(stack_bytes);
                if (!p->stack) {
                        free(p->callchain);
                        return -ENOMEM;
                }
                memcpy(p->stack, s->stack, stack_bytes);
        }
        if (sample_unwind_has_regs(s))
                memcpy(p->regs, s->regs, sizeof(p->regs));
        p->sample.callchain = p->callchain;
        /* sample.regs is pointed at p->regs when flushed: the array may move. */
        p->sample.regs = NULL;
        p->sample.stack = p->stack;
        p->sample.stack_size = stack_bytes;
        p->sample.stack_dyn_size = stack_bytes;
        u->n_pending++;
        u->pending_bytes += pending_bytes(p);
        u->stats.deferred++;
        return 0;
}

bool sample_unwinder_queue_full(const SampleUnwinder *u) {
        return u->pending_bytes >= SAMPLE_UNWIND_QUEUE_MAX_BYTES;
}

size_t sample_unwinder_build(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, const PerfSample *s,
                             uint64_t *addrs, size_t max, bool *deferred) {
        size_t n;

        *deferred = false;
        if (u->pending_bytes < SAMPLE_UNWIND_QUEUE_MAX_BYTES) {
                /* Behind a queued sample, queue too: samples stay in order. */
                if (u->n_pending == 0 && build(u, maps, kernel, false, s, addrs, max, &n))
                        return n;
                if (queue(u, s, false) >= 0) {
                        *deferred = true;
                        return 0;
                }
        }
        /* Queue full (or out of memory): unwound now, a file whose table
         * is not there yet as one without. */
        (void) build(u, maps, kernel, true, s, addrs, max, &n);
        return n;
}

size_t sample_unwinder_build_fp(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, const PerfSample *s,
                                uint64_t *addrs, size_t max, bool *deferred) {
        size_t n;

        *deferred = false;
        if (u->pending_bytes < SAMPLE_UNWIND_QUEUE_MAX_BYTES) {
                if (u->n_pending == 0 &&
                    sample_stack_build_fp(u->tables, u->owner, maps, kernel, false, s, addrs, max, &n))
                        return n;
                if (queue(u, s, true) >= 0) {
                        *deferred = true;
                        return 0;
                }
        }
        (void) sample_stack_build_fp(u->tables, u->owner, maps, kernel, true, s, addrs, max, &n);
        return n;
}

static void pending_free(SampleUnwindPending *p) {
        free(p->callchain);
        free(p->stack);
}

int sample_unwinder_flush(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, uint64_t *addrs, size_t max,
                          bool force, size_t max_samples, SampleUnwindEmit emit, void *userdata) {
        size_t i;
        int r = 0; /* the first error of emit: it emits no more */
        bool more = false;

        for (i = 0; i < u->n_pending; i++) {
                if (i == max_samples) {
                        more = true; /* the rest in the caller's next slice */
                        break;
                }
                SampleUnwindPending *p = &u->pending[i];
                size_t n;

                if (p->sample.n_regs == PERF_REGS_UNWIND_N && p->sample.regs_abi == PERF_SAMPLE_REGS_ABI_64)
                        p->sample.regs = p->regs;
                if (p->fp ? !sample_stack_build_fp(u->tables, u->owner, maps, kernel, force, &p->sample, addrs, max, &n)
                          : !build(u, maps, kernel, force, &p->sample, addrs, max, &n))
                        break; /* its table is on its way: the tables' listener flushes again */
                if (n > 0 && r >= 0) {
                        r = emit(&p->sample, addrs, n, userdata);
                        if (r > 0)
                                r = 0;
                }
                u->pending_bytes -= pending_bytes(p);
                pending_free(p);
        }
        if (i > 0) {
                memmove(u->pending, u->pending + i, (u->n_pending - i) * sizeof(*u->pending));
                u->n_pending -= i;
        }
        if (u->n_pending == 0)
                u->pending_bytes = 0;
        return r < 0 ? r : more;
}

void sample_unwinder_prepare(SampleUnwinder *u, const ProcessMaps *maps, int32_t pid, uint64_t address) {
        const ProcessMapping *m = process_maps_lookup(maps, pid, address);
        if (m)
                (void) unwind_tables_request(u->tables, u->owner, pid, m, false);
}

void sample_unwinder_prepare_all(SampleUnwinder *u, const ProcessMaps *maps) {
        size_t n_pids = 0;
        const int32_t *pids = process_maps_get_pids(maps, &n_pids);
        for (size_t i = 0; i < n_pids; i++) {
                size_t n = 0;
                const ProcessMapping *m = process_maps_get(maps, pids[i], &n);
                for (size_t j = 0; j < n; j++)
                        (void) unwind_tables_request(u->tables, u->owner, pids[i], &m[j], false);
        }
}

void sample_unwinder_done(SampleUnwinder *u) {
        for (size_t i = 0; i < u->n_pending; i++)
                pending_free(&u->pending[i]);
        free(u->pending);
        u->pending = NULL;
        u->n_pending = u->allocated_pending = u->pending_bytes = 0;
}
