/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-info.c: what `periscope info` says of a capture (capture-info.h):
 * one pass over its frames into a model, then the model as text. */
#include "capture-info.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture-autoptr.h"
#include "report-labels.h"

typedef struct InfoCounter {
        uint32_t id;
        char *category;
        char *name;
        uint8_t type;
        uint64_t n_values;
} InfoCounter;

typedef struct InfoFile {
        char *path;
        uint64_t size;
        unsigned copies; /* number of is_last chunks seen: complete copies */
} InfoFile;

typedef struct InfoMark {
        char *group;
        char *name;
        uint64_t count;
        int64_t total_duration;
} InfoMark;

struct CaptureInfo {
        uint64_t frames[_CAPTURE_FRAME_TYPE_MAX];
        uint64_t total_frames;
        int64_t min_time, max_time;
        bool have_time;
        GHashTable *processes;     /* pid → cmdline (last seen) */
        GArray *counters;          /* InfoCounter in definition order */
        GHashTable *counter_index; /* id → index+1 in counters */
        GPtrArray *marks;          /* InfoMark in first-seen order */
        GHashTable *mark_index;    /* "group\x1fname" → InfoMark */
        GPtrArray *files;          /* InfoFile in first-seen order */
        GHashTable *file_index;    /* path → InfoFile */
        CaptureStats *stats;       /* the last periscope.stats block */
        char arch[40];             /* periscope.machine's arch, "" when none */
        GHashTable *threads;       /* pid → GArray of InfoThread (thread-name frames) */
        uint64_t sample_addresses;
        SymbolChunks *symbols; /* the symbol tables, read as report reads them */
        int symbols_add_error; /* negative errno once gathering them failed */
        int read_error;        /* negative errno where reading stopped, 0 at the end */
};

/* One name of one thread. */
typedef struct InfoThread {
        int32_t tid;
        int64_t time;
        char *name;
} InfoThread;

static void info_thread_clear(void *p) {
        g_free(((InfoThread *) p)->name);
}

static int info_thread_cmp(gconstpointer a, gconstpointer b) {
        const InfoThread *x = a, *y = b;
        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        return x->time < y->time ? -1 : x->time > y->time;
}

static void info_counter_clear(void *p) {
        InfoCounter *c = p;
        g_free(c->category);
        g_free(c->name);
}

static void info_file_free(void *p) {
        InfoFile *f = p;
        g_free(f->path);
        g_free(f);
}

static void info_mark_free(void *p) {
        InfoMark *m = p;
        g_free(m->group);
        g_free(m->name);
        g_free(m);
}

static CaptureInfo *info_new(bool little_endian) {
        CaptureInfo *info = g_new0(CaptureInfo, 1);
        info->symbols = symbol_chunks_new(little_endian);
        if (!info->symbols) {
                g_free(info);
                return NULL;
        }
        info->processes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        info->counters = g_array_new(FALSE, TRUE, sizeof(InfoCounter));
        g_array_set_clear_func(info->counters, info_counter_clear);
        info->counter_index = g_hash_table_new(g_direct_hash, g_direct_equal);
        info->marks = g_ptr_array_new_with_free_func(info_mark_free);
        info->mark_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        info->files = g_ptr_array_new_with_free_func(info_file_free);
        info->file_index = g_hash_table_new(g_str_hash, g_str_equal);
        info->threads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_array_unref);
        return info;
}

void capture_info_free(CaptureInfo *info) {
        if (!info)
                return;
        g_hash_table_unref(info->processes);
        g_array_unref(info->counters);
        g_hash_table_unref(info->counter_index);
        g_hash_table_unref(info->mark_index);
        g_ptr_array_unref(info->marks);
        g_hash_table_unref(info->file_index);
        g_ptr_array_unref(info->files);
        capture_stats_free(info->stats);
        g_hash_table_unref(info->threads);
        symbol_chunks_free(info->symbols);
        g_free(info);
}

/* True if name is just the kernel's short task name (comm, at most 15
 * characters) of the program in cmdline: Sysprof writes the full command line
 * from /proc first and later PROCESS frames from perf COMM events, which
 * should not hide it. */
