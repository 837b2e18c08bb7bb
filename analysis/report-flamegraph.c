/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-flamegraph.c: SVG flame graph writer (layout done here, the inline
 * script only re-lays out on zoom and highlights on search). */
#include "report-flamegraph.h"

#include <math.h>
#include <string.h>

#define FG_PAD 10
#define FG_FRAME_H 16
#define FG_TOP 64    /* title, search box */
#define FG_BOTTOM 34 /* details line */
#define FG_MIN_PX 0.1

/* The script and style, kept apart from layout code. Frames are <g class="f">
 * with data-x/data-w (in samples) and data-d (depth); the first <title> child
 * holds "name (N samples, P%)". */
static const char fg_style[] = "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
                               "#title { font-size: 17px; font-family: sans-serif; }\n"
                               "#details, #matched, #reset { font-family: sans-serif; font-size: 12px; }\n"
                               "#reset { cursor: pointer; fill: #1a5fb4; }\n"
                               "g.f { cursor: pointer; }\n"
                               "g.f:hover rect { stroke: #000; stroke-width: 0.6; }\n"
                               "g.f text { pointer-events: none; }\n"
                               "g.dim rect { opacity: 0.5; }\n"
                               "input { font: 12px sans-serif; width: 240px; }\n";

static const char fg_script[] =
        "(function () {\n"
        "  'use strict';\n"
        "  var svg = document.documentElement;\n"
        "  var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');\n"
        "  var TOTAL = +svg.getAttribute('data-total'), UNIT = svg.getAttribute('data-unit');\n"
        "  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
        "  var details = document.getElementById('details');\n"
        "  var matched = document.getElementById('matched');\n"
        "  var reset = document.getElementById('reset');\n"
        "  var search = document.getElementById('search');\n"
        "  function num(g, k) { return +g.getAttribute('data-' + k); }\n"
        "  function info(g) { return g.querySelector('title').textContent; }\n"
        "  function fit(g, px) {\n"
        "    var name = g.getAttribute('data-name'), t = g.querySelector('text');\n"
        "    var n = Math.floor((px - 6) / 7.2);\n"
        "    t.textContent = n < 3 ? '' : (name.length <= n ? name : name.substr(0, n - 2) + '..');\n"
        "  }\n"
        "  function place(zx, zw, zd) {\n"
        "    var scale = (W - 2 * PAD) / zw;\n"
        "    frames.forEach(function (g) {\n"
        "      var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');\n"
        "      var inside = x + w > zx && x < zx + zw;\n"
        "      var r = g.querySelector('rect'), t = g.querySelector('text');\n"
        "      g.classList.toggle('dim', d < zd);\n"
        "      if (!inside || (d >= zd && (x < zx || x + w > zx + zw))) { g.style.display = 'none'; return; }\n"
        "      var nx = Math.max(x, zx), nw = Math.min(x + w, zx + zw) - nx;\n"
        "      var px = nw * scale;\n"
        "      if (px < 0.1) { g.style.display = 'none'; return; }\n"
        "      g.style.display = '';\n"
        "      r.setAttribute('x', PAD + (nx - zx) * scale);\n"
        "      r.setAttribute('width', px);\n"
        "      t.setAttribute('x', PAD + (nx - zx) * scale + 3);\n"
        "      fit(g, px);\n"
        "    });\n"
        "  }\n"
        "  function zoom(g) {\n"
        "    place(num(g, 'x'), num(g, 'w'), num(g, 'd'));\n"
        "    reset.style.display = num(g, 'd') > 0 ? '' : 'none';\n"
        "    svg.setAttribute('data-zoom', g.getAttribute('data-name'));\n"
        "  }\n"
        "  function unzoom() { place(0, TOTAL, 0); reset.style.display = 'none'; svg.removeAttribute('data-zoom'); }\n"
        "  frames.forEach(function (g) {\n"
        "    g.addEventListener('mouseover', function () { details.textContent = info(g); });\n"
        "    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
        "    g.addEventListener('click', function () { zoom(g); });\n"
        "  });\n"
        "  reset.addEventListener('click', unzoom);\n"
        "  function highlight(term) {\n"
        "    var re = null;\n"
        "    if (term) { try { re = new RegExp(term, 'i'); } catch (e) { re = null; } }\n"
        "    var spans = [];\n"
        "    frames.forEach(function (g) {\n"
        "      var r = g.querySelector('rect'), name = g.getAttribute('data-name');\n"
        "      var hit = term && (re ? re.test(name) : name.toLowerCase().indexOf(term.toLowerCase()) >= 0);\n"
        "      r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
        "      g.classList.toggle('match', !!hit);\n"
        "      if (hit) spans.push([num(g, 'x'), num(g, 'x') + num(g, 'w')]);\n"
        "    });\n"
        "    spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
        "    var covered = 0, end = -1;\n"
        "    spans.forEach(function (s) {\n"
        "      if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }\n"
        "      else if (s[1] > end) { covered += s[1] - end; end = s[1]; }\n"
        "    });\n"
        "    matched.textContent = term ? 'Matched: ' + covered + ' ' + UNIT + ' (' + (100 * covered / "
        "TOTAL).toFixed(2) + '%)' : ' ';\n"
        "  }\n"
        "  // The search term lives in the URL (#search=TERM): a link or a reload shows the same matches.\n"
        "  function remember(term) {\n"
        "    var url = location.href.split('#')[0] + (term ? '#search=' + encodeURIComponent(term) : '');\n"
        "    try { history.replaceState(null, '', url); } catch (e) { location.hash = term ? 'search=' + "
        "encodeURIComponent(term) : ''; }\n"
        "  }\n"
        "  search.addEventListener('input', function () { highlight(search.value); remember(search.value); });\n"
        "  document.addEventListener('keydown', function (e) {\n"
        "    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search.focus(); }\n"
        "    if (e.key === 'Escape') { search.value = ''; highlight(''); remember(''); unzoom(); }\n"
        "  });\n"
        "  frames.forEach(function (g) { var r = g.querySelector('rect'); r.setAttribute('data-fill', "
        "r.getAttribute('fill')); });\n"
        "  var asked = /(?:^#|&)search=([^&]*)/.exec(location.hash);\n"
        "  if (asked) {\n"
        "    try { search.value = decodeURIComponent(asked[1]); } catch (e) { search.value = asked[1]; }\n"
        "    highlight(search.value);\n"
        "  }\n"
        "  svg.setAttribute('data-ready', '1');\n"
        "})();\n";

