/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-timeline.c: `periscope report --timeline FILE.svg`: one lane per
 * counter over the recording's time and the marks below, one row per mark
 * group and name. Lanes of the same unit share one scale (every CPU lane
 * 0-100%, every memory lane 0 to the largest value), values are written in
 * human units (%, MiB, MiB/s, MHz, W) and the time axis has round ticks
 * (0.5 s, 1 s, 2 s ... chosen from the duration). A capture recorded with
 * --off-cpu also gets a lane per thread: running, runnable (preempted) and
 * blocked over time. Plain SVG, no script:
 * hovering a line or a mark shows what it is. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report-counters.h"
#include "report-extras.h"

#define SVG_WIDTH 1200
#define LABEL_WIDTH 260
#define LANE_HEIGHT 48
#define MAX_LANES 32
#define MAX_MARKS_DRAWN 5000
#define MARK_ROWS 10 /* distinct group/name rows; the rest share "other marks" */
#define MARK_ROW_HEIGHT 16
#define MAX_THREAD_LANES 32
#define THREAD_LANE_HEIGHT 18
#define MAX_STATES_DRAWN 20000

/* One thread's lane (`record --off-cpu`, docs/off-cpu.md): running from
 * its first to its last sign of life, with its runnable and blocked
 * intervals drawn over it. */
typedef struct ThreadLane {
        int32_t pid, tid;
        char *name;
        int64_t first, last;
        GArray *states; /* ThreadState */
} ThreadLane;

typedef struct ThreadState {
        int64_t time, duration;
        int state; /* CAPTURE_OFF_CPU_* */
} ThreadState;

static void thread_lane_free(gpointer p) {
        ThreadLane *l = p;
        g_free(l->name);
        g_array_unref(l->states);
        g_free(l);
}

static ThreadLane *thread_lane(GHashTable *by_tid, int32_t pid, int32_t tid, int64_t time) {
        ThreadLane *l = g_hash_table_lookup(by_tid, GINT_TO_POINTER(tid));
        if (!l) {
                l = g_new0(ThreadLane, 1);
                l->pid = pid;
                l->tid = tid;
                l->first = l->last = time;
                l->states = g_array_new(FALSE, FALSE, sizeof(ThreadState));
                g_hash_table_insert(by_tid, GINT_TO_POINTER(tid), l);
        }
        l->first = MIN(l->first, time);
        l->last = MAX(l->last, time);
        return l;
}

static gint thread_lane_cmp(gconstpointer a, gconstpointer b) {
        const ThreadLane *x = *(ThreadLane *const *) a, *y = *(ThreadLane *const *) b;
        return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : (x->tid < y->tid ? -1 : x->tid > y->tid);
}

/* The threads of a capture with off-CPU intervals, by pid and tid, at most
 * MAX_THREAD_LANES (*ret_more: how many left out); none without. A lane
 * spans its thread's intervals, named as the thread was at the last. */
static void load_thread_lanes(const ReportProfile *p, const ReportPidFilter *filter, GPtrArray *lanes,
                              guint *ret_more) {
        g_autoptr(GHashTable) by_tid = g_hash_table_new_full(NULL, NULL, NULL, thread_lane_free);
        guint drawn = 0;
        for (guint i = 0; i < p->off_cpu->len; i++) {
                const ReportOffCpu *o = &g_array_index(p->off_cpu, ReportOffCpu, i);
                if (o->pid >= 0 && !report_pid_wanted(filter, o->pid))
                        continue;
                ThreadLane *l = thread_lane(by_tid, o->pid, o->tid, o->time);
                int64_t d = o->duration_ns > INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t) o->duration_ns;
                l->last = MAX(l->last, o->time + d);
                if (drawn++ < MAX_STATES_DRAWN) {
                        ThreadState st = { o->time, d, o->state };
                        g_array_append_val(l->states, st);
                }
        }
        GHashTableIter it;
        gpointer value;
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        g_hash_table_iter_init(&it, by_tid);
        while (g_hash_table_iter_next(&it, NULL, &value))
                g_ptr_array_add(all, value);
        g_ptr_array_sort(all, thread_lane_cmp);
        for (guint i = 0; i < all->len; i++) {
                ThreadLane *l = all->pdata[i];
                if (lanes->len >= MAX_THREAD_LANES) {
                        (*ret_more)++;
                        continue;
                }
                l->name = g_strdup(report_profile_thread_name(p, l->pid, l->tid, l->last, NULL));
                g_hash_table_steal(by_tid, GINT_TO_POINTER(l->tid));
                g_ptr_array_add(lanes, l);
        }
}

