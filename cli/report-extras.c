/* report-extras.c: runs the --marks, --counters, --timeline and --memory
 * views of `periscope report` on one capture. */
#include "report-extras.h"

#include <errno.h>
#include <stdlib.h>

#include <glib.h>

#include "capture.h"
#include "report-memory.h"

int report_extras_path(const char *path, gboolean marks, gboolean counters, const char *timeline, gboolean memory,
                       int limit, const ReportPidFilter *filter, FILE *out) {
        CaptureReader *r = NULL;
        char *error = NULL;
        int k = capture_reader_open_path(path, &r, &error);
        if (k < 0) {
                fprintf(stderr, "periscope report: %s\n", error ? error : g_strerror(-k));
                free(error);
                return k;
        }
        int ret = 0;
        bool first = true;
        if (marks) {
                k = report_marks(r, limit, filter, out);
                ret = ret ? ret : k;
                first = false;
        }
        if (counters) {
                if (!first)
                        fputc('\n', out);
                k = report_counters(r, filter, out);
                ret = ret ? ret : k;
                first = false;
        }
        if (timeline) {
                if (!first)
                        fputc('\n', out);
                k = report_timeline(r, timeline, filter, out);
                ret = ret ? ret : k;
                first = false;
        }
        if (memory) {
                if (!first)
                        fputc('\n', out);
                SymbolTable *symbols = NULL;
                k = symbol_table_load(r, &symbols, &error);
                if (k < 0 && k != -ENOENT)
                        fprintf(stderr, "periscope report: symbols unusable, showing addresses: %s\n",
                                error ? error : g_strerror(-k));
                free(error);
                error = NULL;
                ReportMemoryOptions o = { .limit = limit, .filter = filter };
                k = report_memory(r, symbols, &o, out);
                symbol_table_free(symbols);
                ret = ret ? ret : k;
        }
        capture_reader_free(r);
        return ret;
}
