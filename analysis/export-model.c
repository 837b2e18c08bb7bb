/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-model.c: reads a capture into an ExportModel: the report loader for
 * processes, mappings and symbols, then a second pass for the samples
 * themselves (time, thread, CPU), each address resolved once. */
#include "export-model.h"

#include <glib.h>
#include <string.h>

#include "capture-autoptr.h"
#include "report-labels.h"

#define DEFAULT_PERIOD_NS (1000000000 / 999) /* `periscope record`'s default frequency */
#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"

typedef struct LocationKey {
        int32_t pid;
        gboolean kernel;
        uint64_t addr;
} LocationKey;

static guint location_key_hash(gconstpointer v) {
        const LocationKey *k = v;
        return (guint) (k->addr ^ (k->addr >> 31)) ^ (guint) k->pid * 40503u ^ (guint) k->kernel;
}

static gboolean location_key_equal(gconstpointer a, gconstpointer b) {
        const LocationKey *x = a, *y = b;
        return x->pid == y->pid && x->kernel == y->kernel && x->addr == y->addr;
}

static void function_free(gpointer p) {
        ExportFunction *f = p;
        g_free(f->name);
        g_free(f->file);
        g_free(f);
}

static void mapping_free(gpointer p) {
        ExportMapping *m = p;
        g_free(m->filename);
        g_free(m->build_id);
        g_free(m);
}

void export_model_free(ExportModel *m) {
        if (!m)
                return;
        report_profile_free(m->report);
        g_clear_pointer(&m->samples, g_array_unref);
        g_clear_pointer(&m->stack_locations, g_array_unref);
        g_clear_pointer(&m->locations, g_ptr_array_unref);
        g_clear_pointer(&m->functions, g_ptr_array_unref);
        g_clear_pointer(&m->mappings, g_ptr_array_unref);
        g_clear_pointer(&m->location_index, g_hash_table_unref);
        g_clear_pointer(&m->function_index, g_hash_table_unref);
        g_clear_pointer(&m->mapping_index, g_hash_table_unref);
        g_clear_pointer(&m->comms, g_hash_table_unref);
        g_clear_pointer(&m->thread_names, g_ptr_array_unref);
        g_free(m);
}

const char *export_model_comm(const ExportModel *m, int32_t pid) {
        const char *c = g_hash_table_lookup(m->comms, GINT_TO_POINTER(pid));
        return c && *c ? c : "[unknown]";
}

/* Interns (name, file, flags); takes name and file. */
static guint function_intern(ExportModel *m, char *name, const char *file, uint32_t line, guint flags) {
        g_autofree char *key = g_strdup_printf("%u\x1f%s\x1f%s", flags, name, file ? file : "");
        gpointer v = g_hash_table_lookup(m->function_index, key);
        ExportFunction *f;
        if (v) {
                f = g_ptr_array_index(m->functions, GPOINTER_TO_UINT(v) - 1);
                g_free(name);
        } else {
                f = g_new0(ExportFunction, 1);
                f->name = report_printable(name);
                g_free(name);
                f->file = file ? report_printable(file) : NULL;
                f->flags = flags;
                g_ptr_array_add(m->functions, f);
                g_hash_table_insert(m->function_index, g_steal_pointer(&key), GUINT_TO_POINTER(m->functions->len));
        }
        if (line && (f->line == 0 || line < f->line))
                f->line = line;
        return v ? GPOINTER_TO_UINT(v) - 1 : m->functions->len - 1;
}

