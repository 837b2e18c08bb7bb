/* report-timeline.c: `periscope report --timeline FILE.svg`: one lane per
 * counter (its line scaled to its own min..max, the range written beside
 * it) over the recording's time, and the marks below as bars as long as
 * their duration (hover for group, name and message). Plain SVG, no script. */
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
#define MARK_ROWS 6

static void xml_text(GString *s, const char *t) {
        for (; *t; t++) {
                switch (*t) {
                case '<': g_string_append(s, "&lt;"); break;
                case '>': g_string_append(s, "&gt;"); break;
                case '&': g_string_append(s, "&amp;"); break;
                case '"': g_string_append(s, "&quot;"); break;
                default:
                        if ((unsigned char) *t >= 0x20 || *t == '\t')
                                g_string_append_c(s, *t);
                }
        }
}

static const char *group_color(const char *group) {
        static const char *const palette[] = { "#3465a4", "#cc0000", "#73d216", "#f57900", "#75507b", "#c4a000",
                                               "#06989a", "#8f5902" };
        return palette[g_str_hash(group) % G_N_ELEMENTS(palette)];
}

int report_timeline(CaptureReader *r, const char *svg_path, FILE *out) {
        int err;
        g_autoptr(GPtrArray) series = report_counters_load(r, &err);
        if (!series)
                return err;
        const CaptureFileHeader *h = capture_reader_get_header(r);
        int64_t t0 = h->start_time, t1 = h->end_time;

        /* Marks, and the time span of everything drawn. */
        typedef struct { int64_t time, duration; char group[CAPTURE_MARK_GROUP_LEN + 1], name[CAPTURE_MARK_NAME_LEN + 1]; char *message; } Mark;
        g_autoptr(GArray) marks = g_array_new(FALSE, FALSE, sizeof(Mark));
        uint64_t n_marks = 0;
        CaptureFrame f;
        int k;
        capture_reader_rewind(r);
        while ((k = capture_reader_next(r, &f)) > 0) {
                if (f.type != CAPTURE_FRAME_MARK)
                        continue;
                n_marks++;
                if (marks->len >= MAX_MARKS_DRAWN)
                        continue;
                Mark m = { .time = f.time, .duration = f.mark.duration, .message = g_strndup(f.mark.message, 200) };
                g_strlcpy(m.group, f.mark.group, sizeof(m.group));
                g_strlcpy(m.name, f.mark.name, sizeof(m.name));
                g_array_append_val(marks, m);
                t1 = MAX(t1, f.time + MAX(f.mark.duration, 0));
        }
        if (k < 0) {
                fprintf(stderr, "periscope report: %s\n", capture_reader_error(r));
                return k;
        }
        for (guint i = 0; i < series->len; i++) {
                CounterSeries *s = series->pdata[i];
                if (s->points->len)
                        t1 = MAX(t1, g_array_index(s->points, CounterPoint, s->points->len - 1).time);
        }
        if (t1 <= t0)
                t1 = t0 + 1;
        double plot_w = SVG_WIDTH - LABEL_WIDTH - 20;
#define X(t) (LABEL_WIDTH + plot_w * (double) ((t) - t0) / (double) (t1 - t0))

        guint n_lanes = 0;
        for (guint i = 0; i < series->len && n_lanes < MAX_LANES; i++)
                if (((CounterSeries *) series->pdata[i])->points->len)
                        n_lanes++;
        int marks_top = 40 + (int) n_lanes * LANE_HEIGHT + 10;
        int height = marks_top + MARK_ROWS * 14 + 50;

        g_autoptr(GString) svg = g_string_new(NULL);
        g_string_append_printf(svg,
                               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                               "font-family=\"sans-serif\" font-size=\"11\">\n"
                               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                               "<text x=\"10\" y=\"20\" font-size=\"14\">Counters and marks over %.3f s</text>\n",
                               SVG_WIDTH, height, (double) (t1 - t0) / 1e9);
        guint lane = 0;
        for (guint i = 0; i < series->len && lane < MAX_LANES; i++) {
                CounterSeries *s = series->pdata[i];
                if (!s->points->len)
                        continue;
                int top = 40 + (int) lane * LANE_HEIGHT;
                double mn = INFINITY, mx = -INFINITY;
                for (guint j = 0; j < s->points->len; j++) {
                        double v = g_array_index(s->points, CounterPoint, j).value;
                        mn = MIN(mn, v);
                        mx = MAX(mx, v);
                }
                double span = mx > mn ? mx - mn : 1;
                g_string_append_printf(svg, "<g class=\"counter\"><title>");
                xml_text(svg, s->def.category);
                g_string_append(svg, " / ");
                xml_text(svg, s->def.name);
                g_string_append(svg, ": ");
                xml_text(svg, s->def.description);
                g_string_append_printf(svg,
                                       "</title>\n<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#f4f4f4\"/>\n"
                                       "<text x=\"10\" y=\"%d\">",
                                       LABEL_WIDTH, top, plot_w, LANE_HEIGHT - 6, top + 16);
                xml_text(svg, s->def.category);
                g_string_append_printf(svg, "</text>\n<text x=\"10\" y=\"%d\" font-weight=\"bold\">", top + 30);
                xml_text(svg, s->def.name);
                if (s->pid >= 0)
                        g_string_append_printf(svg, " (pid %d)", s->pid);
                g_string_append_printf(svg, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\">%.4g .. %.4g</text>\n",
                                       LABEL_WIDTH - 6, top + 42, mn, mx);
                g_string_append(svg, "<polyline fill=\"none\" stroke=\"#3465a4\" stroke-width=\"1.2\" points=\"");
                for (guint j = 0; j < s->points->len; j++) {
                        CounterPoint p = g_array_index(s->points, CounterPoint, j);
                        double y = top + (LANE_HEIGHT - 8) - (LANE_HEIGHT - 12) * (p.value - mn) / span;
                        g_string_append_printf(svg, "%.1f,%.1f ", X(p.time), y);
                }
                g_string_append(svg, "\"/></g>\n");
                lane++;
        }
        g_string_append_printf(svg, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">Marks (%" PRIu64 ")</text>\n",
                               marks_top + 12, n_marks);
        for (guint i = 0; i < marks->len; i++) {
                Mark *m = &g_array_index(marks, Mark, i);
                double x = X(m->time), w = MAX(1.0, X(m->time + MAX(m->duration, 0)) - x);
                int row = (int) (g_str_hash(m->name) % MARK_ROWS);
                g_string_append_printf(svg, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"11\" fill=\"%s\"><title>",
                                       x, marks_top + row * 14, w, group_color(m->group));
                xml_text(svg, m->group);
                g_string_append(svg, " / ");
                xml_text(svg, m->name);
                g_string_append_printf(svg, " at %.6f s, %.3f ms: ", (double) (m->time - t0) / 1e9, m->duration / 1e6);
                xml_text(svg, m->message);
                g_string_append(svg, "</title></rect>\n");
                g_free(m->message);
        }
        if (n_marks > marks->len)
                g_string_append_printf(svg, "<text x=\"%d\" y=\"%d\" fill=\"#666\">%" PRIu64 " more marks not drawn</text>\n",
                                       LABEL_WIDTH, height - 24, n_marks - marks->len);
        /* time axis */
        for (int i = 0; i <= 10; i++) {
                double x = LABEL_WIDTH + plot_w * i / 10.0;
                g_string_append_printf(svg,
                                       "<line x1=\"%.1f\" y1=\"36\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                                       "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">%.2fs</text>\n",
                                       x, x, height - 30, x, height - 12, (double) (t1 - t0) / 1e9 * i / 10.0);
        }
        g_string_append(svg, "</svg>\n");
#undef X
        g_autoptr(GError) error = NULL;
        if (!g_file_set_contents(svg_path, svg->str, (gssize) svg->len, &error)) {
                fprintf(stderr, "periscope report: cannot write the timeline: %s\n", error->message);
                return -EIO;
        }
        fprintf(out, "Timeline of %u counters and %" PRIu64 " marks written to %s (open it in a web browser).\n", lane,
                n_marks, svg_path);
        return 0;
}