typedef enum Unit {
        UNIT_PERCENT,
        UNIT_BYTES,
        UNIT_BYTES_PER_SECOND,
        UNIT_MHZ,
        UNIT_WATTS,
        UNIT_OTHER, /* shares a scale with its category only */
} Unit;

typedef struct Scale {
        double min, max;
} Scale;

typedef struct Mark {
        int64_t time, duration;
        guint row;
        int32_t pid;
        char *label; /* "group / name" */
        char *message;
} Mark;

static void mark_clear(gpointer p) {
        Mark *m = p;
        g_free(m->label);
        g_free(m->message);
}

/* Appends t escaped for XML: valid UTF-8 (names come from the capture),
 * no control characters. */
static void xml_text(GString *s, const char *raw) {
        g_autofree char *valid = g_utf8_make_valid(raw, -1);
        for (const char *t = valid; *t; t++) {
                switch (*t) {
                case '<':
                        g_string_append(s, "&lt;");
                        break;
                case '>':
                        g_string_append(s, "&gt;");
                        break;
                case '&':
                        g_string_append(s, "&amp;");
                        break;
                case '"':
                        g_string_append(s, "&quot;");
                        break;
                default:
                        if ((unsigned char) *t >= 0x20 || *t == '\t')
                                g_string_append_c(s, *t);
                }
        }
}

/* The unit of a counter, from the description the service (or a program)
 * gave it: "…, %", "…, bytes", "bytes read per second", "…, MHz", "…, watts". */
static Unit counter_unit(const CaptureCounterDef *d) {
        const char *desc = d->description;
        size_t n = strlen(desc);
        if ((n && desc[n - 1] == '%') || strcmp(d->category, "CPU Percent") == 0)
                return UNIT_PERCENT;
        if (strstr(desc, "bytes") && strstr(desc, "per second"))
                return UNIT_BYTES_PER_SECOND;
        if (strstr(desc, "bytes"))
                return UNIT_BYTES;
        if (strstr(desc, "MHz"))
                return UNIT_MHZ;
        if (strstr(desc, "watts"))
                return UNIT_WATTS;
        return UNIT_OTHER;
}

/* Lanes that share a scale share this key. */
static char *scale_key(const CounterSeries *s) {
        Unit u = counter_unit(&s->def);
        return u == UNIT_OTHER ? g_strdup_printf("other:%s", s->def.category) : g_strdup_printf("unit:%d", (int) u);
}

static char *format_value(Unit u, double v) {
        switch (u) {
        case UNIT_PERCENT:
                return g_strdup_printf("%.0f%%", v);
        case UNIT_BYTES:
        case UNIT_BYTES_PER_SECOND: {
                g_autofree char *size = g_format_size_full(v > 0 ? (guint64) v : 0, G_FORMAT_SIZE_IEC_UNITS);
                return u == UNIT_BYTES ? g_steal_pointer(&size) : g_strconcat(size, "/s", NULL);
        }
        case UNIT_MHZ:
                return g_strdup_printf("%.0f MHz", v);
        case UNIT_WATTS:
                return g_strdup_printf("%.1f W", v);
        default:
                return g_strdup_printf("%.4g", v);
        }
}

static const char *group_color(const char *label) {
        static const char *const palette[] = { "#3465a4", "#cc0000", "#4e9a06", "#f57900",
                                               "#75507b", "#c4a000", "#06989a", "#8f5902" };
        return palette[g_str_hash(label) % G_N_ELEMENTS(palette)];
}

/* A round tick step (1, 2 or 5 times a power of ten, in seconds) giving at
 * most 10 intervals over seconds. */
static double tick_step(double seconds) {
        double step = pow(10, floor(log10(seconds > 0 ? seconds : 1e-9))) / 10;
        static const double mult[] = { 1, 2, 5 };
        for (int k = 0; k < 60; k++) {
                double s = step * mult[k % 3] * pow(10, k / 3);
                if (seconds / s <= 10)
                        return s;
        }
        return seconds;
}

static char *format_seconds(double v) {
        if (fabs(v) < 5e-10)
                return g_strdup("0 s");
        return g_strdup_printf("%g s", v);
}

/* Reads the marks (at most MAX_MARKS_DRAWN kept) and extends *t1 to the end
 * of the last one; rows gets one "group / name" per row in first-seen order. */