static void xml_escape(GString *out, const char *s) {
        for (; *s; s++) {
                switch (*s) {
                case '&':
                        g_string_append(out, "&amp;");
                        break;
                case '<':
                        g_string_append(out, "&lt;");
                        break;
                case '>':
                        g_string_append(out, "&gt;");
                        break;
                case '"':
                        g_string_append(out, "&quot;");
                        break;
                case '\'':
                        g_string_append(out, "&apos;");
                        break;
                default:
                        /* Control characters are not allowed in XML 1.0. */
                        if ((unsigned char) *s < 0x20 && *s != '\t')
                                g_string_append_c(out, '?');
                        else
                                g_string_append_c(out, *s);
                }
        }
}

/* A stable colour per name, in the family of the frame's kind. */
static void frame_colour(const ReportLabel *l, char buf[32]) {
        guint h = g_str_hash(l->function);
        guint a = h & 0xff, b = (h >> 8) & 0xff;
        int r, g, bl;
        if (l->flags & REPORT_LABEL_ROOT) {
                r = 170 + (int) (a % 30), g = 160 + (int) (b % 30), bl = 230;
        } else if (l->flags & REPORT_LABEL_UNRESOLVED) {
                r = g = bl = 170 + (int) (a % 40);
        } else if (l->flags & REPORT_LABEL_KERNEL) {
                /* green: apart from the user frames' red-to-yellow */
                r = 100 + (int) (a % 60), g = 185 + (int) (b % 50), bl = 60 + (int) (a % 40);
        } else if (l->flags & REPORT_LABEL_INLINED) {
                r = 80 + (int) (a % 50), g = 190 + (int) (b % 50), bl = 200 + (int) (a % 40);
        } else {
                r = 205 + (int) (a % 50), g = (int) (b % 200), bl = (int) (a % 55);
        }
        g_snprintf(buf, 32, "rgb(%d,%d,%d)", r, g, bl);
}

typedef struct Layout {
        const ReportCallGraph *g;
        const ReportFlameOptions *opt;
        GString *out;
        int width;
        double scale; /* px per sample */
        guint max_depth;
        guint height;
        double max_delta; /* differential: largest |after% - before%| of a frame */
} Layout;

static guint tree_depth(const ReportNode *n, double scale, guint d) {
        guint best = d;
        for (guint i = 0; i < n->children->len; i++) {
                const ReportNode *c = g_ptr_array_index(n->children, i);
                if ((double) c->total * scale < FG_MIN_PX)
                        continue;
                guint cd = tree_depth(c, scale, d + 1);
                if (cd > best)
                        best = cd;
        }
        return best;
}