/* The mapping index of the kernel or of the MAP holding addr in pid, or -1. */
static int mapping_for(ExportModel *m, int32_t pid, gboolean kernel, uint64_t addr) {
        const ReportMap *rm = kernel ? NULL : report_profile_find_map(m->report, pid, addr);
        if (!kernel && !rm)
                return -1;
        gconstpointer key = kernel ? (gconstpointer) m : (gconstpointer) rm; /* the model stands for the kernel */
        gpointer v = g_hash_table_lookup(m->mapping_index, key);
        if (v) {
                ExportMapping *have = g_ptr_array_index(m->mappings, GPOINTER_TO_UINT(v) - 1);
                if (kernel) { /* the kernel mapping spans the addresses seen */
                        have->start = MIN(have->start, addr);
                        have->end = MAX(have->end, addr + 1);
                }
                return (int) GPOINTER_TO_UINT(v) - 1;
        }
        ExportMapping *em = g_new0(ExportMapping, 1);
        em->kernel = kernel;
        if (kernel) {
                em->start = addr;
                em->end = addr + 1;
                em->filename = g_strdup(KERNEL_MAPPING_NAME);
        } else {
                em->start = rm->start;
                em->end = rm->end;
                em->offset = rm->offset;
                em->filename = report_printable(rm->filename);
                const SymbolMapping *sm =
                        m->report->symbols ? symbol_table_lookup_mapping(m->report->symbols, pid, addr) : NULL;
                if (sm && sm->build_id && *sm->build_id)
                        em->build_id = report_printable(sm->build_id);
        }
        g_ptr_array_add(m->mappings, em);
        g_hash_table_insert(m->mapping_index, (gpointer) key, GUINT_TO_POINTER(m->mappings->len));
        return (int) m->mappings->len - 1;
}

static char *module_basename(const ExportModel *m, int mapping) {
        if (mapping < 0)
                return NULL;
        const ExportMapping *em = g_ptr_array_index(m->mappings, mapping);
        return g_path_get_basename(em->filename);
}

/* "module+0xOFFSET" (addr's offset in the mapping's file), or NULL without a
 * file mapping. */
static char *module_offset_name(const ExportModel *m, int mapping, uint64_t addr) {
        if (mapping < 0)
                return NULL;
        const ExportMapping *em = g_ptr_array_index(m->mappings, mapping);
        if (em->kernel)
                return NULL;
        g_autofree char *mod = g_path_get_basename(em->filename);
        return g_strdup_printf("%s+0x%" G_GINT64_MODIFIER "x", mod, (guint64) (addr - em->start + em->offset));
}

/* Resolves one address to a new location (the caller interns it). */
static ExportLocation *location_new(ExportModel *m, int32_t pid, gboolean kernel, uint64_t addr) {
        const ReportProfile *p = m->report;
        int mapping = mapping_for(m, pid, kernel, addr);
        guint kflag = kernel ? EXPORT_FUNCTION_KERNEL : 0;
        const SymbolRange *r = p->symbols ? symbol_table_lookup(p->symbols, pid, addr) : NULL;
        if (!r && p->symbols && addr > 0) /* a return address just past a call at the end of a range */
                r = symbol_table_lookup(p->symbols, pid, addr - 1);
        if (r) {
                ExportLocation *l = g_malloc0(sizeof(ExportLocation) + r->n_frames * sizeof(ExportLine));
                l->address = addr;
                l->kernel = kernel;
                l->mapping = mapping;
                l->offset = r->frames[r->n_frames - 1].offset;
                l->n_lines = r->n_frames;
                for (guint32 i = 0; i < r->n_frames; i++) {
                        const SymbolFrame *f = &r->frames[i];
                        guint flags = kflag | ((f->flags & SYMBOL_FRAME_KERNEL) ? EXPORT_FUNCTION_KERNEL : 0) |
                                      ((f->flags & SYMBOL_FRAME_JIT) ? EXPORT_FUNCTION_JIT : 0);
                        char *name;
                        if (f->flags & SYMBOL_FRAME_UNRESOLVED) {
                                /* each unnamed address its own frame, by file offset as the
                                 * report shows it (a tool with the binary can name it later) */
                                name = !(flags & EXPORT_FUNCTION_KERNEL) ? module_offset_name(m, mapping, addr) : NULL;
                                if (!name) {
                                        g_autofree char *mod = module_basename(m, mapping);
                                        const char *shown = mod ? mod : r->module;
                                        name = shown ? g_strdup_printf("%s %s", f->function, shown)
                                                     : g_strdup(f->function);
                                }
                                flags |= EXPORT_FUNCTION_UNRESOLVED;
                        } else
                                name = g_strdup(f->function);
                        l->lines[i].function = function_intern(m, name, f->file, f->line, flags);
                        l->lines[i].line = f->line;
                }
                return l;
        }

        ExportLocation *l = g_malloc0(sizeof(ExportLocation) + sizeof(ExportLine));
        l->address = addr;
        l->kernel = kernel;
        l->mapping = mapping;
        l->n_lines = 1;
        const char *jit = (addr & CAPTURE_JITMAP_MARK) == CAPTURE_JITMAP_MARK && !kernel
                                  ? report_profile_find_jit(p, pid, addr)
                                  : NULL;
        if (jit) {
                l->lines[0].function = function_intern(m, g_strdup(jit), NULL, 0, EXPORT_FUNCTION_JIT);
                return l;
        }
        /* The kernel "mapping" only spans the addresses seen: no offsets in it. */
        char *name = kernel ? NULL : module_offset_name(m, mapping, addr);
        if (!name)
                name = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", (guint64) addr);
        l->lines[0].function = function_intern(m, name, NULL, 0, kflag | EXPORT_FUNCTION_UNRESOLVED);
        return l;
}

