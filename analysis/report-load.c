/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-load.c: reads a capture into the model, a ReportProfile, in one
 * pass. A sample takes the name its thread had at its time, so a thread
 * name that comes in the file after a sample it names (the rings of other
 * CPUs) sends the load back to two passes: the names first, then the
 * rest. */
#include "report-profile.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "capture-autoptr.h"
#include "memory-replay.h"
#include "report-containers.h"
#include "report-progress.h"

static guint32 thread_lookup(ReportProfile *p, int32_t pid, int32_t tid, int64_t time);

/* The last answer of report_profile_thread_at() for a tid, while no
 * rename of the thread or of its process's main thread falls between. */
typedef struct ThreadCache {
        int32_t pid;
        int64_t lo, hi;
        guint32 index;
        int64_t last;      /* the latest time a name of this tid was asked for */
        int64_t *pid_last; /* the same for any thread of pid (in ReportProfile.pid_last) */
} ThreadCache;

/* One name of a thread from a thread-name frame. */
typedef struct ReportRename {
        int64_t time;
        int32_t pid;
        char *name;
} ReportRename;

static void rename_clear(gpointer p) {
        g_free(((ReportRename *) p)->name);
}

static void thread_free(gpointer p) {
        ReportThread *t = p;
        g_free(t->name);
        g_free(t);
}

static guint raw_stack_hash(gconstpointer v) {
        const ReportRawStack *s = v;
        guint h = ((guint) s->pid * 31u + s->thread) * 31u + s->n_addrs;
        for (guint32 i = 0; i < s->n_addrs; i++)
                h = h * 1000003u ^ (guint) (s->addrs[i] ^ (s->addrs[i] >> 32));
        return h;
}

static gboolean raw_stack_equal(gconstpointer a, gconstpointer b) {
        const ReportRawStack *x = a, *y = b;
        return x->pid == y->pid && x->thread == y->thread && x->n_addrs == y->n_addrs &&
               memcmp(x->addrs, y->addrs, x->n_addrs * sizeof(uint64_t)) == 0;
}

static void report_map_free(gpointer p) {
        ReportMap *m = p;
        g_free(m->filename);
        g_free(m);
}

void report_profile_free(ReportProfile *p) {
        if (!p)
                return;
        g_free(p->path);
        g_clear_pointer(&p->comms, g_hash_table_unref);
        g_clear_pointer(&p->cmdlines, g_hash_table_unref);
        g_clear_pointer(&p->maps, g_hash_table_unref);
        g_clear_pointer(&p->jit, g_hash_table_unref);
        g_clear_pointer(&p->stacks, g_hash_table_unref);
        g_clear_pointer(&p->renames, g_hash_table_unref);
        g_clear_pointer(&p->threads, g_ptr_array_unref);
        g_clear_pointer(&p->thread_index, g_hash_table_unref);
        g_clear_pointer(&p->thread_cache, g_hash_table_unref);
        g_clear_pointer(&p->pid_last, g_hash_table_unref);
        symbol_table_free(p->symbols);
        g_free(p->symbols_error);
        g_free(p->load_warning);
        g_free(p->capture_time);
        g_clear_pointer(&p->events, g_array_unref);
        g_clear_pointer(&p->event_addrs, g_array_unref);
        g_clear_pointer(&p->off_cpu, g_array_unref);
        g_clear_pointer(&p->off_cpu_addrs, g_array_unref);
        g_clear_pointer(&p->off_cpu_threads, g_array_unref);
        g_clear_pointer(&p->stats, capture_stats_free);
        g_clear_pointer(&p->marks, g_array_unref);
        g_clear_pointer(&p->logs, g_array_unref);
        g_clear_pointer(&p->counter_defs, g_array_unref);
        g_clear_pointer(&p->counter_values, g_array_unref);
        g_clear_pointer(&p->container_labels, g_hash_table_unref);
        g_clear_pointer(&p->parents, g_hash_table_unref);
        g_clear_pointer(&p->pid_samples, g_hash_table_unref);
        g_free(p);
}

/* "comm" of a PROCESS frame: Sysprof stores either the comm or the command
 * line, so take the basename of the first word. */
static char *comm_from_cmdline(const char *cmdline) {
        const char *end = cmdline + strcspn(cmdline, " ");
        g_autofree char *first = g_strndup(cmdline, (gsize) (end - cmdline));
        return g_path_get_basename(first);
}