static void emit_frame(Layout *L, const char *name, const char *info, guint64 x, guint64 w, guint depth,
                       const char *fill) {
        double px = (double) w * L->scale;
        double X = FG_PAD + (double) x * L->scale;
        /* flames grow up from the bottom; icicles hang down from the top */
        double Y = L->opt->inverted ? (double) FG_TOP + (double) depth * FG_FRAME_H
                                    : (double) L->height - FG_BOTTOM - (double) (depth + 1) * FG_FRAME_H;
        GString *o = L->out;
        g_string_append_printf(o,
                               "<g class=\"f\" data-x=\"%" G_GUINT64_FORMAT "\" data-w=\"%" G_GUINT64_FORMAT
                               "\" data-d=\"%u\" data-name=\"",
                               x, w, depth);
        xml_escape(o, name);
        g_string_append(o, "\"><title>");
        xml_escape(o, info);
        g_string_append_printf(
                o, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>", X, Y, px,
                FG_FRAME_H - 1, fill);
        g_string_append_printf(o, "<text x=\"%.2f\" y=\"%.1f\">", X + 3, Y + FG_FRAME_H - 4.5);
        int fits = (int) floor((px - 6) / 7.2);
        glong len = g_utf8_strlen(name, -1);
        if (fits >= 3) {
                if (len <= fits)
                        xml_escape(o, name);
                else {
                        g_autofree char *cut = g_utf8_substring(name, 0, fits - 2);
                        xml_escape(o, cut);
                        g_string_append(o, "..");
                }
        }
        g_string_append(o, "</text></g>\n");
}

static double share(guint64 part, guint64 whole) {
        return whole ? 100.0 * (double) part / (double) whole : 0.0;
}

/* The child of before (a node of the BEFORE graph) with the same label text
 * as the AFTER node c, or NULL. */
static const ReportNode *matching_child(const ReportCallGraph *bg, const ReportNode *before, const char *text) {
        if (!before)
                return NULL;
        for (guint i = 0; i < before->children->len; i++) {
                const ReportNode *b = g_ptr_array_index(before->children, i);
                if (strcmp(report_labels_get(bg->labels, b->label)->text, text) == 0)
                        return b;
        }
        return NULL;
}

/* Largest change of a frame's share between the two graphs, for the
 * colour scale of the differential flame graph. */
static double max_delta(const ReportCallGraph *g, const ReportCallGraph *bg, const ReportNode *n, const ReportNode *b) {
        double best = 0;
        for (guint i = 0; i < n->children->len; i++) {
                const ReportNode *c = g_ptr_array_index(n->children, i);
                const char *text = report_labels_get(g->labels, c->label)->text;
                const ReportNode *bc = matching_child(bg, b, text);
                double d = fabs(share(c->total, g->n_samples) - share(bc ? bc->total : 0, bg->n_samples));
                double below = max_delta(g, bg, c, bc); /* not inside MAX(): it evaluates twice */
                best = MAX(best, MAX(d, below));
        }
        return best;
}

/* Red for a frame that grew, blue for one that shrank, white for no change,
 * deeper with the size of the change (as FlameGraph's difffolded output). */
static void delta_colour(double delta, double max, char buf[32]) {
        double k = max > 0 ? MIN(1.0, fabs(delta) / max) : 0;
        int strong = (int) (255 - 210 * k);
        if (delta > 0)
                g_snprintf(buf, 32, "rgb(255,%d,%d)", strong, strong);
        else if (delta < 0)
                g_snprintf(buf, 32, "rgb(%d,%d,255)", strong, strong);
        else
                g_snprintf(buf, 32, "rgb(250,250,250)");
}

