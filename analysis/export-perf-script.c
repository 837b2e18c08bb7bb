/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-perf-script.c: the text `perf script` prints for `perf record -g`:
 * a header line per sample ("comm pid/tid [cpu] secs.usecs: period event:")
 * then one line per frame ("\t addr sym+off (dso)"), innermost first, and
 * an empty line. Inline frames get a line of their own with the same
 * address (without perf's " (inlined)" suffix, which the importers of
 * speedscope, the Firefox Profiler and stackcollapse-perf.pl would read as
 * the dso). */
#include "export-formats.h"

#include <inttypes.h>
#include <string.h>

#define UNKNOWN "[unknown]"

static void append_frames(GString *o, const ExportModel *m, const ExportLocation *l) {
        const ExportMapping *em = l->mapping >= 0 ? g_ptr_array_index(m->mappings, l->mapping) : NULL;
        const char *dso = em ? em->filename : UNKNOWN;
        for (guint j = 0; j < l->n_lines; j++) {
                const ExportFunction *f = export_model_function(m, l->lines[j].function);
                g_string_append_printf(o, "\t%16" PRIx64 " ", l->address);
                /* newlines would break the format: names are printable already */
                g_string_append(o, f->name);
                if (j == l->n_lines - 1 && l->offset && !(f->flags & EXPORT_FUNCTION_UNRESOLVED))
                        g_string_append_printf(o, "+0x%" PRIx64, l->offset);
                g_string_append_printf(o, " (%s)\n", dso);
        }
}

gboolean export_perf_script(const ExportModel *m, GByteArray *out, GError **error) {
        (void) error;
        const char *event = m->kind == EXPORT_KIND_CPU ? "cpu-clock" : "malloc";
        g_autoptr(GString) o = g_string_new(NULL);
        for (guint i = 0; i < m->samples->len; i++) {
                const ExportSample *s = &g_array_index(m->samples, ExportSample, i);
                int64_t t = s->time < 0 ? 0 : s->time;
                int64_t period = m->kind == EXPORT_KIND_CPU ? m->period_ns : s->value;
                /* perf's own widths: "%5d/%-5d", "%5lu.%06lu:", " %10lu" */
                g_string_append_printf(o, "%s %5d/%-5d [%03d] %5" PRId64 ".%06" PRId64 ": %10" PRId64 " %s: \n",
                                       export_sample_thread_name(m, s), s->pid, s->tid, s->cpu < 0 ? 0 : s->cpu,
                                       t / 1000000000, (t % 1000000000) / 1000, period, event);
                for (guint j = 0; j < s->n; j++)
                        append_frames(o, m, export_sample_location(m, s, j));
                g_string_append_c(o, '\n');
        }
        g_byte_array_append(out, (const guint8 *) o->str, (guint) o->len);
        return TRUE;
}