static char *jit_key(int32_t pid, uint64_t addr) {
        return g_strdup_printf("%d:%" G_GINT64_MODIFIER "x", pid, (guint64) addr);
}

static void mark_clear(gpointer m) {
        ReportMark *x = m;
        g_free(x->group);
        g_free(x->name);
        g_free(x->message);
}

static void log_clear(gpointer l) {
        g_free(((ReportLog *) l)->domain);
}

/* The stack (pid, thread, addrs) of p, added with a count of 0 if new. */
static ReportRawStack *intern_stack(ReportProfile *p, int32_t pid, int32_t tid, guint32 thread, const uint64_t *addrs,
                                    gsize n) {
        ReportRawStack *key = g_malloc(sizeof(ReportRawStack) + n * sizeof(uint64_t));
        key->pid = pid;
        key->tid = tid;
        key->thread = thread;
        key->n_addrs = (guint32) n;
        key->count = 0;
        key->events = 0;
        memcpy(key->addrs, addrs, n * sizeof(uint64_t));
        ReportRawStack *have = g_hash_table_lookup(p->stacks, key);
        if (have) {
                g_free(key);
                return have;
        }
        g_hash_table_add(p->stacks, key);
        return key;
}

static void count_stack(ReportProfile *p, ReportRawStack *s, guint64 weight) {
        s->count += weight;
        s->events++;
        p->n_samples += weight;
        p->n_events++;
}

/* An allocation whose fate is known: counted when it is the one weighed. */
static void count_allocation(gpointer stack, uint64_t size, MemoryFate fate, gpointer userdata) {
        ReportProfile *p = userdata;
        if ((p->weight == REPORT_WEIGHT_LEAKED_BYTES && fate == MEMORY_FATE_LEAKED) ||
            (p->weight == REPORT_WEIGHT_TEMPORARY_BYTES && fate == MEMORY_FATE_TEMPORARY))
                count_stack(p, stack, size);
}

static gboolean stack_uncounted(gpointer key, gpointer value, gpointer userdata) {
        const ReportRawStack *s = key;
        return s->events == 0;
}

/* Keeps f (a SAMPLE or ALLOCATION) as an event; stack: its interned
 * stack, or NULL to keep a copy of its addresses. An allocation a memory
 * weight will count takes its thread's name now, as a sample does. */
static void keep_event(ReportProfile *p, const CaptureFrame *f, const ReportRawStack *stack) {
        gboolean alloc = f->type == CAPTURE_FRAME_ALLOCATION;
        ReportEvent e = {
                .time = f->time,
                .pid = f->pid,
                .tid = alloc ? f->allocation.tid : f->sample.tid,
                .cpu = f->cpu,
                .allocation = alloc,
                .size = alloc ? f->allocation.alloc_size : 0,
                .block = alloc ? f->allocation.alloc_addr : 0,
                .n_addrs = alloc ? f->allocation.n_addrs : f->sample.n_addrs,
                .stack = stack,
        };
        if (alloc && e.size > 0 && report_weight_is_memory(p->weight))
                e.thread = report_profile_thread_at(p, f->pid, e.tid, f->time);
        if (!stack) {
                e.addrs_at = p->event_addrs->len;
                g_array_append_vals(p->event_addrs, alloc ? f->allocation.addrs : f->sample.addrs, e.n_addrs);
        }
        g_array_append_val(p->events, e);
}

/* `periscope.offcpu.stats`: one line per thread. */
static void add_off_cpu_threads(ReportProfile *p, const char *text) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                ReportOffCpuThread t = {};
                unsigned tid, pid;
                unsigned long long v[7];
                if (sscanf(*l,
                           "thread=%u pid=%u blocked=%llu blocked_ns=%llu blocked_short=%llu blocked_short_ns=%llu "
                           "runnable=%llu runnable_ns=%llu stacks=%llu",
                           &tid, &pid, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 9)
                        continue;
                t = (ReportOffCpuThread){ .pid = (int32_t) pid,
                                          .tid = (int32_t) tid,
                                          .blocked = v[0],
                                          .blocked_ns = v[1],
                                          .blocked_short = v[2],
                                          .blocked_short_ns = v[3],
                                          .runnable = v[4],
                                          .runnable_ns = v[5],
                                          .stacks = v[6] };
                g_array_append_val(p->off_cpu_threads, t);
        }
}

