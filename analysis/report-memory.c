/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-memory.c: replays the ALLOCATION frames of a capture
 * (memory-replay.h) and tallies them by call site: the first frame of the stack that is not an allocator
 * wrapper (g_malloc, operator new, strdup, ...). */
#include "report-memory.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>

#include <glib.h>

#include "memory-replay.h"
#include "report-extras.h"
#include "report-rows.h"

typedef struct Site {
        char *name;
        uint64_t alloc_count, alloc_bytes;
        uint64_t live_count, live_bytes;
        uint64_t temp_count, temp_bytes;
} Site;

static void site_free(gpointer p) {
        Site *s = p;
        g_free(s->name);
        g_free(s);
}

/* Functions that only pass an allocation on: the call site is their caller. */
static const char *const allocator_wrappers[] = {
        "malloc",         "calloc",    "realloc",   "free",          "posix_memalign", "aligned_alloc",
        "memalign",       "valloc",    "g_malloc*", "g_try_malloc*", "g_realloc*",     "g_try_realloc*",
        "g_slice_alloc*", "g_memdup*", "g_strdup*", "g_strndup",     "g_new*",         "operator new*",
        "xmalloc",        "xcalloc",   "xrealloc",  "xstrdup",       "strdup",         "strndup",
        "__libc_*",       "__GI_*",    "_IO_*",     "__strdup",      "reallocarray",   NULL,
};

static bool is_wrapper(const char *name) {
        for (size_t i = 0; allocator_wrappers[i]; i++)
                if (fnmatch(allocator_wrappers[i], name, 0) == 0)
                        return true;
        return false;
}

static Site *site_for(GHashTable *sites, const SymbolTable *symbols, int32_t pid, const uint64_t *addrs, size_t n) {
        char buf[64] = "[no stack]";
        const char *name = buf;
        for (size_t i = 0; i < n; i++) {
                /* Return addresses: the service names them as they are; tables
                 * of whole functions also have the call instruction before. */
                const SymbolRange *r = symbols ? symbol_table_lookup(symbols, pid, addrs[i]) : NULL;
                if (!r && symbols && addrs[i] > 0)
                        r = symbol_table_lookup(symbols, pid, addrs[i] - 1);
                if (!r || r->n_frames == 0 || (r->frames[0].flags & SYMBOL_FRAME_UNRESOLVED)) {
                        snprintf(buf, sizeof(buf), "0x%" PRIx64, addrs[i]);
                        name = buf;
                        break;
                }
                /* innermost: an inlined caller counts as the site */
                name = r->frames[0].function;
                if (!is_wrapper(name))
                        break;
        }
        Site *s = g_hash_table_lookup(sites, name);
        if (!s) {
                s = g_new0(Site, 1);
                s->name = g_strdup(name);
                g_hash_table_insert(sites, s->name, s);
        }
        return s;
}

/* A call site's share of an allocation whose fate is known. */
static void site_add(gpointer stack, uint64_t size, MemoryFate fate, gpointer userdata) {
        Site *s = stack;
        s->alloc_count++;
        s->alloc_bytes += size;
        if (fate == MEMORY_FATE_LEAKED) {
                s->live_count++;
                s->live_bytes += size;
        } else if (fate == MEMORY_FATE_TEMPORARY) {
                s->temp_count++;
                s->temp_bytes += size;
        }
}

static int cmp_live(gconstpointer a, gconstpointer b) {
        const Site *x = *(Site *const *) a, *y = *(Site *const *) b;
        if (x->live_bytes != y->live_bytes)
                return x->live_bytes > y->live_bytes ? -1 : 1;
        return strcmp(x->name, y->name);
}

static int cmp_alloc(gconstpointer a, gconstpointer b) {
        const Site *x = *(Site *const *) a, *y = *(Site *const *) b;
        if (x->alloc_bytes != y->alloc_bytes)
                return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
        return strcmp(x->name, y->name);
}

static int cmp_temp(gconstpointer a, gconstpointer b) {
        const Site *x = *(Site *const *) a, *y = *(Site *const *) b;
        if (x->temp_count != y->temp_count)
                return x->temp_count > y->temp_count ? -1 : 1;
        return strcmp(x->name, y->name);
}

