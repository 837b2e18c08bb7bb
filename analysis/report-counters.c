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

GPtrArray *report_counters_load(CaptureReader *r, const ReportPidFilter *filter, int *ret_error) {
        g_autoptr(GHashTable) by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
        GPtrArray *all = g_ptr_array_new_with_free_func(series_free);
        /* Values may precede their definition (other threads' rings): keep
         * them aside until the end. */
        g_autoptr(GArray) early = g_array_new(FALSE, FALSE, sizeof(CaptureCounterSetValue));
        g_autoptr(GArray) early_time = g_array_new(FALSE, FALSE, sizeof(int64_t));
        CaptureFrame f;
        int k;
        capture_reader_rewind(r);
        while ((k = capture_reader_next(r, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_CTRDEF && (f.pid < 0 || report_pid_wanted(filter, f.pid))) {
                        for (uint16_t i = 0; i < f.ctrdef.n_counters; i++) {
                                const CaptureCounterDef *d = &f.ctrdef.counters[i];
                                if (g_hash_table_contains(by_id, GUINT_TO_POINTER(d->id)))
                                        continue;
                                CounterSeries *s = g_new0(CounterSeries, 1);
                                s->id = d->id;
                                s->pid = f.pid;
                                s->def = *d;
                                s->points = g_array_new(FALSE, FALSE, sizeof(CounterPoint));
                                g_hash_table_insert(by_id, GUINT_TO_POINTER(d->id), s);
                                g_ptr_array_add(all, s);
                        }
                } else if (f.type == CAPTURE_FRAME_CTRSET) {
                        for (uint32_t i = 0; i < f.ctrset.n_values; i++) {
                                g_array_append_val(early, f.ctrset.values[i]);
                                g_array_append_val(early_time, f.time);
                        }
                }
        }
        if (k < 0) {
                fprintf(stderr, "periscope report: %s\n", capture_reader_error(r));
                g_ptr_array_unref(all);
                *ret_error = k;
                return NULL;
        }
        for (guint i = 0; i < early->len; i++) {
                const CaptureCounterSetValue *v = &g_array_index(early, CaptureCounterSetValue, i);
                CounterSeries *s = g_hash_table_lookup(by_id, GUINT_TO_POINTER(v->id));
                if (!s)
                        continue;
                CounterPoint p = { g_array_index(early_time, int64_t, i),
                                   s->def.type == CAPTURE_COUNTER_DOUBLE ? v->value.vdbl : (double) v->value.v64 };
                g_array_append_val(s->points, p);
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

int report_counters(CaptureReader *r, const ReportPidFilter *filter, FILE *out) {
        int err;
        g_autoptr(GPtrArray) all = report_counters_load(r, filter, &err);
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
