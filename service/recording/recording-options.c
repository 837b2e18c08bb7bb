/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-options.c: see recording-options.h. */
#include "recording-options.h"

#include <stdlib.h>

void record_options_done(RecordOptions *o) {
        for (size_t i = 0; o->counters && o->counters[i]; i++)
                free(o->counters[i]);
        free(o->counters);
        o->counters = NULL;
        free(o->pids);
        o->pids = NULL;
        o->n_pids = o->n_given_pids = 0;
        free(o->container);
        o->container = NULL;
}
