/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-trace.c: a recording's trace fds, opened and merged. */
#include "recording-trace.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"
#include "recording-control.h"

int recording_open_trace_fd(Recording *r, int *ret_fd) {
        if (r->state != RECORDING_STATE_RECORDING || !r->writer)
                return -ESTALE;
        if (!r->trace) {
                int ret = trace_fds_new(&r->trace);
                if (ret < 0)
                        return ret;
        }
        return trace_fds_open(r->trace, ret_fd);
}

static int pid_compare(const void *a, const void *b) {
        int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
        return (x > y) - (x < y);
}

/* The recording's processes: those of its snapshot and those its events
 * saw fork (every record is drained by now). */
static bool pid_recorded(int32_t pid, void *userdata) {
        Recording *r = userdata;
        size_t n = 0;
        const int32_t *pids = process_maps_get_pids(r->maps, &n);
        return pid > 0 && pids && bsearch(&pid, pids, n, sizeof(int32_t), pid_compare);
}

TraceFds *recording_trace_merge_input(Recording *r, TraceMerge *ret) {
        if (!r->trace || !r->writer || r->error)
                return NULL;
        *ret = (TraceMerge) {
                .writer = r->writer,
                .ids = &r->counter_ids,
                .start_time = r->start_time,
                .end_time = now_monotonic_ns(),
                .pid_known = pid_recorded,
                .address_func = recording_note_program_addresses,
                .userdata = r,
        };
        return r->trace;
}

void recording_trace_get_stats(const Recording *r, TraceFdStats *ret) {
        *ret = r->trace ? *trace_fds_get_stats(r->trace) : (TraceFdStats) {};
}