static guint location_intern(ExportModel *m, int32_t pid, gboolean kernel, uint64_t addr) {
        LocationKey key = { pid, kernel, addr };
        gpointer v = g_hash_table_lookup(m->location_index, &key);
        if (v)
                return GPOINTER_TO_UINT(v) - 1;
        g_ptr_array_add(m->locations, location_new(m, pid, kernel, addr));
        g_hash_table_insert(m->location_index, g_memdup2(&key, sizeof(key)), GUINT_TO_POINTER(m->locations->len));
        return m->locations->len - 1;
}

/* Appends the locations of a raw stack (innermost first, with perf's
 * context markers) to the model; returns how many. */
static guint add_stack(ExportModel *m, int32_t pid, const uint64_t *addrs, guint32 n) {
        guint added = 0;
        g_autofree guint8 *kernel = g_new(guint8, n ? n : 1);
        report_stack_contexts(addrs, n, kernel);
        for (guint32 i = 0; i < n; i++) {
                if (kernel[i] == REPORT_ADDRESS_MARKER)
                        continue;
                guint loc = location_intern(m, pid, kernel[i] == REPORT_ADDRESS_KERNEL, addrs[i]);
                g_array_append_val(m->stack_locations, loc);
                added++;
        }
        return added;
}

/* Where the locations of an interned stack went in stack_locations: every
 * sample of that stack shares them. */
typedef struct StackRange {
        guint first, n;
} StackRange;

static void add_sample(ExportModel *m, GHashTable *ranges, const ReportEvent *e, int64_t value, uint64_t block) {
        ExportSample s = {
                .time = e->time, .pid = e->pid, .tid = e->tid, .cpu = e->cpu, .value = value, .block = block
        };
        if (e->stack) {
                /* the stack's thread is this sample's: its key holds the name at the time */
                s.thread = e->stack->thread;
                StackRange *r = g_hash_table_lookup(ranges, e->stack);
                if (!r) {
                        r = g_new(StackRange, 1);
                        r->first = m->stack_locations->len;
                        r->n = add_stack(m, e->pid, e->stack->addrs, e->n_addrs);
                        g_hash_table_insert(ranges, (gpointer) e->stack, r);
                }
                s.first = r->first;
                s.n = r->n;
        } else {
                s.thread = report_profile_thread_at(m->report, e->pid, e->tid, e->time);
                s.first = m->stack_locations->len;
                s.n = add_stack(m, e->pid, report_event_addrs(m->report, e), e->n_addrs);
        }
        g_array_append_val(m->samples, s);
}

static int sample_time_cmp(gconstpointer a, gconstpointer b) {
        const ExportSample *x = a, *y = b;
        return x->time < y->time ? -1 : x->time > y->time;
}

static int int64_cmp(gconstpointer a, gconstpointer b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        return x < y ? -1 : x > y;
}

/* The median gap between consecutive samples of one thread: the sampling
 * period (the capture does not record the frequency). */
static int64_t estimate_period(const GArray *samples) {
        g_autoptr(GHashTable) last = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        g_autoptr(GArray) gaps = g_array_new(FALSE, FALSE, sizeof(int64_t));
        for (guint i = 0; i < samples->len; i++) {
                const ExportSample *s = &g_array_index(samples, ExportSample, i);
                int64_t *t = g_hash_table_lookup(last, GINT_TO_POINTER(s->tid));
                if (t && s->time > *t) {
                        int64_t gap = export_sub(s->time, *t);
                        g_array_append_val(gaps, gap);
                }
                if (!t) {
                        t = g_new(int64_t, 1);
                        g_hash_table_insert(last, GINT_TO_POINTER(s->tid), t);
                }
                *t = s->time;
        }
        if (gaps->len == 0)
                return DEFAULT_PERIOD_NS;
        g_array_sort(gaps, int64_cmp);
        return g_array_index(gaps, int64_t, gaps->len / 2);
}

