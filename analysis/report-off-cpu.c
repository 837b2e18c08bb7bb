/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-off-cpu.c: off-CPU summary and the wall-clock table (see
 * report-off-cpu.h). */
#include "report-off-cpu.h"

#include <string.h>

gboolean report_profile_has_off_cpu(const ReportProfile *p) {
        return capture_stats_get_bool(p->stats, CAPTURE_STAT_OFF_CPU) > 0 || p->off_cpu->len > 0;
}

guint32 report_off_cpu_frequency(const ReportProfile *p) {
        guint64 hz = report_profile_stat(p, CAPTURE_STAT_OFF_CPU_SWITCH_SAMPLE_HZ);
        return hz > 0 && hz < 1000000 ? (guint32) hz : 999;
}

void report_print_off_cpu_summary(FILE *out, const ReportProfile *p, const ReportCallGraph *g) {
        if (!report_profile_has_off_cpu(p)) {
                fprintf(out, "Off-CPU: none in this capture (record with `periscope record --off-cpu`)\n");
                return;
        }
        g_autofree char *stacked = report_format_ns(g->n_samples);
        g_autofree char *unstacked = report_format_ns(p->off_cpu_unstacked_ns);
        g_autofree char *shorter = report_format_ns(report_profile_stat(p, CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT_NS));
        g_autofree char *runnable = report_format_ns(report_profile_stat(p, CAPTURE_STAT_OFF_CPU_RUNNABLE_NS));
        g_autofree char *min = report_format_ns(report_profile_stat(p, CAPTURE_STAT_OFF_CPU_MIN_NS));
        fprintf(out, "Blocked: %s with a stack", stacked);
        if (g->n_samples != p->n_samples)
                fprintf(out, " (that match the filters)");
        fprintf(out, ", %s without one (its switch-out fell in a pause of the stack samples)\n", unstacked);
        fprintf(out, "Short waits (under %s, counted, no stack): %" G_GUINT64_FORMAT " waits, %s\n", min,
                report_profile_stat(p, CAPTURE_STAT_OFF_CPU_BLOCKED_SHORT), shorter);
        fprintf(out, "Waiting for a CPU (preempted, runnable): %" G_GUINT64_FORMAT " times, %s\n",
                report_profile_stat(p, CAPTURE_STAT_OFF_CPU_RUNNABLE), runnable);
        guint64 paused = report_profile_stat(p, CAPTURE_STAT_OFF_CPU_PAUSED_NS),
                stacks_paused = report_profile_stat(p, CAPTURE_STAT_OFF_CPU_STACKS_PAUSED_NS);
        if (paused || report_profile_stat(p, CAPTURE_STAT_OFF_CPU_STACK_PAUSES)) {
                g_autofree char *a = report_format_ns(paused), *b = report_format_ns(stacks_paused),
                                *d = report_format_ns(report_profile_stat(p, CAPTURE_STAT_DURATION_NS));
                fprintf(out,
                        "Switches sampled: a storm of context switches (up to %" G_GUINT64_FORMAT
                        " switch records/s): switch records paused %s and stack samples paused %s of %s; off-CPU "
                        "times cover the rest\n",
                        report_profile_stat(p, CAPTURE_STAT_OFF_CPU_PEAK_SWITCH_RECORDS_PER_S), a, b, d);
        }
}

typedef struct WallRow {
        int32_t pid, tid;
        guint64 samples, runnable_ns, blocked_ns, short_ns;
        gboolean counted; /* from the per-thread statistics */
} WallRow;

static WallRow *wall_row(GHashTable *rows, int32_t pid, int32_t tid) {
        WallRow *r = g_hash_table_lookup(rows, GINT_TO_POINTER(tid));
        if (!r) {
                r = g_new0(WallRow, 1);
                r->pid = pid;
                r->tid = tid;
                g_hash_table_insert(rows, GINT_TO_POINTER(tid), r);
        }
        return r;
}

static gboolean wall_passes(const ReportProfile *p, const ReportFilter *f, int32_t pid, int32_t tid) {
        if (!report_filter_match(p, f, pid))
                return FALSE;
        if (!f->tids || f->tids->len == 0)
                return TRUE;
        for (guint i = 0; i < f->tids->len; i++)
                if (g_array_index(f->tids, int32_t, i) == tid)
                        return TRUE;
        return FALSE;
}

