/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-stage.c: glue between a recording's data (address set, process
 * maps, pinned files) and the symbolization engine. */
#include "symbolize-stage.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "basic.h"
#include "resolver.h"
#include "jit-sources.h"
#include "fiber.h"
#include "symbolize-addresses.h"

#define STAGE_MAX_TREES 4

typedef struct StageProgress {
        SymbolizeStageProgress func;
        void *userdata;
        int64_t last_ms;
} StageProgress;

/* At most every 100 ms (and at both ends). */
static void stage_progress(uint64_t done, uint64_t total, void *userdata) {
        StageProgress *p = userdata;
        int64_t now = now_monotonic_ms();
        if (done != 0 && done != total && now - p->last_ms < 100)
                return;
        p->last_ms = now;
        if (p->func)
                p->func(done, total, p->userdata);
}

/* The debug-file trees of one process, for symbolize_addresses(). */
typedef struct StageTrees {
        Resolver *resolver;
        struct StageTreeSlot {
                Resolver *resolver;
                pid_t pid;
                DebugTree tree;
        } slots[STAGE_MAX_TREES];
} StageTrees;

static int stage_tree_open(void *userdata, const char *path, char *shown, size_t shown_size, char **ret_why) {
        struct StageTreeSlot *s = userdata;
        return debug_trees_open(s->resolver, s->pid, s->tree, path, shown, shown_size, ret_why);
}

static size_t stage_debug_trees(void *userdata, int32_t pid, DebugFileTree *trees, size_t max) {
        StageTrees *st = userdata;
        DebugTree kinds[STAGE_MAX_TREES];
        size_t n = debug_trees_list(st->resolver, pid, kinds, max < STAGE_MAX_TREES ? max : STAGE_MAX_TREES);
        for (size_t i = 0; i < n; i++) {
                st->slots[i] = (struct StageTreeSlot) { st->resolver, pid, kinds[i] };
                trees[i] = (DebugFileTree) {
                        .source = debug_tree_to_string(st->resolver, pid, kinds[i]),
                        .holds_binary = kinds[i] == DEBUG_TREE_ROOT,
                        .open = stage_tree_open,
                        .userdata = &st->slots[i],
                };
                for (size_t d = 0; d < DEBUG_FILE_TREE_MAX_DIRS; d++)
                        trees[i].debug_dirs[d] = debug_tree_debug_dir(st->resolver, pid, kinds[i], d);
        }
        return n;
}

static void stage_debug_log(void *userdata, const char *message) {
        resolver_log(userdata, message);
}

static const char *unavailable_reason(const SymbolizeStageInput *in, const ProcessMapping *m) {
        if (process_mapping_name_is_anonymous(m->filename))
                return "anonymous executable memory (JIT?) no perf map names: run node with --perf-basic-prof, "
                       "python3 with -X perf (docs/jit.md)";
        if (m->filename[0] == '[')
                return "no file backs this mapping";
        const char *changed = pinned_files_get_failure_reason(in->pinned, makedev(m->dev_major, m->dev_minor), m->inode);
        if (changed)
                return changed;
        return "the mapped file could not be pinned while the process ran";
}

static SymbolizeMapping symbolize_mapping_of(const SymbolizeStageInput *in, int32_t pid, const ProcessMapping *m) {
        const PinnedFile *pin = m->pinned;
        return (SymbolizeMapping) {
                .pid = pid,
                .start = m->start,
                .end = m->end,
                .pgoff = m->pgoff,
                .fd = pin ? pin->fd : -1,
                .path = pin ? pin->path : m->filename,
                .method = pin ? pinned_file_how_to_string(pin->how) : "not pinned",
                .verdict = !pin ? "no file"
                           : pin->how == PINNED_VIA_PROCESS_MEMORY ? "image read from the process"
                           : pin->identity_checked ? "device+inode match"
                                                   : "identity not checked",
                /* the vdso's bytes are what the process had mapped */
                .verified = pin && (pin->identity_checked || pin->how == PINNED_VIA_PROCESS_MEMORY),
                .why_unavailable = unavailable_reason(in, m),
                .build_id = m->build_id_size ? m->build_id : NULL,
                .build_id_size = m->build_id_size,
        };
}

static void stage_yield(void *userdata) {
        fiber_yield(userdata);
}

