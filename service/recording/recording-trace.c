/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-trace.c: a recording's trace fds, opened and merged. */
#include "recording-trace.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"
#include "recording-control.h"
#include "recording-private.h"

int recording_open_trace_fd(Recording *rec, int *ret_fd) {
        if (rec->state != RECORDING_STATE_RECORDING || !rec->writer)
                return -ESTALE;
        if (!rec->trace) {
                int r = trace_fds_new(&rec->trace);
                if (r < 0)
                        return r;
        }
        return trace_fds_open(rec->trace, ret_fd);
}

static int pid_compare(const void *a, const void *b) {
        int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
        return (x > y) - (x < y);
}

/* The recording's processes: those of its snapshot and those its events
 * saw fork (every record is drained by now). */
static bool pid_recorded(int32_t pid, void *userdata) {
        Recording *rec = userdata;
        size_t n = 0;
        const int32_t *pids = process_maps_get_pids(rec->maps, &n);
        return pid > 0 && pids && bsearch(&pid, pids, n, sizeof(int32_t), pid_compare);
}

TraceFds *recording_trace_merge_input(Recording *rec, TraceMerge *ret) {
        if (!rec->trace || !rec->writer || rec->error)
                return NULL;
        *ret = (TraceMerge){
                .writer = rec->writer,
                .ids = &rec->counter_ids,
                .start_time = rec->start_time,
                .end_time = now_monotonic_ns(),
                .pid_known = pid_recorded,
                .address_func = recording_note_program_addresses,
                .userdata = rec,
        };
        return rec->trace;
}

void recording_trace_get_stats(const Recording *rec, TraceFdStats *ret) {
        *ret = rec->trace ? *trace_fds_get_stats(rec->trace) : (TraceFdStats){};
}