static char *human(uint64_t bytes) {
        return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

int report_memory(const ReportProfile *p, const ReportMemoryOptions *o, FILE *out) {
        int limit = o && o->limit > 0 ? o->limit : 25;
        int32_t only_pid = o ? o->pid : 0;
        if (p->symbols_errno < 0 && p->symbols_errno != -ENOENT)
                fprintf(stderr, "periscope report: symbols unusable, showing addresses: %s\n", p->symbols_error);
        int r = report_profile_refuse_damaged(p);
        if (r < 0)
                return r;

        g_autoptr(GHashTable) sites = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, site_free);
        g_autoptr(MemoryReplay) replay = memory_replay_new();
        g_autoptr(GHashTable) pids = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint i = 0; i < p->events->len; i++) {
                const ReportEvent *e = &g_array_index(p->events, ReportEvent, i);
                if (!e->allocation || (only_pid && e->pid != only_pid) ||
                    !report_pid_wanted(o ? o->filter : NULL, e->pid) || e->size < 0)
                        continue;
                Site *site = NULL;
                if (e->size > 0)
                        site = site_for(sites, p->symbols, e->pid, report_event_addrs(p, e), e->n_addrs);
                g_hash_table_add(pids, GINT_TO_POINTER(e->pid));
                memory_replay_add(replay, e, site);
        }
        if (memory_replay_count(replay) == 0) {
                fprintf(stderr,
                        "periscope report: the capture has no ALLOCATION frames%s; record with "
                        "`periscope record --memory -- COMMAND`\n",
                        only_pid ? " for that process" : "");
                return -ENODATA;
        }
        MemoryReplayStats st;
        memory_replay_run(replay, site_add, NULL, &st);
        uint64_t n_allocs = st.n_allocs, n_frees = st.n_frees, total_bytes = st.total_bytes, peak = st.peak_bytes,
                 unmatched_frees = st.unmatched_frees, live_count = st.live_count, live_bytes = st.live_bytes;
        int64_t peak_time = st.peak_time;

        g_autofree char *total_h = human(total_bytes), *peak_h = human(peak), *live_h = human(live_bytes);
        fprintf(out, "Memory: %u process%s, %" PRIu64 " allocation%s (%s), %" PRIu64 " free%s\n",
                g_hash_table_size(pids), g_hash_table_size(pids) == 1 ? "" : "es", n_allocs, n_allocs == 1 ? "" : "s",
                total_h, n_frees, n_frees == 1 ? "" : "s");
        fprintf(out, "Peak: %" PRIu64 " bytes live (%s) at %.3f s\n", peak, peak_h,
                (double) (peak_time - p->start_time) / 1e9);
        fprintf(out, "Live at the end: %" PRIu64 " allocation%s, %" PRIu64 " bytes (%s)\n", live_count,
                live_count == 1 ? "" : "s", live_bytes, live_h);
        if (unmatched_frees)
                fprintf(out, "(%" PRIu64 " frees of blocks allocated before recording started)\n", unmatched_frees);

        g_autoptr(GPtrArray) list = report_rows_from_table(sites);

        fprintf(out, "\nLeaked (still live at the end), by call site:\n%12s %8s  %s\n", "BYTES", "ALLOCS", "CALL SITE");
        g_ptr_array_sort(list, cmp_live);
        int shown = 0;
        for (guint i = 0; i < list->len && shown < limit; i++) {
                Site *s = list->pdata[i];
                if (s->live_count == 0)
                        continue;
                fprintf(out, "%12" PRIu64 " %8" PRIu64 "  %s\n", s->live_bytes, s->live_count, s->name);
                shown++;
        }
        if (shown == 0)
                fprintf(out, "%12s %8s  (nothing: every block was freed)\n", "0", "0");

        fprintf(out, "\nAllocated, by call site:\n%12s %8s %12s  %s\n", "BYTES", "ALLOCS", "LIVE BYTES", "CALL SITE");
        g_ptr_array_sort(list, cmp_alloc);
        for (guint i = 0; i < list->len && (int) i < limit; i++) {
                Site *s = list->pdata[i];
                fprintf(out, "%12" PRIu64 " %8" PRIu64 " %12" PRIu64 "  %s\n", s->alloc_bytes, s->alloc_count,
                        s->live_bytes, s->name);
        }

        fprintf(out,
                "\nShort-lived temporaries (freed before their thread allocated anything else), by call site:\n"
                "%8s %12s  %s\n",
                "ALLOCS", "BYTES", "CALL SITE");
        g_ptr_array_sort(list, cmp_temp);
        shown = 0;
        for (guint i = 0; i < list->len && shown < limit; i++) {
                Site *s = list->pdata[i];
                if (s->temp_count == 0)
                        continue;
                fprintf(out, "%8" PRIu64 " %12" PRIu64 "  %s\n", s->temp_count, s->temp_bytes, s->name);
                shown++;
        }
        if (shown == 0)
                fprintf(out, "%8s %12s  (none)\n", "0", "0");
        return 0;
}

int report_memory_path(const char *path, const ReportMemoryOptions *o, FILE *out) {
        g_autoptr(GError) error = NULL;
        g_autoptr(ReportProfile) p = report_profile_load(path, REPORT_WEIGHT_ALLOCATED_BYTES, FALSE, &error);
        if (!p) {
                fprintf(stderr, "periscope report: %s\n", error->message);
                return -EIO;
        }
        return report_memory(p, o, out);
}