/* The stage's work; on a fiber when fiber is not NULL. */
static int stage_run(const SymbolizeStageInput *in, Fiber *fiber, SymbolizeStageProgress progress_func,
                     void *userdata, SymbolizeStats *ret_stats, int64_t *ret_msec) {
        assert(in && in->writer && in->addresses && ret_stats && ret_msec);
        *ret_stats = (SymbolizeStats) {};
        *ret_msec = 0;
        size_t n_addrs = 0;
        const AddressSetEntry *entries = address_set_get_entries(in->addresses, &n_addrs);

        /* every mapping of every process */
        size_t n_pids = 0, n_maps = 0;
        const int32_t *pids = in->maps ? process_maps_get_pids(in->maps, &n_pids) : NULL;
        _cleanup_free_ int32_t *pid_copy = malloc((n_pids ? n_pids : 1) * sizeof(int32_t));
        if (!pid_copy)
                return -ENOMEM;
        if (n_pids)
                memcpy(pid_copy, pids, n_pids * sizeof(int32_t));
        for (size_t i = 0; i < n_pids; i++) {
                size_t n = 0, n_retired = 0;
                (void) process_maps_get(in->maps, pid_copy[i], &n);
                (void) process_maps_get_retired(in->maps, pid_copy[i], &n_retired);
                n_maps += n + n_retired;
        }
        _cleanup_free_ SymbolizeMapping *maps = malloc((n_maps ? n_maps : 1) * sizeof *maps);
        _cleanup_free_ SymbolizeAddress *addrs = malloc((n_addrs ? n_addrs : 1) * sizeof *addrs);
        if (!maps || !addrs)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n_pids; i++) {
                size_t n = 0, n_retired = 0;
                const ProcessMapping *pm = process_maps_get(in->maps, pid_copy[i], &n);
                size_t first = k;
                for (size_t j = 0; j < n; j++)
                        maps[k++] = symbolize_mapping_of(in, pid_copy[i], &pm[j]);
                /* Before an exec: the old image's mappings, where nothing
                 * newer lies (an address means one thing per pid in the
                 * capture's symbol tables). */
                const ProcessMapping *old = process_maps_get_retired(in->maps, pid_copy[i], &n_retired);
                for (size_t j = 0; j < n_retired; j++) {
                        bool overlaps = false;
                        for (size_t q = first; q < k && !overlaps; q++)
                                overlaps = old[j].start < maps[q].end && maps[q].start < old[j].end;
                        if (!overlaps)
                                maps[k++] = symbolize_mapping_of(in, pid_copy[i], &old[j]);
                }
        }
        for (size_t i = 0; i < n_addrs; i++) {
                if (fiber && (i & 1023) == 1023)
                        fiber_yield(fiber);
                addrs[i] = (SymbolizeAddress) {
                        .pid = entries[i].pid,
                        .address = entries[i].address,
                        .kernel = entries[i].pid == ADDRESS_SET_KERNEL_PID,
                        .return_address = entries[i].return_address,
                };
        }

        SymbolTableBuilder *b = NULL;
        JitSources jit = {};
        int r = symbol_table_builder_new(&b);
        if (r < 0)
                return r;
        if (fiber)
                symbol_table_builder_set_yield(b, stage_yield, fiber);
        for (size_t i = 0; i < n_pids; i++)
                if ((r = symbol_table_builder_add_pid(b, pid_copy[i])) < 0)
                        goto out;
        if ((r = jit_sources_collect(&jit, in->maps, in->jit_files)) < 0)
                goto out;
        StageProgress progress = { .func = progress_func, .userdata = userdata };
        StageTrees trees = { .resolver = in->resolver };
        SymbolizeOptions o = {
                .helper = in->helper,
                .debug = { .debuginfod = in->debuginfod,
                           .log = in->resolver ? stage_debug_log : NULL,
                           .log_userdata = in->resolver,
                           /* a caller other than root: its rights for what it names */
                           .as_caller = in->resolver ? resolver_get_caller_opener(in->resolver) : NULL },
                .debug_trees = in->resolver ? stage_debug_trees : NULL,
                .debug_trees_userdata = &trees,
                .kernel_symbols = in->kernel_symbols,
                .jit_sources = jit.sources,
                .n_jit_sources = jit.n,
                .jit_named = jit_sources_named,
                .jit_userdata = &jit,
                .progress = stage_progress,
                .userdata = &progress,
                .yield = fiber ? stage_yield : NULL,
                .yield_userdata = fiber,
                .cut = in->cut,
        };
        if (fiber) {
                /* the helper's answers and debuginfod downloads are awaited from the loop */
                o.helper.wait_readable = fiber_wait_readable;
                o.helper.wait_readable_userdata = fiber;
                o.debug.wait_readable = fiber_wait_readable;
                o.debug.wait_readable_userdata = fiber;
        }
        int64_t t0 = now_monotonic_ms();
        r = symbolize_addresses(&o, maps, k, addrs, n_addrs, b, ret_stats);
        if (r < 0)
                goto out;
        r = symbol_table_builder_write(b, in->writer, now_monotonic_ns());
        if (r >= 0)
                r = jit_sources_write_jitmaps(&jit, in->writer, now_monotonic_ns());
        *ret_msec = now_monotonic_ms() - t0;
out:
        jit_sources_done(&jit);
        symbol_table_builder_free(b);
        return r;
}

int symbolize_stage_run(const SymbolizeStageInput *in, SymbolizeStageProgress progress, void *userdata,
                        SymbolizeStats *ret_stats, int64_t *ret_msec) {
        return stage_run(in, NULL, progress, userdata, ret_stats, ret_msec);
}

struct SymbolizeJob {
        SymbolizeStageInput in;
        Fiber *fiber;
        SymbolizeStageProgress progress;
        SymbolizeStageDone done;
        void *userdata;
        SymbolizeStats stats;
        int64_t msec;
};

static int job_body(Fiber *f, void *userdata) {
        SymbolizeJob *j = userdata;
        return stage_run(&j->in, f, j->progress, j->userdata, &j->stats, &j->msec);
}

static void job_done(int result, void *userdata) {
        SymbolizeJob *j = userdata;
        j->done(result, &j->stats, j->msec, j->userdata);
        free(j);
}

int symbolize_stage_start(sd_event *e, const SymbolizeStageInput *in, SymbolizeStageProgress progress,
                          SymbolizeStageDone done, void *userdata, SymbolizeJob **ret) {
        assert(e && in && done && ret);
        _cleanup_free_ SymbolizeJob *j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        *j = (SymbolizeJob) { .in = *in, .progress = progress, .done = done, .userdata = userdata };
        int r = fiber_start(e, "symbolizing a recording", job_body, job_done, j, &j->fiber);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(j);
        return 0;
}

void symbolize_job_cancel(SymbolizeJob *j) {
        fiber_cancel(j->fiber);
}