/* The METADATA frames the report reads: statistics and off-CPU data. */
static void add_metadata(ReportProfile *p, const CaptureFrame *f) {
        CaptureStats *stats = NULL;
        if (capture_frame_get_stats(f, CAPTURE_STATS_ID, &stats) != 0) {
                /* the last block counts; one that cannot be read leaves none */
                capture_stats_free(p->stats);
                p->stats = stats;
                return;
        }
        if (strcmp(f->metadata.id, CAPTURE_OFF_CPU_STATS_ID) == 0) {
                add_off_cpu_threads(p, f->metadata.metadata ? f->metadata.metadata : "");
                return;
        }
        if (strcmp(f->metadata.id, CAPTURE_OFF_CPU_ID) != 0)
                return;
        g_autofree CaptureOffCpu *oc = g_new(CaptureOffCpu, 1);
        if (capture_frame_get_off_cpu(f, oc) <= 0)
                return; /* another frame, or a malformed one: left out */
        ReportOffCpu o = {
                .time = f->time,
                .pid = f->pid,
                .tid = oc->tid,
                .cpu = f->cpu,
                .thread = report_profile_thread_at(p, f->pid, oc->tid, f->time),
                .state = oc->state,
                .duration_ns = oc->duration_ns,
                .n_addrs = (guint32) oc->n_addrs,
                .addrs_at = p->off_cpu_addrs->len,
        };
        g_array_append_vals(p->off_cpu_addrs, oc->addrs, oc->n_addrs);
        g_array_append_val(p->off_cpu, o);
        if (p->weight != REPORT_WEIGHT_OFF_CPU_NS || oc->state != CAPTURE_OFF_CPU_BLOCKED)
                return;
        if (oc->n_addrs == 0) {
                p->off_cpu_unstacked_ns += oc->duration_ns;
                return;
        }
        count_stack(p, intern_stack(p, f->pid, oc->tid, o.thread, oc->addrs, oc->n_addrs), oc->duration_ns);
}

/* Keeps what the views besides the stacks read: marks, logs, counters. */
static void keep_frame(ReportProfile *p, const CaptureFrame *f) {
        switch (f->type) {
        case CAPTURE_FRAME_MARK: {
                ReportMark m = { .time = f->time,
                                 .duration = f->mark.duration,
                                 .pid = f->pid,
                                 .group = g_strdup(f->mark.group),
                                 .name = g_strdup(f->mark.name),
                                 .message = g_strdup(f->mark.message) };
                g_array_append_val(p->marks, m);
                break;
        }
        case CAPTURE_FRAME_LOG: {
                ReportLog l = { .pid = f->pid, .severity = f->log.severity, .domain = g_strdup(f->log.domain) };
                g_array_append_val(p->logs, l);
                break;
        }
        case CAPTURE_FRAME_CTRDEF:
                for (uint16_t i = 0; i < f->ctrdef.n_counters; i++) {
                        ReportCounterDef d = { .pid = f->pid, .def = f->ctrdef.counters[i] };
                        g_array_append_val(p->counter_defs, d);
                }
                break;
        case CAPTURE_FRAME_CTRSET:
                for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                        ReportCounterValue v = { .time = f->time, .value = f->ctrset.values[i] };
                        g_array_append_val(p->counter_values, v);
                }
                break;
        default:
                break;
        }
}

static void count_pid_sample(ReportProfile *p, int32_t pid) {
        guint64 *n = g_hash_table_lookup(p->pid_samples, GINT_TO_POINTER(pid));
        if (!n) {
                n = g_new0(guint64, 1);
                g_hash_table_insert(p->pid_samples, GINT_TO_POINTER(pid), n);
        }
        (*n)++;
}

static gboolean rename_in_time(ReportProfile *p, int32_t tid, int32_t pid, int64_t time, const char *name, size_t len);

/* What one pass gathers besides the model. */
typedef struct LoadPass {
        GHashTable *container_chunks;
        SymbolChunks *chunks; /* NULL: the names and tables were read first */
} LoadPass;

/* Adds f to p: 0, -EAGAIN when a thread name came too late for one
 * pass, -ENOMEM. */
