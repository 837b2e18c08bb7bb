/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-counters.c: the part of option `counters` (counters.c): the
 * system counters sampled on a timer while the recording runs, once more
 * when sampling stops. An empty list turns them off. */
#include "recording-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "protocol.h"

typedef struct CountersPart {
        Counters *counters;
} CountersPart;

static int counters_part_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name,
                               char **ret_why) {
        return !(rec->options.counters && !rec->options.counters[0]);
}

static int counters_part_begin(void *part, Recording *rec, const char **ret_name, char **ret_why) {
        CountersPart *c = part;
        _cleanup_free_ char *msg = NULL;
        int r = counters_new(rec->event, rec->writer, &rec->counter_ids, rec->options.counters,
                             rec->options.counter_interval_ms, &c->counters, &msg);
        if (r < 0)
                return recording_start_error(ret_name, ret_why, r, periscope_error_from_errno(r),
                                             "cannot start the counters: %s", msg ? msg : strerror(-r));
        return 0;
}

/* The last sample once sampling ended (not when the start failed); the
 * counters go. */
static void counters_part_close(void *part, Recording *rec) {
        CountersPart *c = part;
        if (c->counters && rec->writer && rec->sampling_end_time > 0)
                (void) counters_sample(c->counters);
        c->counters = counters_free(c->counters);
}

const RecordingPartVTable recording_part_counters = {
        .name = "counters",
        .size = sizeof(CountersPart),
        .start = counters_part_start,
        .begin = counters_part_begin,
        .close = counters_part_close,
        .free = counters_part_close,
};
