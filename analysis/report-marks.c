/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-marks.c: `periscope report --marks`: marks grouped by group and
 * name with their durations, and log lines by domain and severity. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <glib.h>

#include "report-extras.h"
#include "report-rows.h"

typedef struct MarkStats {
        char *group, *name;
        uint64_t count;
        int64_t total, min, max; /* durations, ns */
        int64_t first;
        GHashTable *pids;
} MarkStats;

static void mark_stats_free(gpointer p) {
        MarkStats *m = p;
        g_free(m->group);
        g_free(m->name);
        g_hash_table_unref(m->pids);
        g_free(m);
}

static int by_total(gconstpointer a, gconstpointer b) {
        const MarkStats *x = *(MarkStats *const *) a, *y = *(MarkStats *const *) b;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        int c = strcmp(x->group, y->group);
        return c ? c : strcmp(x->name, y->name);
}

static const char *severity_name(unsigned s) {
        /* GLib's GLogLevelFlags, which Sysprof's collector passes on. */
        if (s & 0x04)
                return "critical";
        if (s & 0x08)
                return "critical";
        if (s & 0x10)
                return "warning";
        if (s & 0x20)
                return "message";
        if (s & 0x40)
                return "info";
        if (s & 0x80)
                return "debug";
        if (s & 0x02)
                return "error";
        return "other";
}

static void print_duration(FILE *out, int64_t ns) {
        if (ns >= 1000000000)
                fprintf(out, "%9.3f s ", ns / 1e9);
        else if (ns >= 1000000)
                fprintf(out, "%9.3f ms", ns / 1e6);
        else
                fprintf(out, "%9.3f µs", ns / 1e3);
}

int report_marks(const ReportProfile *p, int limit, const ReportPidFilter *filter, FILE *out) {
        int r = report_profile_refuse_damaged(p);
        if (r < 0)
                return r;
        g_autoptr(GHashTable) marks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, mark_stats_free);
        g_autoptr(GHashTable) logs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        uint64_t n_marks = 0, n_logs = 0;
        for (guint i = 0; i < p->marks->len; i++) {
                const ReportMark *f = &g_array_index(p->marks, ReportMark, i);
                if (f->pid >= 0 && !report_pid_wanted(filter, f->pid))
                        continue;
                g_autofree char *key = g_strdup_printf("%s\x1f%s", f->group, f->name);
                MarkStats *m = g_hash_table_lookup(marks, key);
                if (!m) {
                        m = g_new0(MarkStats, 1);
                        m->group = g_strdup(f->group);
                        m->name = g_strdup(f->name);
                        m->min = INT64_MAX;
                        m->first = f->time;
                        m->pids = g_hash_table_new(g_direct_hash, g_direct_equal);
                        g_hash_table_insert(marks, g_steal_pointer(&key), m);
                }
                m->count++;
                m->total += f->duration;
                m->min = MIN(m->min, f->duration);
                m->max = MAX(m->max, f->duration);
                m->first = MIN(m->first, f->time);
                g_hash_table_add(m->pids, GINT_TO_POINTER(f->pid));
                n_marks++;
        }
        for (guint i = 0; i < p->logs->len; i++) {
                const ReportLog *l = &g_array_index(p->logs, ReportLog, i);
                if (l->pid >= 0 && !report_pid_wanted(filter, l->pid))
                        continue;
                char *key = g_strdup_printf("%-8s %s", severity_name(l->severity),
                                            l->domain[0] ? l->domain : "(no domain)");
                gpointer old = g_hash_table_lookup(logs, key);
                g_hash_table_insert(logs, key, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(old) + 1));
                n_logs++;
        }
        fprintf(out, "Marks: %" PRIu64 " in %u group%s/name%s\n", n_marks, g_hash_table_size(marks),
                g_hash_table_size(marks) == 1 ? "" : "s", g_hash_table_size(marks) == 1 ? "" : "s");
        if (n_marks) {
                fprintf(out, "%8s %14s %14s %14s  %-8s %-24s %s\n", "COUNT", "TOTAL", "MEAN", "MAX", "FIRST", "GROUP",
                        "NAME");
                g_autoptr(GPtrArray) list = report_rows_from_table(marks);
                g_ptr_array_sort(list, by_total);
                for (guint i = 0; i < list->len && (int) i < limit; i++) {
                        MarkStats *m = list->pdata[i];
                        fprintf(out, "%8" PRIu64 " ", m->count);
                        print_duration(out, m->total);
                        fprintf(out, " ");
                        print_duration(out, m->total / (int64_t) m->count);
                        fprintf(out, " ");
                        print_duration(out, m->max);
                        fprintf(out, "  %7.3fs %-24s %s", (m->first - p->start_time) / 1e9, m->group, m->name);
                        if (g_hash_table_size(m->pids) > 1)
                                fprintf(out, " (%u processes)", g_hash_table_size(m->pids));
                        fprintf(out, "\n");
                }
                if (list->len > (guint) limit)
                        fprintf(out, "(%u more; --limit N shows more)\n", list->len - (guint) limit);
        }
        fprintf(out, "\nLogs: %" PRIu64 "\n", n_logs);
        if (n_logs) {
                g_autoptr(GList) keys = g_hash_table_get_keys(logs);
                keys = g_list_sort(keys, (GCompareFunc) strcmp);
                for (GList *l = keys; l; l = l->next)
                        fprintf(out, "%8zu  %s\n", GPOINTER_TO_SIZE(g_hash_table_lookup(logs, l->data)),
                                (const char *) l->data);
        }
        return 0;
}