static int add_frame(ReportProfile *p, const CaptureFrame *f, LoadPass *pass) {
        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE: {
                ReportRawStack *s = NULL;
                count_pid_sample(p, f->pid);
                if (p->weight == REPORT_WEIGHT_SAMPLES) {
                        s = intern_stack(p, f->pid, f->sample.tid,
                                         report_profile_thread_at(p, f->pid, f->sample.tid, f->time), f->sample.addrs,
                                         f->sample.n_addrs);
                        count_stack(p, s, 1);
                }
                if (p->keep_samples)
                        keep_event(p, f, s);
                break;
        }
        case CAPTURE_FRAME_ALLOCATION:
                p->has_allocations = TRUE;
                keep_event(p, f, NULL); /* weighed once all are read */
                break;
        case CAPTURE_FRAME_FILE_CHUNK:
                report_containers_collect(p, pass->container_chunks, f);
                if (pass->chunks)
                        return symbol_chunks_add(pass->chunks, f);
                break;
        case CAPTURE_FRAME_METADATA: {
                int32_t tid;
                const char *name;
                size_t len;
                if (pass->chunks && capture_frame_get_thread_name(f, &tid, &name, &len, NULL) > 0 &&
                    !rename_in_time(p, tid, f->pid, f->time, name, len))
                        return -EAGAIN;
                add_metadata(p, f); /* statistics, off-CPU intervals */
                break;
        }
        case CAPTURE_FRAME_MARK:
        case CAPTURE_FRAME_LOG:
        case CAPTURE_FRAME_CTRDEF:
        case CAPTURE_FRAME_CTRSET:
                keep_frame(p, f);
                break;
        case CAPTURE_FRAME_PROCESS:
                g_hash_table_replace(p->comms, GINT_TO_POINTER(f->pid), comm_from_cmdline(f->process.cmdline));
                g_hash_table_replace(p->cmdlines, GINT_TO_POINTER(f->pid), g_strdup(f->process.cmdline));
                break;
        case CAPTURE_FRAME_FORK: {
                g_hash_table_insert(p->parents, GINT_TO_POINTER(f->fork.child_pid), GINT_TO_POINTER(f->pid));
                /* A child keeps its parent's name until it says otherwise. */
                const char *parent = g_hash_table_lookup(p->comms, GINT_TO_POINTER(f->pid));
                if (parent && !g_hash_table_contains(p->comms, GINT_TO_POINTER(f->fork.child_pid)))
                        g_hash_table_insert(p->comms, GINT_TO_POINTER(f->fork.child_pid), g_strdup(parent));
                GPtrArray *maps = g_hash_table_lookup(p->maps, GINT_TO_POINTER(f->pid));
                if (maps && !g_hash_table_contains(p->maps, GINT_TO_POINTER(f->fork.child_pid))) {
                        GPtrArray *copy = g_ptr_array_new_with_free_func(report_map_free);
                        for (guint i = 0; i < maps->len; i++) {
                                const ReportMap *m = g_ptr_array_index(maps, i);
                                ReportMap *c = g_new(ReportMap, 1);
                                *c = *m;
                                c->filename = g_strdup(m->filename);
                                g_ptr_array_add(copy, c);
                        }
                        g_hash_table_insert(p->maps, GINT_TO_POINTER(f->fork.child_pid), copy);
                }
                break;
        }
        case CAPTURE_FRAME_MAP: {
                GPtrArray *maps = g_hash_table_lookup(p->maps, GINT_TO_POINTER(f->pid));
                if (!maps) {
                        maps = g_ptr_array_new_with_free_func(report_map_free);
                        g_hash_table_insert(p->maps, GINT_TO_POINTER(f->pid), maps);
                }
                ReportMap *m = g_new(ReportMap, 1);
                m->start = f->map.start;
                m->end = f->map.end;
                m->offset = f->map.offset;
                m->filename = g_strdup(f->map.filename);
                g_ptr_array_add(maps, m);
                break;
        }
        case CAPTURE_FRAME_JITMAP:
                for (uint32_t i = 0; i < f->jitmap.n_entries; i++)
                        g_hash_table_replace(p->jit, jit_key(f->pid, f->jitmap.entries[i].address),
                                             g_strdup(f->jitmap.entries[i].name));
                break;
        default:
                break;
        }
        return 0;
}