static bool is_comm_of(const char *name, const char *cmdline) {
        size_t nl = strlen(name);
        if (nl == 0 || nl > 15 || strchr(name, ' '))
                return false;
        size_t first = strcspn(cmdline, " ");
        const char *base = cmdline;
        for (const char *p = cmdline; p < cmdline + first; p++)
                if (*p == '/')
                        base = p + 1;
        size_t bl = (size_t) (cmdline + first - base);
        return bl > nl ? strncmp(base, name, nl) == 0 && nl == 15 : bl == nl && strncmp(base, name, nl) == 0;
}

/* Whether a frame tells what happened while recording. Metadata, file
 * chunks (symbol tables, container files), JIT maps and the timestamp that
 * opens the symbols are written after sampling stopped and say nothing of
 * the capture's duration. */
static bool frame_is_event(const CaptureFrame *f) {
        return f->type != CAPTURE_FRAME_METADATA && f->type != CAPTURE_FRAME_FILE_CHUNK &&
               f->type != CAPTURE_FRAME_JITMAP && f->type != CAPTURE_FRAME_TIMESTAMP;
}

/* "threads: name (tid), old → new (tid), …" under a process: each thread's
 * names in time order. */
static void print_threads(FILE *out, GArray *a, bool full) {
        if (!a)
                return;
        g_array_sort(a, info_thread_cmp);
        g_autoptr(GString) line = g_string_new(NULL);
        for (guint i = 0; i < a->len; i++) {
                const InfoThread *t = &g_array_index(a, InfoThread, i);
                const InfoThread *prev = i ? &g_array_index(a, InfoThread, i - 1) : NULL;
                bool same_thread = prev && prev->tid == t->tid;
                if (same_thread && strcmp(prev->name, t->name) == 0)
                        continue;
                g_autofree char *name = report_printable(t->name);
                if (same_thread) { /* "old → new": drop the previous " (tid)" */
                        g_string_truncate(line, line->len - (strlen(" (tid )") + snprintf(NULL, 0, "%d", prev->tid)));
                        g_string_append_printf(line, " → %s (tid %d)", name, t->tid);
                } else
                        g_string_append_printf(line, "%s%s (tid %d)", line->len ? ", " : "", name, t->tid);
        }
        glong chars = g_utf8_strlen(line->str, -1);
        if (full || chars <= CAPTURE_INFO_CMDLINE_SHOWN)
                fprintf(out, "           threads: %s\n", line->str);
        else {
                g_autofree char *cut = g_utf8_substring(line->str, 0, CAPTURE_INFO_CMDLINE_SHOWN);
                fprintf(out, "           threads: %s… (--full shows all)\n", cut);
        }
}

