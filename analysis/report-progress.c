/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-progress.c: terminal progress bar for long loads. */
#include "report-progress.h"

#include <stdio.h>
#include <unistd.h>

#define BAR_WIDTH 30

struct ReportProgress {
        char *what;
        gboolean enabled;
        gboolean drawn;
        gint64 last_draw;
};

ReportProgress *report_progress_new(const char *what, gboolean enabled) {
        ReportProgress *p = g_new0(ReportProgress, 1);
        p->what = g_strdup(what);
        p->enabled = enabled && isatty(STDERR_FILENO);
        return p;
}

void report_progress_update(ReportProgress *p, guint64 done, guint64 total) {
        if (!p->enabled || total == 0)
                return;
        gint64 now = g_get_monotonic_time();
        if (p->drawn && now - p->last_draw < 100 * 1000 && done < total)
                return;
        p->last_draw = now;
        p->drawn = TRUE;
        if (done > total)
                done = total;
        unsigned filled = (unsigned) (done * BAR_WIDTH / total);
        char bar[BAR_WIDTH + 1];
        for (unsigned i = 0; i < BAR_WIDTH; i++)
                bar[i] = i < filled ? '#' : '.';
        bar[BAR_WIDTH] = 0;
        fprintf(stderr, "\r%s [%s] %3u%%", p->what, bar, (unsigned) (done * 100 / total));
        fflush(stderr);
}

void report_progress_free(ReportProgress *p) {
        if (!p)
                return;
        if (p->drawn) {
                fprintf(stderr, "\r\033[K");
                fflush(stderr);
        }
        g_free(p->what);
        g_free(p);
}