static int rename_cmp(gconstpointer a, gconstpointer b) {
        const ReportRename *x = a, *y = b;
        return x->time < y->time ? -1 : x->time > y->time;
}

static void sort_renames(gpointer key, gpointer value, gpointer userdata) {
        g_array_sort(value, rename_cmp); /* stable: frames of one time keep their order */
}

static GArray *renames_of(ReportProfile *p, int32_t tid) {
        GArray *a = g_hash_table_lookup(p->renames, GINT_TO_POINTER(tid));
        if (!a) {
                a = g_array_new(FALSE, FALSE, sizeof(ReportRename));
                g_array_set_clear_func(a, rename_clear);
                g_hash_table_insert(p->renames, GINT_TO_POINTER(tid), a);
        }
        return a;
}

/* The symbol tables of the chunks a pass gathered; r: how it ended. */
static int symbols_from_chunks(ReportProfile *p, CaptureReader *reader, SymbolChunks *chunks, int r) {
        if (r < 0 && symbol_chunks_set_read_error(chunks, r, capture_reader_error(reader)) < 0)
                return -ENOMEM;
        g_autofree char *msg = NULL;
        r = symbol_chunks_load(chunks, &p->symbols, &msg);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                p->symbols_errno = r;
                p->symbols_error = g_strdup(msg ? msg : g_strerror(-r));
        }
        return 0;
}

/* The thread-name frames, before the samples: a sample takes the name its
 * thread had at its time, wherever the frame sits in the file; and the
 * symbol tables, in the same pass. */
static int load_renames_and_symbols(ReportProfile *p, CaptureReader *reader) {
        g_autoptr(SymbolChunks) chunks = symbol_chunks_new(capture_reader_get_header(reader)->little_endian);
        if (!chunks)
                return -ENOMEM;
        CaptureFrame f;
        int r;
        while ((r = capture_reader_next(reader, &f)) > 0) {
                r = symbol_chunks_add(chunks, &f);
                if (r < 0)
                        return r;
                int32_t tid;
                const char *name;
                size_t len;
                if (capture_frame_get_thread_name(&f, &tid, &name, &len, NULL) <= 0)
                        continue;
                GArray *a = renames_of(p, tid);
                ReportRename n = { .time = f.time, .pid = f.pid, .name = g_strndup(name, len) };
                g_array_append_val(a, n);
        }
        g_hash_table_foreach(p->renames, sort_renames, NULL);
        capture_reader_rewind(reader);
        return symbols_from_chunks(p, reader, chunks, r);
}

/* The allocations weighed as p->weight says, in file order; a leaked or
 * temporary one once every free is seen. */
static void weigh_allocations(ReportProfile *p) {
        g_autoptr(MemoryReplay) replay = memory_replay_new();
        for (guint i = 0; i < p->events->len; i++) {
                const ReportEvent *e = &g_array_index(p->events, ReportEvent, i);
                if (!e->allocation)
                        continue;
                /* frees (size 0) carry no stack worth weighing */
                ReportRawStack *s =
                        e->size > 0 ? intern_stack(p, e->pid, e->tid, e->thread, report_event_addrs(p, e), e->n_addrs)
                                    : NULL;
                if (p->weight == REPORT_WEIGHT_ALLOCATED_BYTES) {
                        if (s)
                                count_stack(p, s, (guint64) e->size);
                } else
                        memory_replay_add(replay, e, s);
        }
        if (memory_replay_count(replay)) {
                memory_replay_run(replay, count_allocation, p, NULL);
                g_hash_table_foreach_remove(p->stacks, stack_uncounted, NULL);
        }
}

static GHashTable *stacks_new(void) {
        return g_hash_table_new_full(raw_stack_hash, raw_stack_equal, g_free, NULL);
}

void report_profile_reweigh(ReportProfile *p, ReportWeight weight) {
        g_return_if_fail(report_weight_is_memory(p->weight) && report_weight_is_memory(weight));
        g_hash_table_unref(p->stacks);
        p->stacks = stacks_new();
        p->weight = weight;
        p->n_samples = p->n_events = 0;
        weigh_allocations(p);
}

ReportProfile *report_profile_load(const char *path, ReportWeight weight, gboolean progress, GError **error) {
        return report_profile_load_full(path, weight, progress ? REPORT_LOAD_PROGRESS : 0, error);
}