typedef struct LiveKey {
        int32_t pid;
        uint64_t addr;
} LiveKey;

static guint live_key_hash(gconstpointer v) {
        const LiveKey *k = v;
        return (guint) (k->addr ^ (k->addr >> 32)) ^ (guint) k->pid * 2654435761u;
}

static gboolean live_key_equal(gconstpointer a, gconstpointer b) {
        const LiveKey *x = a, *y = b;
        return x->pid == y->pid && x->addr == y->addr;
}

typedef struct FreeEvent {
        int64_t time;
        int32_t pid;
        uint64_t addr;
} FreeEvent;

static int free_time_cmp(gconstpointer a, gconstpointer b) {
        const FreeEvent *x = a, *y = b;
        return x->time < y->time ? -1 : x->time > y->time;
}

/* Marks the allocations not freed by the end (samples and frees sorted by
 * time; a block allocated again before its free was seen counts as freed). */
static void mark_live(ExportModel *m, const GArray *frees) {
        g_autoptr(GHashTable) live = g_hash_table_new_full(live_key_hash, live_key_equal, g_free, NULL);
        guint fi = 0;
        for (guint i = 0; i <= m->samples->len; i++) {
                ExportSample *s = i < m->samples->len ? &g_array_index(m->samples, ExportSample, i) : NULL;
                for (; fi < frees->len; fi++) {
                        const FreeEvent *fe = &g_array_index(frees, FreeEvent, fi);
                        if (s && fe->time >= s->time)
                                break;
                        LiveKey k = { fe->pid, fe->addr };
                        gpointer v = g_hash_table_lookup(live, &k);
                        if (v)
                                g_array_index(m->samples, ExportSample, GPOINTER_TO_UINT(v) - 1).live = FALSE;
                        g_hash_table_remove(live, &k);
                }
                if (!s)
                        break;
                LiveKey k = { s->pid, s->block };
                gpointer v = g_hash_table_lookup(live, &k);
                if (v)
                        g_array_index(m->samples, ExportSample, GPOINTER_TO_UINT(v) - 1).live = FALSE;
                s->live = TRUE;
                g_hash_table_replace(live, g_memdup2(&k, sizeof(k)), GUINT_TO_POINTER(i + 1));
        }
}

/* The samples (or allocations) the loader kept, in file order. */
/* The blocked waits with a stack, as samples weighing their ns; with
 * EXPORT_OFF_CPU_ONLY instead of the CPU samples. */
static void read_off_cpu(ExportModel *m, const ExportOptions *o) {
        const ReportProfile *p = m->report;
        if (o->off_cpu == EXPORT_OFF_CPU_ONLY) {
                g_array_set_size(m->samples, 0);
                m->off_cpu_only = TRUE;
        }
        for (guint i = 0; i < p->off_cpu->len; i++) {
                const ReportOffCpu *oc = &g_array_index(p->off_cpu, ReportOffCpu, i);
                if (oc->state != CAPTURE_OFF_CPU_BLOCKED || oc->n_addrs == 0 ||
                    !report_filter_match(m->report, o->filter, oc->pid) ||
                    !report_filter_match_thread(m->report, o->filter, oc->pid, oc->tid))
                        continue;
                ExportSample s = {
                        .time = oc->time,
                        .pid = oc->pid,
                        .tid = oc->tid,
                        .cpu = oc->cpu,
                        .thread = oc->thread,
                        .value = oc->duration_ns > INT64_MAX ? INT64_MAX : (int64_t) oc->duration_ns,
                        .off_cpu = TRUE,
                        .first = m->stack_locations->len,
                };
                s.n = add_stack(m, oc->pid, report_off_cpu_addrs(p, oc), oc->n_addrs);
                g_array_append_val(m->samples, s);
                m->has_off_cpu = TRUE;
        }
        g_array_sort(m->samples, sample_time_cmp);
}