static void info_add_frame(CaptureInfo *info, const CaptureFrame *f) {
        if (info->symbols_add_error == 0)
                info->symbols_add_error = MIN(symbol_chunks_add(info->symbols, f), 0);
        info->frames[f->type]++;
        info->total_frames++;
        if (frame_is_event(f)) {
                if (!info->have_time || f->time < info->min_time)
                        info->min_time = f->time;
                if (!info->have_time || f->time > info->max_time)
                        info->max_time = f->time;
                info->have_time = true;
        }

        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE:
                info->sample_addresses += f->sample.n_addrs;
                break;
        case CAPTURE_FRAME_PROCESS: {
                const char *old = g_hash_table_lookup(info->processes, GINT_TO_POINTER(f->pid));
                if (!old || !is_comm_of(f->process.cmdline, old))
                        g_hash_table_replace(info->processes, GINT_TO_POINTER(f->pid), g_strdup(f->process.cmdline));
                break;
        }
        case CAPTURE_FRAME_CTRDEF:
                for (unsigned i = 0; i < f->ctrdef.n_counters; i++) {
                        const CaptureCounterDef *d = &f->ctrdef.counters[i];
                        InfoCounter c = {
                                .id = d->id,
                                .category = g_strdup(d->category),
                                .name = g_strdup(d->name),
                                .type = d->type,
                        };
                        g_array_append_val(info->counters, c);
                        g_hash_table_replace(info->counter_index, GUINT_TO_POINTER(d->id),
                                             GUINT_TO_POINTER(info->counters->len));
                }
                break;
        case CAPTURE_FRAME_CTRSET:
                for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                        guint idx = GPOINTER_TO_UINT(
                                g_hash_table_lookup(info->counter_index, GUINT_TO_POINTER(f->ctrset.values[i].id)));
                        if (idx > 0)
                                g_array_index(info->counters, InfoCounter, idx - 1).n_values++;
                }
                break;
        case CAPTURE_FRAME_MARK: {
                g_autofree char *key = g_strdup_printf("%s\x1f%s", f->mark.group, f->mark.name);
                InfoMark *m = g_hash_table_lookup(info->mark_index, key);
                if (!m) {
                        m = g_new0(InfoMark, 1);
                        m->group = g_strdup(f->mark.group);
                        m->name = g_strdup(f->mark.name);
                        g_ptr_array_add(info->marks, m);
                        g_hash_table_insert(info->mark_index, g_steal_pointer(&key), m);
                }
                m->count++;
                m->total_duration += f->mark.duration;
                break;
        }
        case CAPTURE_FRAME_METADATA:
                if (capture_frame_get_arch(f, info->arch, sizeof(info->arch)) < 0)
                        info->arch[0] = '\0'; /* not a name to print */
                CaptureStats *stats = NULL;
                if (capture_frame_get_stats(f, CAPTURE_STATS_ID, &stats) != 0) {
                        /* the last block counts; one that cannot be read leaves none */
                        capture_stats_free(info->stats);
                        info->stats = stats;
                }
                int32_t tid;
                const char *name;
                size_t len;
                if (capture_frame_get_thread_name(f, &tid, &name, &len, NULL) > 0) {
                        GArray *a = g_hash_table_lookup(info->threads, GINT_TO_POINTER(f->pid));
                        if (!a) {
                                a = g_array_new(FALSE, FALSE, sizeof(InfoThread));
                                g_array_set_clear_func(a, info_thread_clear);
                                g_hash_table_insert(info->threads, GINT_TO_POINTER(f->pid), a);
                        }
                        InfoThread t = { tid, f->time, g_strndup(name, len) };
                        g_array_append_val(a, t);
                }
                break;
        case CAPTURE_FRAME_FILE_CHUNK: {
                InfoFile *file = g_hash_table_lookup(info->file_index, f->file_chunk.path);
                if (!file) {
                        file = g_new0(InfoFile, 1);
                        file->path = g_strdup(f->file_chunk.path);
                        g_ptr_array_add(info->files, file);
                        g_hash_table_insert(info->file_index, file->path, file);
                }
                file->size += f->file_chunk.len;
                if (f->file_chunk.is_last)
                        file->copies++;
                break;
        }
        default:
                break;
        }
}

int capture_info_load(CaptureReader *reader, CaptureInfo **ret) {
        CaptureInfo *info = info_new(capture_reader_get_header(reader)->little_endian);
        if (!info)
                return -ENOMEM;
        CaptureFrame f;
        int r;
        while ((r = capture_reader_next(reader, &f)) > 0)
                info_add_frame(info, &f);
        if (r < 0 && info->symbols_add_error == 0)
                info->symbols_add_error =
                        MIN(symbol_chunks_set_read_error(info->symbols, r, capture_reader_error(reader)), 0);
        info->read_error = MIN(r, 0);
        *ret = info;
        return 0;
}

uint64_t capture_info_count_samples(CaptureReader *reader) {
        uint64_t n = 0;
        CaptureFrame f;
        while (capture_reader_next(reader, &f) > 0)
                n += f.type == CAPTURE_FRAME_SAMPLE;
        return n;
}

int capture_info_get_read_error(const CaptureInfo *info) {
        return info->read_error;
}

static int compare_pids(const void *a, const void *b) {
        int32_t x = GPOINTER_TO_INT(a), y = GPOINTER_TO_INT(b);
        return (x > y) - (x < y);
}

static bool is_symbol_file(const char *path) {
        return g_str_has_prefix(path, "__symbols__") || g_str_has_prefix(path, "__periscope/");
}

/* What report makes of the embedded tables: the same loader. */
static void info_print_symbols_usable(FILE *out, const CaptureInfo *info) {
        g_autoptr(SymbolTable) table = NULL;
        g_autofree char *why = NULL;
        int r = info->symbols_add_error;
        if (r == 0)
                r = symbol_chunks_load(info->symbols, &table, &why);
        if (r < 0) {
                g_autofree char *shown = g_utf8_make_valid(why ? why : g_strerror(-r), -1);
                fprintf(out, "Symbols usable: no (%s)\n", shown);
                return;
        }
        SymbolTableKind kind = symbol_table_get_kind(table);
        fprintf(out, "Symbols usable: yes, %zu address ranges (%s)\n", symbol_table_get_n_ranges(table),
                kind == SYMBOL_TABLE_PERISCOPE    ? SYMBOLS_PERISCOPE_PATH
                : kind == SYMBOL_TABLE_SYSPROF_GZ ? SYMBOLS_SYSPROF_GZ_PATH
                                                  : SYMBOLS_SYSPROF_PATH);
}