static ReportProfile *profile_new(const char *path, ReportWeight weight, ReportLoadFlags flags,
                                  const CaptureFileHeader *h) {
        ReportProfile *p = g_new0(ReportProfile, 1);
        p->keep_samples = (flags & REPORT_LOAD_EVENTS) != 0;
        p->events = g_array_new(FALSE, FALSE, sizeof(ReportEvent));
        p->event_addrs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        p->path = g_strdup(path);
        p->weight = weight;
        p->comms = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        p->cmdlines = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        p->maps = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
        p->jit = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        p->stacks = stacks_new();
        p->renames = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
        p->threads = g_ptr_array_new_with_free_func(thread_free);
        p->thread_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        p->thread_cache = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        p->off_cpu = g_array_new(FALSE, FALSE, sizeof(ReportOffCpu));
        p->off_cpu_addrs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        p->off_cpu_threads = g_array_new(FALSE, FALSE, sizeof(ReportOffCpuThread));

        p->pid_last = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        p->marks = g_array_new(FALSE, FALSE, sizeof(ReportMark));
        g_array_set_clear_func(p->marks, mark_clear);
        p->logs = g_array_new(FALSE, FALSE, sizeof(ReportLog));
        g_array_set_clear_func(p->logs, log_clear);
        p->counter_defs = g_array_new(FALSE, FALSE, sizeof(ReportCounterDef));
        p->counter_values = g_array_new(FALSE, FALSE, sizeof(ReportCounterValue));
        p->container_labels = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        p->parents = g_hash_table_new(NULL, NULL);
        p->pid_samples = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        p->start_time = h->start_time;
        p->end_time = h->end_time;
        p->last_time = h->start_time;
        p->capture_time = g_strndup(h->capture_time, sizeof(h->capture_time));
        return p;
}

/* Reads reader's frames into p: in one pass, or with names_first the
 * thread names and symbol tables first. -EAGAIN: a thread name came too
 * late for one pass. */
static int load_pass(ReportProfile *p, CaptureReader *reader, gboolean names_first, gboolean progress) {
        g_autoptr(SymbolChunks) chunks = NULL;
        int r;
        if (names_first) {
                r = load_renames_and_symbols(p, reader);
                if (r < 0)
                        return r;
        } else if (!(chunks = symbol_chunks_new(capture_reader_get_header(reader)->little_endian)))
                return -ENOMEM;
        g_autoptr(ReportProgress) bar = report_progress_new("Loading capture", progress);
        uint64_t size = capture_reader_get_size(reader);
        g_autoptr(GHashTable) container_chunks = report_containers_chunks_new();
        LoadPass pass = { container_chunks, chunks };
        CaptureFrame f;
        while ((r = capture_reader_next(reader, &f)) > 0) {
                p->n_frames++;
                p->last_time = MAX(p->last_time, f.time);
                int k = add_frame(p, &f, &pass);
                if (k < 0)
                        return k;
                if ((p->n_frames & 1023) == 0)
                        report_progress_update(bar, f.offset, size);
        }
        if (r < 0) {
                /* Report what could be read (a capture cut short by a crash
                 * is still worth a report) but say so. */
                const char *e = capture_reader_error(reader);
                p->load_error = r;
                p->load_warning = g_strdup(e ? e : g_strerror(-r));
        }
        if (chunks) {
                int k = symbols_from_chunks(p, reader, chunks, r);
                if (k < 0)
                        return k;
        }
        if (report_weight_is_memory(p->weight))
                weigh_allocations(p);
        return 0;
}

ReportProfile *report_profile_load_full(const char *path, ReportWeight weight, ReportLoadFlags flags, GError **error) {
        g_autoptr(CaptureReader) reader = NULL;
        g_autofree char *msg = NULL;
        int r = capture_reader_open_path(path, &reader, &msg);
        if (r < 0) {
                g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(-r), "%s", msg ? msg : g_strerror(-r));
                return NULL;
        }
        const CaptureFileHeader *h = capture_reader_get_header(reader);
        gboolean progress = (flags & REPORT_LOAD_PROGRESS) != 0;
        g_autoptr(ReportProfile) p = profile_new(path, weight, flags, h);
        r = load_pass(p, reader, FALSE, progress);
        if (r == -EAGAIN) {
                g_clear_pointer(&p, report_profile_free);
                capture_reader_rewind(reader);
                p = profile_new(path, weight, flags, h);
                r = load_pass(p, reader, TRUE, progress);
        }
        if (r < 0) {
                g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(-r), "%s: %s", path, g_strerror(-r));
                return NULL;
        }
        return g_steal_pointer(&p);
}

