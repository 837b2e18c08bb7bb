/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-extras.c: runs the --marks, --counters, --timeline and --memory
 * views of `periscope report` on one capture. */
#include "report-extras.h"

#include <stdlib.h>

#include <glib.h>

#include "capture.h"
#include "capture-open.h"
#include "report-memory.h"

int report_extras_path(const char *path, gboolean marks, gboolean counters, const char *timeline, ReportSaveFn save,
                       gboolean memory, int limit, const ReportPidFilter *filter, FILE *out) {
        CaptureReader *r = NULL;
        int k = cli_capture_open("report", path, &r);
        if (k < 0)
                return k;
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
                k = report_timeline(r, timeline, save, filter, out);
                ret = ret ? ret : k;
                first = false;
        }
        if (memory) {
                if (!first)
                        fputc('\n', out);
                ReportMemoryOptions o = { .limit = limit, .filter = filter };
                k = report_memory_with_symbols(r, &o, out);
                ret = ret ? ret : k;
        }
        capture_reader_free(r);
        return ret;
}