static void read_samples(ExportModel *m, const ExportOptions *o) {
        const ReportProfile *p = m->report;
        m->start_time = p->start_time;
        m->end_time = p->end_time;
        g_autoptr(GDateTime) wall = g_date_time_new_from_iso8601(p->capture_time, NULL);
        if (wall && __builtin_mul_overflow(g_date_time_to_unix(wall), G_GINT64_CONSTANT(1000000000), &m->wall_start_ns))
                m->wall_start_ns = 0; /* a date pprof cannot hold: unknown */

        g_autoptr(GArray) frees = g_array_new(FALSE, FALSE, sizeof(FreeEvent));
        g_autoptr(GHashTable) ranges = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        for (guint i = 0; i < p->events->len; i++) {
                const ReportEvent *e = &g_array_index(p->events, ReportEvent, i);
                gboolean is_sample = !e->allocation;
                /* frees of any thread of the selected threads' processes */
                if (!report_filter_match(m->report, o->filter, e->pid))
                        continue;
                gboolean is_free = e->allocation && e->size == 0;
                if (!is_free && !report_filter_match_thread(m->report, o->filter, e->pid, e->tid))
                        continue;
                if (is_sample != (m->kind == EXPORT_KIND_CPU)) {
                        m->n_other_kind++;
                        continue;
                }
                if (is_sample) {
                        add_sample(m, ranges, e, 1, 0);
                        continue;
                }
                if (e->size < 0)
                        continue;
                if (e->size == 0) {
                        FreeEvent fe = { e->time, e->pid, e->block };
                        g_array_append_val(frees, fe);
                        continue;
                }
                add_sample(m, ranges, e, e->size, e->block);
        }
        /* A damaged capture was read up to the bad frame: report->load_warning says why. */
        if (m->end_time <= m->start_time)
                m->end_time = p->last_time;

        g_array_sort(m->samples, sample_time_cmp);
        if (m->kind == EXPORT_KIND_MEMORY) {
                g_array_sort(frees, free_time_cmp);
                mark_live(m, frees);
        } else
                m->period_ns = estimate_period(m->samples);
        if (m->kind == EXPORT_KIND_CPU && o->off_cpu != EXPORT_OFF_CPU_NONE)
                read_off_cpu(m, o);
}

ExportModel *export_model_load(const char *path, const ExportOptions *o, GError **error) {
        g_autoptr(ExportModel) m = g_new0(ExportModel, 1);
        /* one read: the loader keeps every sample and allocation with its time and thread */
        m->report = report_profile_load_full(path, REPORT_WEIGHT_SAMPLES, REPORT_LOAD_EVENTS, error);
        if (!m->report)
                return NULL;
        m->samples = g_array_new(FALSE, FALSE, sizeof(ExportSample));
        m->stack_locations = g_array_new(FALSE, FALSE, sizeof(guint));
        m->locations = g_ptr_array_new_with_free_func(g_free);
        m->functions = g_ptr_array_new_with_free_func(function_free);
        m->mappings = g_ptr_array_new_with_free_func(mapping_free);
        m->location_index = g_hash_table_new_full(location_key_hash, location_key_equal, g_free, NULL);
        m->function_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        m->mapping_index = g_hash_table_new(g_direct_hash, g_direct_equal);
        m->comms = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        GHashTableIter it;
        gpointer pid, comm;
        g_hash_table_iter_init(&it, m->report->comms);
        while (g_hash_table_iter_next(&it, &pid, &comm)) /* names from the capture may hold anything */
                g_hash_table_insert(m->comms, pid, report_printable(comm));
        m->thread_root = o->thread_root;
        /* Allocations when the capture has any (a `periscope record --memory`
         * capture: its few CPU samples are not what it was made for), else CPU
         * samples. */
        m->kind = o->memory > 0 || (o->memory < 0 && m->report->has_allocations) ? EXPORT_KIND_MEMORY : EXPORT_KIND_CPU;
        read_samples(m, o);
        /* taken: the samples hold what the writers need */
        g_clear_pointer(&m->report->events, g_array_unref);
        g_clear_pointer(&m->report->event_addrs, g_array_unref);
        m->thread_names = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < m->report->threads->len; i++) {
                const ReportThread *t = g_ptr_array_index(m->report->threads, i);
                g_ptr_array_add(m->thread_names, report_printable(t->name));
        }
        return g_steal_pointer(&m);
}