const char *report_profile_get_comm(const ReportProfile *p, int32_t pid) {
        const char *c = g_hash_table_lookup(p->comms, GINT_TO_POINTER(pid));
        return c ? c : "";
}

/* The name of tid (of pid) from its own thread-name frames at time, or NULL. */
static const char *renamed_at(const ReportProfile *p, int32_t pid, int32_t tid, int64_t time) {
        GArray *a = g_hash_table_lookup(p->renames, GINT_TO_POINTER(tid));
        const char *name = NULL;
        for (guint i = 0; a && i < a->len; i++) {
                const ReportRename *r = &g_array_index(a, ReportRename, i);
                if (r->time > time)
                        break;
                if (r->pid == pid) /* a tid reused by another process is another thread */
                        name = r->name;
        }
        return name;
}

const char *report_profile_thread_name(const ReportProfile *p, int32_t pid, int32_t tid, int64_t time,
                                       gboolean *ret_named) {
        const char *name = renamed_at(p, pid, tid, time);
        if (ret_named)
                *ret_named = name != NULL;
        if (!name && tid != pid && pid > 0) /* not renamed yet: the name it took from its creator */
                name = renamed_at(p, pid, pid, time);
        if (!name)
                name = report_profile_get_comm(p, pid);
        return name;
}

gboolean report_profile_thread_of(const ReportProfile *p, int32_t tid, int32_t pid) {
        GArray *a = g_hash_table_lookup(p->renames, GINT_TO_POINTER(tid));
        for (guint i = 0; a && i < a->len; i++)
                if (g_array_index(a, ReportRename, i).pid == pid)
                        return TRUE;
        return FALSE;
}

/* The times around time at which tid's or pid's name changes: [*lo, *hi). */
static void name_interval(const ReportProfile *p, int32_t tid, int64_t time, int64_t *lo, int64_t *hi) {
        GArray *a = g_hash_table_lookup(p->renames, GINT_TO_POINTER(tid));
        for (guint i = 0; a && i < a->len; i++) {
                int64_t t = g_array_index(a, ReportRename, i).time;
                if (t <= time)
                        *lo = MAX(*lo, t);
                else
                        *hi = MIN(*hi, t);
        }
}

static int64_t *pid_last_of(ReportProfile *p, int32_t pid) {
        int64_t *l = g_hash_table_lookup(p->pid_last, GINT_TO_POINTER(pid));
        if (!l) {
                l = g_new(int64_t, 1);
                *l = G_MININT64;
                g_hash_table_insert(p->pid_last, GINT_TO_POINTER(pid), l);
        }
        return l;
}

static guint32 cache_answer(ThreadCache *c, int64_t time) {
        c->last = MAX(c->last, time);
        *c->pid_last = MAX(*c->pid_last, time);
        return c->index;
}

guint32 report_profile_thread_at(ReportProfile *p, int32_t pid, int32_t tid, int64_t time) {
        ThreadCache *c = g_hash_table_lookup(p->thread_cache, GINT_TO_POINTER(tid));
        if (c && c->pid == pid && time >= c->lo && time < c->hi)
                return cache_answer(c, time);
        if (!c) {
                c = g_new(ThreadCache, 1);
                c->last = G_MININT64;
                g_hash_table_insert(p->thread_cache, GINT_TO_POINTER(tid), c);
        }
        *c = (ThreadCache){
                .pid = pid, .lo = G_MININT64, .hi = G_MAXINT64, .last = c->last, .pid_last = pid_last_of(p, pid)
        };
        name_interval(p, tid, time, &c->lo, &c->hi);
        if (pid != tid)
                name_interval(p, pid, time, &c->lo, &c->hi);
        c->index = thread_lookup(p, pid, tid, time);
        return cache_answer(c, time);
}

/* A thread-name frame met in the one pass: FALSE when it names tid (or the
 * threads of process tid) at a time some sample already read was at or
 * after (the load starts again with the names first). Else the answers
 * cached end where it starts, as if it had been known from the start. */