static void emit_node(Layout *L, const ReportNode *n, const ReportNode *before, guint64 x, guint depth) {
        const ReportCallGraph *g = L->g, *bg = L->opt->before;
        for (guint i = 0; i < n->children->len; i++) {
                const ReportNode *c = g_ptr_array_index(n->children, i);
                if ((double) c->total * L->scale >= FG_MIN_PX) {
                        const ReportLabel *l = report_labels_get(g->labels, c->label);
                        char fill[32];
                        g_autofree char *info = NULL;
                        const ReportNode *bc = NULL;
                        if (bg) {
                                bc = matching_child(bg, before, l->text);
                                double was = share(bc ? bc->total : 0, bg->n_samples),
                                       now = share(c->total, g->n_samples);
                                delta_colour(now - was, L->max_delta, fill);
                                info = g_strdup_printf("%s (%" G_GUINT64_FORMAT " %s, %.2f%%; before %.2f%%, %+.2f%%)",
                                                       l->text, c->total, report_callgraph_unit(g, c->total), now, was,
                                                       now - was);
                        } else {
                                frame_colour(l, fill);
                                if (g->profile->weight == REPORT_WEIGHT_OFF_CPU_NS) {
                                        /* the tooltip says the time blocked */
                                        g_autofree char *t = report_format_ns(c->total);
                                        info = g_strdup_printf("%s (%s blocked, %.2f%%)", l->text, t,
                                                               share(c->total, g->n_samples));
                                } else
                                        info = g_strdup_printf("%s (%" G_GUINT64_FORMAT " %s, %.2f%%)", l->text,
                                                               c->total, report_callgraph_unit(g, c->total),
                                                               share(c->total, g->n_samples));
                        }
                        emit_frame(L, l->text, info, x, c->total, depth, fill);
                        emit_node(L, c, bc, x, depth + 1);
                }
                x += c->total;
        }
}

GString *report_flamegraph_svg(const ReportCallGraph *g, const ReportFlameOptions *opt) {
        Layout L = { .g = g, .opt = opt, .out = g_string_sized_new(1 << 16) };
        L.width = opt->width > 0 ? opt->width : REPORT_FLAME_DEFAULT_WIDTH;
        guint64 total = g->root->total ? g->root->total : 1;
        L.scale = (double) (L.width - 2 * FG_PAD) / (double) total;
        L.max_depth = tree_depth(g->root, L.scale, 0);
        L.height = FG_TOP + (L.max_depth + 1) * FG_FRAME_H + FG_BOTTOM;
        if (opt->before)
                L.max_delta = max_delta(g, opt->before, g->root, opt->before->root);
        const int W = L.width;

        GString *o = L.out;
        g_string_append_printf(o,
                               "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                               "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%u\" "
                               "viewBox=\"0 0 %d %u\" data-width=\"%d\" data-pad=\"%d\" data-total=\"%" G_GUINT64_FORMAT
                               "\" data-unit=\"%s\" data-inverted=\"%d\">\n",
                               W, L.height, W, L.height, W, FG_PAD, total, report_callgraph_unit(g, 2),
                               opt->inverted ? 1 : 0);
        g_string_append_printf(o, "<style>\n%s</style>\n", fg_style);
        g_string_append_printf(o, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#f8f8f4\"/>\n", W, L.height);
        g_string_append_printf(o, "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", W / 2);
        xml_escape(o, opt->title);
        g_string_append(o, "</text>\n");
        if (opt->before) {
                g_string_append_printf(o, "<text id=\"legend\" x=\"%d\" y=\"50\">", FG_PAD + 90);
                g_string_append_printf(
                        o,
                        "widths: after; <tspan fill=\"#c00\">red: grew</tspan>, "
                        "<tspan fill=\"#00c\">blue: shrank</tspan> (share of all %s, largest change %.2f%%)</text>\n",
                        report_callgraph_unit(g, 2), L.max_delta);
        }
        g_string_append_printf(o, "<text id=\"reset\" x=\"%d\" y=\"50\" style=\"display:none\">Reset zoom</text>\n",
                               FG_PAD);
        g_string_append_printf(o,
                               "<foreignObject x=\"%d\" y=\"34\" width=\"260\" height=\"24\">"
                               "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
                               "placeholder=\"Search (regex)\" aria-label=\"Search functions\"/></foreignObject>\n",
                               W - FG_PAD - 260);
        g_string_append_printf(o, "<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n", W - FG_PAD,
                               L.height - 12);
        g_string_append_printf(o, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", FG_PAD, L.height - 12);

        g_autofree char *blocked = report_format_ns(g->n_samples);
        g_autofree char *all = g->profile->weight == REPORT_WEIGHT_OFF_CPU_NS
                                       ? g_strdup_printf("all (%s blocked, 100%%)", blocked)
                                       : g_strdup_printf("all (%" G_GUINT64_FORMAT " %s, 100%%)", g->n_samples,
                                                         report_callgraph_unit(g, g->n_samples));
        emit_frame(&L, "all", all, 0, total, 0, "rgb(200,200,210)");
        emit_node(&L, g->root, opt->before ? opt->before->root : NULL, 0, 1);

        g_string_append_printf(o, "<script type=\"text/javascript\"><![CDATA[\n%s]]></script>\n</svg>\n", fg_script);

        return o;
}
