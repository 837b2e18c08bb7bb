/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-modes.c: the combination rules of `periscope report` options. */
#include "report-modes.h"

#include <stdio.h>

/* What each family shows, for the refusal message. */
static const char *const family_shows[_REPORT_FAMILY_MAX] = {
        [REPORT_FAMILY_STACKS] = "shows the sampled stacks",
        [REPORT_FAMILY_FOLDED] = "prints nothing but folded stacks (for other tools)",
        [REPORT_FAMILY_FLAME] = "draws the sampled stacks",
        [REPORT_FAMILY_EVENTS] = "shows what programs and the system reported (marks, logs, counters), not stacks",
        [REPORT_FAMILY_MEMORY] = "shows allocations",
        [REPORT_FAMILY_CONTAINER] = "groups samples by container",
        [REPORT_FAMILY_DIFF] = "compares two captures",
        [REPORT_FAMILY_FLAME_LOOK] = "only changes how a flame graph looks",
        [REPORT_FAMILY_ROOTS] = "shapes the call trees of one capture's processes",
        [REPORT_FAMILY_NAMING] = "names the frames of stacks",
        [REPORT_FAMILY_OFF_CPU] = "weighs stacks by the time threads waited",
};

static gboolean combine(ReportFamily a, ReportFamily b) {
#define BOTH(x, y) ((a == (x) && b == (y)) || (a == (y) && b == (x)))
#define EITHER(x) (a == (x) || b == (x))
        if (a == b)
                return a != REPORT_FAMILY_DIFF;
        if (BOTH(REPORT_FAMILY_DIFF, REPORT_FAMILY_FOLDED)) /* "stack BEFORE AFTER" lines */
                return TRUE;
        /* a flame graph of whatever else is shown: samples, allocations,
         * containers as root frames, a differential graph */
        /* off-CPU time weighs the stack views */
        if (EITHER(REPORT_FAMILY_OFF_CPU))
                return !EITHER(REPORT_FAMILY_MEMORY) && !EITHER(REPORT_FAMILY_DIFF) && !EITHER(REPORT_FAMILY_EVENTS);
        if (EITHER(REPORT_FAMILY_NAMING))
                return !EITHER(REPORT_FAMILY_EVENTS);
        if (EITHER(REPORT_FAMILY_ROOTS)) /* processes are not comparable across captures */
                return !EITHER(REPORT_FAMILY_EVENTS) && !EITHER(REPORT_FAMILY_DIFF);
        if (EITHER(REPORT_FAMILY_FLAME) || EITHER(REPORT_FAMILY_FLAME_LOOK))
                return !EITHER(REPORT_FAMILY_EVENTS);
        /* the stack views weigh allocations with --memory and start from
         * the containers with --by-container */
        if (BOTH(REPORT_FAMILY_STACKS, REPORT_FAMILY_MEMORY) || BOTH(REPORT_FAMILY_FOLDED, REPORT_FAMILY_MEMORY) ||
            BOTH(REPORT_FAMILY_STACKS, REPORT_FAMILY_CONTAINER) ||
            BOTH(REPORT_FAMILY_FOLDED, REPORT_FAMILY_CONTAINER) || BOTH(REPORT_FAMILY_EVENTS, REPORT_FAMILY_MEMORY))
                return TRUE;
        return FALSE;
#undef EITHER
#undef BOTH
}

gboolean report_modes_check(const ReportModeOption *options, gsize n) {
        for (gsize i = 0; i < n; i++) {
                if (!options[i].set)
                        continue;
                for (gsize j = i + 1; j < n; j++) {
                        if (!options[j].set || combine(options[i].family, options[j].family))
                                continue;
                        const ReportModeOption *a = &options[i], *b = &options[j];
                        fprintf(stderr,
                                "periscope report: %s cannot be combined with %s: %s %s, %s %s.\n"
                                "Run them as two reports.\n",
                                a->name, b->name, a->name, family_shows[a->family], b->name, family_shows[b->family]);
                        return FALSE;
                }
        }
        return TRUE;
}