static guint64 wall_cpu_ns(const WallRow *r, guint32 hz) {
        return r->samples * 1000000000ull / hz;
}

static guint64 wall_total(const WallRow *r, guint32 hz) {
        return wall_cpu_ns(r, hz) + r->runnable_ns + r->blocked_ns + r->short_ns;
}

static gint wall_cmp(gconstpointer a, gconstpointer b, gpointer userdata) {
        const WallRow *x = *(WallRow *const *) a, *y = *(WallRow *const *) b;
        guint32 hz = GPOINTER_TO_UINT(userdata);
        guint64 tx = wall_total(x, hz), ty = wall_total(y, hz);
        return tx > ty ? -1 : tx < ty ? 1 : x->tid - y->tid;
}

void report_print_wall(FILE *out, const ReportProfile *p, const ReportFilter *filter, guint limit) {
        guint32 hz = report_off_cpu_frequency(p);
        g_autoptr(GHashTable) rows = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, p->stacks);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
                const ReportRawStack *s = key;
                if (wall_passes(p, filter, s->pid, s->tid))
                        wall_row(rows, s->pid, s->tid)->samples += s->count;
        }
        /* the per-thread counts hold every wait, short ones too */
        for (guint i = 0; i < p->off_cpu_threads->len; i++) {
                const ReportOffCpuThread *t = &g_array_index(p->off_cpu_threads, ReportOffCpuThread, i);
                if (!wall_passes(p, filter, t->pid, t->tid))
                        continue;
                WallRow *r = wall_row(rows, t->pid, t->tid);
                r->counted = TRUE;
                r->runnable_ns = t->runnable_ns;
                r->blocked_ns = t->blocked_ns;
                r->short_ns = t->blocked_short_ns;
        }
        /* without them (a capture cut short): the written intervals */
        for (guint i = 0; i < p->off_cpu->len; i++) {
                const ReportOffCpu *o = &g_array_index(p->off_cpu, ReportOffCpu, i);
                if (!wall_passes(p, filter, o->pid, o->tid))
                        continue;
                WallRow *r = wall_row(rows, o->pid, o->tid);
                if (r->counted)
                        continue;
                if (o->state == CAPTURE_OFF_CPU_RUNNABLE)
                        r->runnable_ns += o->duration_ns;
                else
                        r->blocked_ns += o->duration_ns;
        }
        g_autoptr(GPtrArray) sorted = g_ptr_array_new();
        g_hash_table_iter_init(&it, rows);
        gpointer value;
        while (g_hash_table_iter_next(&it, NULL, &value))
                g_ptr_array_add(sorted, value);
        g_ptr_array_sort_with_data(sorted, wall_cmp, GUINT_TO_POINTER(hz));
        fprintf(out, "\nWall-clock time by thread (on the CPU: samples at %u Hz; off it: %s):\n", hz,
                report_profile_has_off_cpu(p) ? "switches" : "not recorded, record with --off-cpu");
        fprintf(out, "%8s %8s %10s %10s %10s %10s  %-16s  %s\n", "TID", "PID", "Wall", "On CPU", "Runnable", "Blocked",
                "Thread", "Process");
        for (guint i = 0; i < sorted->len && i < limit; i++) {
                const WallRow *r = g_ptr_array_index(sorted, i);
                g_autofree char *wall = report_format_ns(wall_total(r, hz)),
                                *cpu = report_format_ns(wall_cpu_ns(r, hz)), *run = report_format_ns(r->runnable_ns),
                                *blocked = report_format_ns(r->blocked_ns + r->short_ns);
                const char *name = report_profile_thread_name(p, r->pid, r->tid, p->last_time, NULL);
                g_autofree char *pname = report_printable(name);
                g_autofree char *comm = report_printable(report_profile_get_comm(p, r->pid));
                fprintf(out, "%8d %8d %10s %10s %10s %10s  %-16s  %s\n", r->tid, r->pid, wall, cpu, run, blocked, pname,
                        comm);
        }
        if (sorted->len > limit)
                fprintf(out, "(%u more thread%s; -n shows more)\n", sorted->len - limit,
                        sorted->len - limit == 1 ? "" : "s");
}