static void load_marks(const ReportProfile *p, const ReportPidFilter *filter, GArray *marks, GPtrArray *rows,
                       uint64_t *ret_n, int64_t *t1) {
        g_autoptr(GHashTable) row_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint i = 0; i < p->marks->len; i++) {
                const ReportMark *f = &g_array_index(p->marks, ReportMark, i);
                if (f->pid >= 0 && !report_pid_wanted(filter, f->pid))
                        continue;
                (*ret_n)++;
                *t1 = MAX(*t1, f->time + MAX(f->duration, 0));
                if (marks->len >= MAX_MARKS_DRAWN)
                        continue;
                g_autofree char *group = g_utf8_make_valid(f->group, -1), *name = g_utf8_make_valid(f->name, -1);
                Mark m = { .time = f->time,
                           .duration = f->duration,
                           .pid = f->pid,
                           .label = g_strdup_printf("%s / %s", group, name),
                           .message = g_utf8_make_valid(f->message, MIN((gssize) strlen(f->message), 200)) };
                gpointer row = g_hash_table_lookup(row_of, m.label);
                if (!row) {
                        if (rows->len < MARK_ROWS)
                                g_ptr_array_add(rows, g_strdup(m.label));
                        else if (rows->len == MARK_ROWS)
                                g_ptr_array_add(rows, g_strdup("other marks"));
                        row = GUINT_TO_POINTER(MIN(rows->len, MARK_ROWS + 1));
                        g_hash_table_insert(row_of, g_strdup(m.label), row);
                }
                m.row = GPOINTER_TO_UINT(row) - 1;
                g_array_append_val(marks, m);
        }
}

