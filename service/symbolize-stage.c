/* symbolize-stage.c: glue between a Recording (address set, process maps,
 * pinned files, options, authorization) and the symbolization engine. */
#include "symbolize-stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "cleanup.h"
#include "debug-trees.h"
#include "symbolize.h"

#define STAGE_MAX_TREES 4

typedef struct StageProgress {
        Recording *recording;
        int64_t last_ms;
} StageProgress;

static int64_t monotonic_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Progress signals at most every 100 ms (and at both ends), flushed at once:
 * the stage runs synchronously, so they would otherwise arrive together. */
static void stage_progress(uint64_t done, uint64_t total, void *userdata) {
        StageProgress *p = userdata;
        int64_t now = monotonic_ns() / 1000000;
        if (done != 0 && done != total && now - p->last_ms < 100)
                return;
        p->last_ms = now;
        recording_emit_progress(p->recording, "symbolize", done, total);
        if (p->recording->manager && p->recording->manager->bus)
                (void) sd_bus_flush(p->recording->manager->bus);
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

static int stage_tree_open(void *userdata, const char *path, char *shown, size_t shown_size, char *why, size_t why_size) {
        struct StageTreeSlot *s = userdata;
        return debug_trees_open(s->resolver, s->pid, s->tree, path, shown, shown_size, why, why_size);
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

static const char *unavailable_reason(const Recording *r, const ProcessMapping *m) {
        if (!m->filename || m->filename[0] == '\0')
                return "anonymous memory (no file; JIT code?)";
        if (m->filename[0] == '[')
                return "no file backs this mapping";
        const char *changed = pinned_files_get_failure_reason(r->pinned, makedev(m->dev_major, m->dev_minor), m->inode);
        if (changed)
                return changed;
        return "the mapped file could not be pinned while the process ran";
}

static SymbolizeMapping symbolize_mapping_of(Recording *r, int32_t pid, const ProcessMapping *m) {
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
                .why_unavailable = unavailable_reason(r, m),
                .build_id = m->build_id_size ? m->build_id : NULL,
                .build_id_size = m->build_id_size,
        };
}

int stage_symbolize(Recording *r) {
        if (!r->options.symbolize || !r->writer || !r->addresses)
                return 0;
        size_t n_addrs = 0;
        const AddressSetEntry *entries = address_set_get_entries(r->addresses, &n_addrs);

        /* every mapping of every process */
        size_t n_pids = 0, n_maps = 0;
        const int32_t *pids = r->maps ? process_maps_get_pids(r->maps, &n_pids) : NULL;
        _cleanup_free_ int32_t *pid_copy = malloc((n_pids ? n_pids : 1) * sizeof(int32_t));
        if (!pid_copy)
                return -ENOMEM;
        if (n_pids)
                memcpy(pid_copy, pids, n_pids * sizeof(int32_t));
        for (size_t i = 0; i < n_pids; i++) {
                size_t n = 0, n_retired = 0;
                (void) process_maps_get(r->maps, pid_copy[i], &n);
                (void) process_maps_get_retired(r->maps, pid_copy[i], &n_retired);
                n_maps += n + n_retired;
        }
        _cleanup_free_ SymbolizeMapping *maps = malloc((n_maps ? n_maps : 1) * sizeof *maps);
        _cleanup_free_ SymbolizeAddress *addrs = malloc((n_addrs ? n_addrs : 1) * sizeof *addrs);
        if (!maps || !addrs)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n_pids; i++) {
                size_t n = 0, n_retired = 0;
                const ProcessMapping *pm = process_maps_get(r->maps, pid_copy[i], &n);
                size_t first = k;
                for (size_t j = 0; j < n; j++)
                        maps[k++] = symbolize_mapping_of(r, pid_copy[i], &pm[j]);
                /* Before an exec: the old image's mappings, where nothing
                 * newer lies (an address means one thing per pid in the
                 * capture's symbol tables). */
                const ProcessMapping *old = process_maps_get_retired(r->maps, pid_copy[i], &n_retired);
                for (size_t j = 0; j < n_retired; j++) {
                        bool overlaps = false;
                        for (size_t q = first; q < k && !overlaps; q++)
                                overlaps = old[j].start < maps[q].end && maps[q].start < old[j].end;
                        if (!overlaps)
                                maps[k++] = symbolize_mapping_of(r, pid_copy[i], &old[j]);
                }
        }
        for (size_t i = 0; i < n_addrs; i++)
                addrs[i] = (SymbolizeAddress) {
                        .pid = entries[i].pid,
                        .address = entries[i].address,
                        .kernel = entries[i].pid == ADDRESS_SET_KERNEL_PID,
                        .return_address = entries[i].return_address,
                };

        SymbolTableBuilder *b = NULL;
        int ret = symbol_table_builder_new(&b);
        if (ret < 0)
                return ret;
        for (size_t i = 0; i < n_pids; i++)
                if ((ret = symbol_table_builder_add_pid(b, pid_copy[i])) < 0)
                        goto out;
        StageProgress progress = { .recording = r };
        StageTrees trees = { .resolver = r->resolver };
        SymbolizeOptions o = {
                .helper = r->manager ? r->manager->helper_config : (HelperClientConfig) {},
                .debug = { .debuginfod = r->options.debuginfod, .log = r->resolver ? stage_debug_log : NULL,
                           .log_userdata = r->resolver },
                .debug_trees = r->resolver ? stage_debug_trees : NULL,
                .debug_trees_userdata = &trees,
                .kernel_symbols = r->auth.kernel,
                .progress = stage_progress,
                .userdata = &progress,
        };
        SymbolizeStats st = {};
        int64_t t0 = monotonic_ns();
        ret = symbolize_addresses(&o, maps, k, addrs, n_addrs, b, &st);
        if (ret < 0)
                goto out;
        ret = symbol_table_builder_write(b, r->writer, monotonic_ns());
        fprintf(stderr,
                "periscoped: recording %u: symbolized %llu addresses (%llu named, %llu unresolved) in %llu files, "
                "%llu debug files, %llu helper failures, %lld ms\n",
                r->id, (unsigned long long) st.addresses, (unsigned long long) st.resolved,
                (unsigned long long) st.unresolved, (unsigned long long) st.files,
                (unsigned long long) st.debug_files, (unsigned long long) st.helper_failures,
                (long long) ((monotonic_ns() - t0) / 1000000));
out:
        symbol_table_builder_free(b);
        return ret;
}
