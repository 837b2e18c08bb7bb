/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-counters.c: `periscope report --counters`: one line per counter
 * (system counters of the service and counters programs defined through
 * their control fd): samples, min, mean, max and last value. */
#include "report-counters.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report-extras.h"

static void series_free(gpointer p) {
        CounterSeries *s = p;
        g_array_unref(s->points);
        g_free(s);
}

static int point_cmp(gconstpointer a, gconstpointer b) {
        const CounterPoint *x = a, *y = b;
        return x->time < y->time ? -1 : x->time > y->time;
}

static int series_cmp(gconstpointer a, gconstpointer b) {
        const CounterSeries *x = *(CounterSeries *const *) a, *y = *(CounterSeries *const *) b;
        int c = strcmp(x->def.category, y->def.category);
        if (c == 0)
                c = strcmp(x->def.name, y->def.name);
        if (c == 0)
                c = x->pid < y->pid ? -1 : x->pid > y->pid;
        return c;
}

GPtrArray *report_counters_load(const ReportProfile *p, const ReportPidFilter *filter, int *ret_error) {
        int r = report_profile_refuse_damaged(p);
        if (r < 0) {
                *ret_error = r;
                return NULL;
        }
        g_autoptr(GHashTable) by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
        GPtrArray *all = g_ptr_array_new_with_free_func(series_free);
        for (guint i = 0; i < p->counter_defs->len; i++) {
                const ReportCounterDef *d = &g_array_index(p->counter_defs, ReportCounterDef, i);
                if ((d->pid >= 0 && !report_pid_wanted(filter, d->pid)) ||
                    g_hash_table_contains(by_id, GUINT_TO_POINTER(d->def.id)))
                        continue;
                CounterSeries *s = g_new0(CounterSeries, 1);
                s->id = d->def.id;
                s->pid = d->pid;
                s->def = d->def;
                s->points = g_array_new(FALSE, FALSE, sizeof(CounterPoint));
                g_hash_table_insert(by_id, GUINT_TO_POINTER(d->def.id), s);
                g_ptr_array_add(all, s);
        }
        /* Values may precede their definition (other threads' rings). */
        for (guint i = 0; i < p->counter_values->len; i++) {
                const ReportCounterValue *v = &g_array_index(p->counter_values, ReportCounterValue, i);
                CounterSeries *s = g_hash_table_lookup(by_id, GUINT_TO_POINTER(v->value.id));
                if (!s)
                        continue;
                CounterPoint pt = { v->time, s->def.type == CAPTURE_COUNTER_DOUBLE ? v->value.value.vdbl
                                                                                   : (double) v->value.value.v64 };
                g_array_append_val(s->points, pt);
        }
        for (guint i = 0; i < all->len; i++) {
                CounterSeries *s = all->pdata[i];
                g_array_sort(s->points, point_cmp);
        }
        g_ptr_array_sort(all, series_cmp);
        *ret_error = 0;
        return all;
}

static void print_value(FILE *out, double v) {
        if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 0.01))
                fprintf(out, " %14.4g", v);
        else
                fprintf(out, " %14.2f", v);
}

int report_counters(const ReportProfile *p, const ReportPidFilter *filter, FILE *out) {
        int err;
        g_autoptr(GPtrArray) all = report_counters_load(p, filter, &err);
        if (!all)
                return err;
        fprintf(out, "Counters: %u\n", all->len);
        if (all->len == 0)
                return 0;
        fprintf(out, "%-16s %-28s %7s %8s %14s %14s %14s %14s\n", "CATEGORY", "NAME", "PID", "SAMPLES", "MIN", "MEAN",
                "MAX", "LAST");
        for (guint i = 0; i < all->len; i++) {
                CounterSeries *s = all->pdata[i];
                double mn = INFINITY, mx = -INFINITY, sum = 0, last = 0;
                for (guint j = 0; j < s->points->len; j++) {
                        double v = g_array_index(s->points, CounterPoint, j).value;
                        mn = MIN(mn, v);
                        mx = MAX(mx, v);
                        sum += v;
                        last = v;
                }
                char pid[16];
                if (s->pid < 0)
                        snprintf(pid, sizeof(pid), "system");
                else
                        snprintf(pid, sizeof(pid), "%d", s->pid);
                fprintf(out, "%-16s %-28s %7s %8u", s->def.category, s->def.name, pid, s->points->len);
                if (s->points->len == 0) {
                        fprintf(out, " %14s %14s %14s %14s\n", "-", "-", "-", "-");
                        continue;
                }
                print_value(out, mn);
                print_value(out, sum / s->points->len);
                print_value(out, mx);
                print_value(out, last);
                fprintf(out, "\n");
        }
        return 0;
}
