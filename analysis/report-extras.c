/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-extras.c: runs the --marks, --counters, --timeline and --memory
 * views of `periscope report` on one capture model. */
#include "report-extras.h"

#include <errno.h>
#include <stdlib.h>

#include <glib.h>

#include "report-memory.h"

int report_extras(const ReportProfile *p, gboolean marks, gboolean counters, const char *timeline, ReportSaveFn save,
                  gboolean memory, int limit, const ReportPidFilter *filter, FILE *out) {
        int r = 0;
        bool first = true;
        if (marks) {
                int k = report_marks(p, limit, filter, out);
                r = r ? r : k;
                first = false;
        }
        if (counters) {
                if (!first)
                        fputc('\n', out);
                int k = report_counters(p, filter, out);
                r = r ? r : k;
                first = false;
        }
        if (timeline) {
                if (!first)
                        fputc('\n', out);
                int k = report_timeline(p, timeline, save, filter, out);
                r = r ? r : k;
                first = false;
        }
        if (memory) {
                if (!first)
                        fputc('\n', out);
                ReportMemoryOptions o = { .limit = limit, .filter = filter };
                int k = report_memory(p, &o, out);
                r = r ? r : k;
        }
        return r;
}