int report_timeline(const ReportProfile *model, const char *svg_path, ReportSaveFn save, const ReportPidFilter *filter,
                    FILE *out) {
        int err;
        g_autoptr(GPtrArray) series = report_counters_load(model, filter, &err);
        if (!series)
                return err;
        int64_t t0 = model->start_time, t1 = model->end_time;

        g_autoptr(GArray) marks = g_array_new(FALSE, FALSE, sizeof(Mark));
        g_array_set_clear_func(marks, mark_clear);
        g_autoptr(GPtrArray) mark_rows = g_ptr_array_new_with_free_func(g_free);
        uint64_t n_marks = 0;
        load_marks(model, filter, marks, mark_rows, &n_marks, &t1);
        g_autoptr(GPtrArray) threads = g_ptr_array_new_with_free_func(thread_lane_free);
        guint threads_more = 0;
        load_thread_lanes(model, filter, threads, &threads_more);

        /* Lanes, and the scale each unit shares. */
        g_autoptr(GPtrArray) lanes = g_ptr_array_new();
        g_autoptr(GHashTable) scales = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        for (guint i = 0; i < series->len && lanes->len < MAX_LANES; i++) {
                CounterSeries *s = series->pdata[i];
                if (!s->points->len)
                        continue;
                g_ptr_array_add(lanes, s);
                t1 = MAX(t1, g_array_index(s->points, CounterPoint, s->points->len - 1).time);
                char *key = scale_key(s);
                Scale *sc = g_hash_table_lookup(scales, key);
                if (!sc) {
                        sc = g_new(Scale, 1);
                        *sc = (Scale){ 0, counter_unit(&s->def) == UNIT_PERCENT ? 100 : 0 };
                        g_hash_table_insert(scales, key, sc);
                } else
                        g_free(key);
                for (guint j = 0; j < s->points->len; j++) {
                        double v = g_array_index(s->points, CounterPoint, j).value;
                        if (isfinite(v)) {
                                sc->min = MIN(sc->min, v);
                                sc->max = MAX(sc->max, v);
                        }
                }
        }
        if (t1 <= t0)
                t1 = t0 + 1;
        double seconds = (double) (t1 - t0) / 1e9;
        double plot_w = SVG_WIDTH - LABEL_WIDTH - 20;
#define X(t) (LABEL_WIDTH + plot_w * (double) ((t) -t0) / (double) (t1 - t0))

        int threads_top = 40 + (int) lanes->len * LANE_HEIGHT + 10;
        int marks_top = threads_top + (threads->len ? 18 + (int) threads->len * THREAD_LANE_HEIGHT + 10 : 0);
        int n_rows = (int) MAX(mark_rows->len, 1);
        int axis_y = marks_top + 18 + n_rows * MARK_ROW_HEIGHT + 6;
        int height = axis_y + 40;

        g_autoptr(GString) svg = g_string_new(NULL);
        g_autofree char *span = g_strdup_printf("%.3g s", seconds);
        g_string_append_printf(
                svg,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "font-family=\"sans-serif\" font-size=\"11\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text id=\"title\" x=\"10\" y=\"20\" font-size=\"14\">Counters and marks over %.3f s</text>\n",
                SVG_WIDTH, height, seconds);

        /* time grid first, under the lanes */
        double step = tick_step(seconds);
        for (int i = 0; i * step <= seconds * (1 + 1e-9) && i <= 1000; i++) {
                double v = i * step;
                double x = LABEL_WIDTH + plot_w * v / seconds;
                g_autofree char *label = format_seconds(v);
                g_string_append_printf(
                        svg,
                        "<line x1=\"%.1f\" y1=\"36\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                        "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n",
                        x, x, axis_y, x, axis_y + 14, label);
        }
        g_string_append_printf(svg, "<text x=\"%d\" y=\"%d\" fill=\"#666\">time since the start (%s in all)</text>\n",
                               LABEL_WIDTH, axis_y + 30, span);

        for (guint lane = 0; lane < lanes->len; lane++) {
                CounterSeries *s = lanes->pdata[lane];
                Unit u = counter_unit(&s->def);
                g_autofree char *key = scale_key(s);
                const Scale *sc = g_hash_table_lookup(scales, key);
                double range = sc->max > sc->min ? sc->max - sc->min : 1;
                int top = 40 + (int) lane * LANE_HEIGHT;
                double lo = INFINITY, hi = -INFINITY;
                for (guint j = 0; j < s->points->len; j++) {
                        double v = g_array_index(s->points, CounterPoint, j).value;
                        lo = MIN(lo, v);
                        hi = MAX(hi, v);
                }
                g_autofree char *top_label = format_value(u, sc->max), *bottom_label = format_value(u, sc->min);
                g_autofree char *lo_label = format_value(u, lo), *hi_label = format_value(u, hi);
                g_string_append(svg, "<g class=\"counter\"><title>");
                xml_text(svg, s->def.category);
                g_string_append(svg, " / ");
                xml_text(svg, s->def.name);
                g_string_append(svg, ": ");
                xml_text(svg, s->def.description);
                g_string_append_printf(svg, " (%s to %s)</title>\n", lo_label, hi_label);
                g_string_append_printf(svg,
                                       "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#f4f4f4\" "
                                       "fill-opacity=\"0.6\"/>\n",
                                       LABEL_WIDTH, top, plot_w, LANE_HEIGHT - 6);
                g_string_append_printf(svg, "<text x=\"10\" y=\"%d\" fill=\"#666\">", top + 14);
                xml_text(svg, s->def.category);
                g_string_append_printf(svg, "</text>\n<text class=\"lane\" x=\"10\" y=\"%d\" font-weight=\"bold\">",
                                       top + 28);
                xml_text(svg, s->def.name);
                if (s->pid >= 0)
                        g_string_append_printf(svg, " (pid %d)", s->pid);
                g_string_append_printf(svg, "</text>\n<text x=\"10\" y=\"%d\" fill=\"#666\">%s to %s</text>\n",
                                       top + 40, lo_label, hi_label);
                /* the shared scale, at the lane's top and bottom */
                g_string_append_printf(
                        svg,
                        "<text class=\"scale\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#444\">%s</text>\n"
                        "<text class=\"scale\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#444\">%s</text>\n",
                        LABEL_WIDTH - 4, top + 9, top_label, LABEL_WIDTH - 4, top + LANE_HEIGHT - 8, bottom_label);
                g_string_append(svg, "<polyline fill=\"none\" stroke=\"#3465a4\" stroke-width=\"1.2\" points=\"");
                for (guint j = 0; j < s->points->len; j++) {
                        CounterPoint p = g_array_index(s->points, CounterPoint, j);
                        if (!isfinite(p.value))
                                continue;
                        double y = top + (LANE_HEIGHT - 8) - (LANE_HEIGHT - 10) * (p.value - sc->min) / range;
                        g_string_append_printf(svg, "%.1f,%.1f ", X(p.time), y);
                }
                g_string_append(svg, "\"/></g>\n");
        }

        /* threads: running (green) under their runnable (amber) and blocked (grey) intervals */
        if (threads->len)
                g_string_append_printf(svg,
                                       "<text x=\"10\" y=\"%d\" font-weight=\"bold\">Threads: running, "
                                       "<tspan fill=\"#c17d11\">runnable</tspan>, "
                                       "<tspan fill=\"#888a85\">blocked</tspan>%s</text>\n",
                                       threads_top + 12, threads_more ? " (the first 32)" : "");
        for (guint i = 0; i < threads->len; i++) {
                const ThreadLane *l = threads->pdata[i];
                int y = threads_top + 18 + (int) i * THREAD_LANE_HEIGHT;
                g_string_append_printf(svg, "<g class=\"thread\"><text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
                                       LABEL_WIDTH - 4, y + 11);
                xml_text(svg, l->name ? l->name : "");
                g_string_append_printf(svg, " (tid %d)</text>\n", l->tid);
                double x = X(l->first), w = MAX(1.0, X(l->last) - x);
                g_string_append_printf(svg,
                                       "<rect class=\"running\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"12\" "
                                       "fill=\"#73d216\"><title>tid %d running (or short waits)</title></rect>\n",
                                       x, y, w, l->tid);
                for (guint j = 0; j < l->states->len; j++) {
                        const ThreadState *st = &g_array_index(l->states, ThreadState, j);
                        double sx = X(st->time), sw = MAX(0.5, X(st->time + st->duration) - sx);
                        gboolean blocked = st->state == CAPTURE_OFF_CPU_BLOCKED;
                        g_string_append_printf(svg,
                                               "<rect class=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                                               "height=\"12\" fill=\"%s\"><title>tid %d %s at %.6f s for %.3f "
                                               "ms</title></rect>\n",
                                               blocked ? "blocked" : "runnable", sx, y, sw,
                                               blocked ? "#888a85" : "#c17d11", l->tid,
                                               blocked ? "blocked" : "runnable (waiting for a CPU)",
                                               (double) (st->time - t0) / 1e9, (double) st->duration / 1e6);
                }
                g_string_append(svg, "</g>\n");
        }

        g_string_append_printf(svg, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">Marks (%" PRIu64 ")</text>\n",
                               marks_top + 12, n_marks);
        if (n_marks == 0)
                g_string_append_printf(svg,
                                       "<text x=\"%d\" y=\"%d\" fill=\"#666\">none: programs add marks through "
                                       "SYSPROF_CONTROL_FD (docs/control-fd.md)</text>\n",
                                       LABEL_WIDTH, marks_top + 29);
        for (guint i = 0; i < mark_rows->len; i++) {
                const char *label = mark_rows->pdata[i];
                int y = marks_top + 18 + (int) i * MARK_ROW_HEIGHT;
                g_string_append_printf(svg,
                                       "<text class=\"mark-row\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"%s\">",
                                       LABEL_WIDTH - 4, y + 11, group_color(label));
                xml_text(svg, label);
                g_string_append(svg, "</text>\n");
        }
        for (guint i = 0; i < marks->len; i++) {
                Mark *m = &g_array_index(marks, Mark, i);
                double x = X(m->time), w = MAX(1.0, X(m->time + MAX(m->duration, 0)) - x);
                int y = marks_top + 18 + (int) m->row * MARK_ROW_HEIGHT;
                const char *row_label = mark_rows->pdata[m->row];
                g_string_append_printf(
                        svg,
                        "<g class=\"mark\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"12\" fill=\"%s\"><title>",
                        x, y, w, group_color(row_label));
                xml_text(svg, m->label);
                g_string_append_printf(svg, " at %.6f s, %.3f ms", (double) (m->time - t0) / 1e9, m->duration / 1e6);
                if (m->pid >= 0)
                        g_string_append_printf(svg, ", pid %d", m->pid);
                if (*m->message) {
                        g_string_append(svg, ": ");
                        xml_text(svg, m->message);
                }
                g_string_append(svg, "</title></rect>");
                /* a bar wide enough carries its message (or name) */
                const char *text = *m->message ? m->message : m->label;
                if (w >= 6.5 * (double) g_utf8_strlen(text, -1) + 6) {
                        g_string_append_printf(svg, "<text x=\"%.1f\" y=\"%d\" fill=\"white\">", x + 3, y + 10);
                        xml_text(svg, text);
                        g_string_append(svg, "</text>");
                }
                g_string_append(svg, "</g>\n");
        }
        if (n_marks > marks->len)
                g_string_append_printf(
                        svg, "<text x=\"%d\" y=\"%d\" fill=\"#666\">%" PRIu64 " more marks not drawn</text>\n",
                        SVG_WIDTH - 300, marks_top + 12, n_marks - marks->len);
        g_string_append(svg, "</svg>\n");
#undef X
        g_autoptr(GError) error = NULL;
        if (save(svg_path, svg->str, svg->len, &error) < 0) {
                fprintf(stderr, "periscope report: cannot write the timeline: %s\n", error->message);
                return -EIO;
        }
        fprintf(out, "Timeline of %u counter%s and %" PRIu64 " mark%s written to %s (open it in a web browser).\n",
                lanes->len, lanes->len == 1 ? "" : "s", n_marks, n_marks == 1 ? "" : "s", svg_path);
        return 0;
}