static gboolean rename_in_time(ReportProfile *p, int32_t tid, int32_t pid, int64_t time, const char *name, size_t len) {
        ThreadCache *own = g_hash_table_lookup(p->thread_cache, GINT_TO_POINTER(tid));
        const int64_t *threads = g_hash_table_lookup(p->pid_last, GINT_TO_POINTER(tid));
        if ((own && own->last >= time) || (threads && *threads >= time))
                return FALSE;
        GArray *a = renames_of(p, tid);
        guint at = a->len; /* after the names of the same time: file order */
        while (at > 0 && g_array_index(a, ReportRename, at - 1).time > time)
                at--;
        ReportRename n = { .time = time, .pid = pid, .name = g_strndup(name, len) };
        g_array_insert_val(a, at, n);
        if (own)
                own->hi = MIN(own->hi, time);
        if (threads) {
                GHashTableIter it;
                gpointer key, value;
                g_hash_table_iter_init(&it, p->thread_cache);
                while (g_hash_table_iter_next(&it, &key, &value)) {
                        ThreadCache *c = value;
                        if (c->pid == tid && GPOINTER_TO_INT(key) != tid)
                                c->hi = MIN(c->hi, time);
                }
        }
        return TRUE;
}

static guint32 thread_lookup(ReportProfile *p, int32_t pid, int32_t tid, int64_t time) {
        gboolean named;
        const char *name = report_profile_thread_name(p, pid, tid, time, &named);
        char fallback[32], key[256]; /* per sample: no allocation unless the thread is new */
        if (!*name) {
                snprintf(fallback, sizeof(fallback), "tid %d", (int) tid);
                name = fallback;
        }
        int n = snprintf(key, sizeof(key), "%d/%d/%d/%s", (int) pid, (int) tid, (int) named, name);
        g_autofree char *long_key =
                n >= (int) sizeof(key) ? g_strdup_printf("%d/%d/%d/%s", (int) pid, (int) tid, (int) named, name) : NULL;
        gpointer have = g_hash_table_lookup(p->thread_index, long_key ? long_key : key);
        if (have)
                return GPOINTER_TO_UINT(have) - 1;
        ReportThread *t = g_new(ReportThread, 1);
        *t = (ReportThread){ .pid = pid, .tid = tid, .name = g_strdup(name), .named = named };
        g_ptr_array_add(p->threads, t);
        g_hash_table_insert(p->thread_index, long_key ? g_steal_pointer(&long_key) : g_strdup(key),
                            GUINT_TO_POINTER(p->threads->len));
        return p->threads->len - 1;
}

const ReportMap *report_profile_find_map(const ReportProfile *p, int32_t pid, uint64_t addr) {
        GPtrArray *maps = g_hash_table_lookup(p->maps, GINT_TO_POINTER(pid));
        if (!maps)
                return NULL;
        for (guint i = maps->len; i > 0; i--) {
                const ReportMap *m = g_ptr_array_index(maps, i - 1);
                if (addr >= m->start && addr < m->end)
                        return m;
        }
        return NULL;
}

const char *report_profile_find_jit(const ReportProfile *p, int32_t pid, uint64_t addr) {
        g_autofree char *key = jit_key(pid, addr);
        return g_hash_table_lookup(p->jit, key);
}

int report_profile_refuse_damaged(const ReportProfile *p) {
        if (!p->load_warning)
                return 0;
        fprintf(stderr, "periscope report: %s\n", p->load_warning);
        return p->load_error < 0 ? p->load_error : -EBADMSG;
}

guint64 report_profile_stat(const ReportProfile *p, CaptureStat key) {
        uint64_t v;
        return capture_stats_get_u64(p->stats, key, &v) < 0 ? 0 : v;
}

char *report_format_ns(guint64 ns) {
        if (ns >= 1000000000ull)
                return g_strdup_printf("%.3f s", (double) ns / 1e9);
        if (ns >= 1000000ull)
                return g_strdup_printf("%.1f ms", (double) ns / 1e6);
        return g_strdup_printf("%.0f us", (double) ns / 1e3);
}

const char *report_profile_unit(const ReportProfile *p, guint64 n) {
        if (p->weight == REPORT_WEIGHT_OFF_CPU_NS)
                return "ns";
        if (report_weight_is_memory(p->weight))
                return n == 1 ? "byte" : "bytes";
        return n == 1 ? "sample" : "samples";
}