void capture_info_print(FILE *out, const CaptureInfo *info, const char *path, CaptureReader *reader, bool full) {
        const CaptureFileHeader *h = capture_reader_get_header(reader);

        fprintf(out, "File: %s\n", path);
        fprintf(out, "Size: %" PRIu64 " bytes\n", capture_reader_get_size(reader));
        fprintf(out, "Format: Sysprof capture version %u, %s-endian\n", h->version,
                h->little_endian ? "little" : "big");
        if (h->capture_time[0])
                fprintf(out, "Captured at: %s\n", h->capture_time);

        /* The header's end time is rewritten on flush; a capture that was
         * streamed or cut short may only have it in its frames. */
        int64_t start = h->start_time, end = h->end_time;
        if (info->have_time && info->max_time > end)
                end = info->max_time;
        if (start <= 0 && info->have_time) /* a writer that left the start time unset */
                start = info->min_time;
        int64_t duration = end > start ? end - start : 0;
        fprintf(out, "Duration: %.3f s\n", (double) duration / 1e9);
        if (info->arch[0])
                fprintf(out, "Architecture: %s\n", info->arch);
        else
                fprintf(out, "Architecture: unknown (no %s metadata in this capture)\n", CAPTURE_MACHINE_ID);

        fprintf(out, "Frames: %" PRIu64 "\n", info->total_frames);
        for (int t = 1; t < _CAPTURE_FRAME_TYPE_MAX; t++)
                if (info->frames[t] > 0)
                        fprintf(out, "  %-12s %" PRIu64 "\n", capture_frame_type_to_string(t), info->frames[t]);
        fprintf(out, "Unknown frames skipped: %" PRIu64 "\n", capture_reader_get_skipped(reader));

        g_autoptr(GList) pids = g_list_sort(g_hash_table_get_keys(info->processes), compare_pids);
        fprintf(out, "Processes: %u\n", g_hash_table_size(info->processes));
        for (GList *l = pids; l; l = l->next) {
                const char *cmdline = g_hash_table_lookup(info->processes, l->data);
                if (!cmdline[0])
                        cmdline = "(no command line)";
                g_autofree char *valid = g_utf8_make_valid(cmdline, -1);
                glong chars = g_utf8_strlen(valid, -1);
                if (full || chars <= CAPTURE_INFO_CMDLINE_SHOWN)
                        fprintf(out, "  %-8d %s\n", GPOINTER_TO_INT(l->data), cmdline);
                else {
                        g_autofree char *cut = g_utf8_substring(valid, 0, CAPTURE_INFO_CMDLINE_SHOWN);
                        fprintf(out, "  %-8d %s… (%ld more characters; --full shows them)\n", GPOINTER_TO_INT(l->data),
                                cut, chars - CAPTURE_INFO_CMDLINE_SHOWN);
                }
                print_threads(out, g_hash_table_lookup(info->threads, l->data), full);
        }

        fprintf(out, "Samples: %" PRIu64 "\n", info->frames[CAPTURE_FRAME_SAMPLE]);
        const char *lost = capture_stats_get(info->stats, CAPTURE_STAT_LOST_SAMPLES);
        if (lost)
                fprintf(out, "Lost samples: %s\n", lost);
        else
                fprintf(out, "Lost samples: unknown (no %s metadata in this capture)\n", CAPTURE_STATS_ID);
        const char *helper_failures = capture_stats_get(info->stats, CAPTURE_STAT_HELPER_FAILURES);
        if (helper_failures && strcmp(helper_failures, "0") != 0)
                fprintf(out, "Files unresolved (helper failed): %s\n", helper_failures);
        const char *unwind_failures = capture_stats_get(info->stats, CAPTURE_STAT_UNWIND_HELPER_FAILURES);
        if (unwind_failures && strcmp(unwind_failures, "0") != 0)
                fprintf(out, "  of them without unwind tables (DWARF stacks missing): %s\n", unwind_failures);
        const char *user_addresses = capture_stats_get(info->stats, CAPTURE_STAT_USER_ADDRESSES);
        const char *user_named = capture_stats_get(info->stats, CAPTURE_STAT_USER_ADDRESSES_NAMED);
        if (user_addresses && user_named)
                fprintf(out, "User-space addresses named: %s of %s\n", user_named, user_addresses);
        const char *over_budget = capture_stats_get(info->stats, CAPTURE_STAT_ADDRESSES_OVER_BUDGET);
        const char *address_budget = capture_stats_get(info->stats, CAPTURE_STAT_ADDRESS_BUDGET);
        if (over_budget && strcmp(over_budget, "0") != 0)
                fprintf(out,
                        "Addresses not symbolized (past the budget of %s distinct addresses; shown as "
                        "module+0xOFFSET): %s\n",
                        address_budget ? address_budget : "?", over_budget);
        const char *budget_spent = capture_stats_get(info->stats, CAPTURE_STAT_HELPER_BUDGET_SPENT);
        const char *helper_budget = capture_stats_get(info->stats, CAPTURE_STAT_HELPER_BUDGET_MS);
        if (budget_spent && strcmp(budget_spent, "true") == 0)
                fprintf(out, "Symbolization stopped: the helper's time budget (%s ms) ran out\n",
                        helper_budget ? helper_budget : "?");
        /* the service was stopping: what its post-stop stages could not finish */
        const char *cut_short = capture_stats_get(info->stats, CAPTURE_STAT_CUT_SHORT);
        const char *names_missing = capture_stats_get(info->stats, CAPTURE_STAT_NAMES_MISSING);
        const char *names_cut = capture_stats_get(info->stats, CAPTURE_STAT_NAMES_CUT_SHORT);
        if (cut_short)
                fprintf(out, "Post-stop stages cut short: %s\n", cut_short);
        if (names_missing)
                fprintf(out,
                        "Names missing: %s (%s addresses; `periscope symbolize FILE` names them from this machine's "
                        "files, checked by build-id)\n",
                        names_missing, names_cut ? names_cut : "?");
        fprintf(out, "Memory maps: %" PRIu64 "\n", info->frames[CAPTURE_FRAME_MAP]);

        fprintf(out, "Counters: %u\n", info->counters->len);
        for (guint i = 0; i < info->counters->len; i++) {
                const InfoCounter *c = &g_array_index(info->counters, InfoCounter, i);
                fprintf(out, "  %-24s %-24s %-6s %" PRIu64 " value%s\n", c->category, c->name,
                        c->type == CAPTURE_COUNTER_DOUBLE ? "double" : "int64", c->n_values,
                        c->n_values == 1 ? "" : "s");
        }

        fprintf(out, "Marks: %" PRIu64 "\n", info->frames[CAPTURE_FRAME_MARK]);
        for (guint i = 0; i < info->marks->len; i++) {
                const InfoMark *m = info->marks->pdata[i];
                fprintf(out, "  %-20s %-32s %" PRIu64 "\n", m->group, m->name, m->count);
        }

        fprintf(out, "Embedded files: %u\n", info->files->len);
        bool symbols = false;
        for (guint i = 0; i < info->files->len; i++) {
                const InfoFile *file = info->files->pdata[i];
                symbols |= is_symbol_file(file->path);
                fprintf(out, "  %-48s %" PRIu64 " bytes%s\n", file->path, file->size,
                        file->copies == 0  ? " (incomplete)"
                        : file->copies > 1 ? " (several copies)"
                                           : "");
        }
        if (symbols) {
                fprintf(out, "Symbols embedded: yes (");
                bool first = true;
                for (guint i = 0; i < info->files->len; i++) {
                        const InfoFile *file = info->files->pdata[i];
                        if (!is_symbol_file(file->path))
                                continue;
                        fprintf(out, "%s%s", first ? "" : ", ", file->path);
                        first = false;
                }
                fprintf(out, ")\n");
                info_print_symbols_usable(out, info);
        } else
                fprintf(out, "Symbols embedded: no\n");

        if (info->stats) {
                fprintf(out, "Recorder statistics (%s):\n", CAPTURE_STATS_ID);
                for (size_t i = 0; i < capture_stats_get_n_entries(info->stats); i++) {
                        const CaptureStatsEntry *e = capture_stats_get_entry(info->stats, i);
                        fprintf(out, "  %s=%s\n", e->key, e->value);
                }
                if (capture_stats_get_n_malformed(info->stats) > 0)
                        fprintf(out, "  (%zu malformed lines skipped)\n", capture_stats_get_n_malformed(info->stats));
        }
}
