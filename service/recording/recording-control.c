/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-control.c: a recording's control fd server and counters, and
 * what its D-Bus face's OpenControlFd and AddMark do with them. */
#include "recording-control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "basic.h"
#include "capture.h"
#include "protocol.h"
#include "recording-private.h"

void recording_note_program_addresses(int32_t pid, const uint64_t *addrs, size_t n, void *userdata) {
        Recording *rec = userdata;
        bool kernel = false;
        for (size_t i = 0; i < n; i++) {
                if (capture_address_is_context(addrs[i])) {
                        kernel = addrs[i] == CAPTURE_CONTEXT_KERNEL;
                        continue;
                }
                if (kernel || addrs[i] == 0)
                        continue; /* a program cannot vouch for kernel addresses */
                if ((addrs[i] & CAPTURE_JITMAP_MARK) == CAPTURE_JITMAP_MARK)
                        continue; /* named by the program's JITMAP frames, not by files */
                /* backtrace() stacks: return addresses, every one */
                if (address_set_add(rec->addresses, pid, addrs[i], true) < 0)
                        return;
        }
}

/* Each control ring counts against the owner's per-user limit. */
static int on_ring_budget(int delta, char *message, size_t message_size, void *userdata) {
        Recording *rec = userdata;
        if (delta < 0) {
                user_charge_sub(&rec->control_ring_charge, (uint64_t) -delta);
                return 0;
        }
        return user_charge_add(&rec->control_ring_charge, (uint64_t) delta, message, message_size);
}

/* Fills a start failure (see RecordingError). */
static int control_error(RecordingError *e, int r, const char *name, const char *what, const char *why) {
        e->name = name;
        snprintf(e->message, sizeof(e->message), "%s: %s", what, why);
        return r;
}

int recording_control_start(Recording *rec, RecordingError *error) {
        sd_event *e = rec->event;
        int r = control_server_new(e, rec->writer, &rec->counter_ids, &rec->control);
        if (r < 0)
                return control_error(error, r, PERISCOPE_ERROR_FAILED, "cannot start the control fd server",
                                     strerror(-r));
        control_server_set_address_func(rec->control, recording_note_program_addresses, rec);
        user_charge_init(&rec->control_ring_charge, rec->limits, rec->owner_uid, USER_RESOURCE_CONTROL_RINGS);
        control_server_set_ring_budget(rec->control, on_ring_budget, rec);

        /* An empty `counters` list turns the counters off. */
        if (rec->options.counters && !rec->options.counters[0])
                return 0;
        _cleanup_free_ char *msg = NULL;
        r = counters_new(e, rec->writer, &rec->counter_ids, rec->options.counters, rec->options.counter_interval_ms,
                         &rec->counters, &msg);
        if (r < 0)
                return control_error(error, r, periscope_error_from_errno(r), "cannot start the counters",
                                     msg ? msg : strerror(-r));
        return 0;
}

void recording_control_close(Recording *rec) {
        if (rec->counters && rec->writer)
                (void) counters_sample(rec->counters);
        counters_free(TAKE_PTR(rec->counters));
        control_server_close(rec->control);
}

void recording_control_stop(Recording *rec) {
        recording_control_close(rec);
        if (!rec->control)
                return;
        control_server_stop(rec->control); /* last drain */
        const ControlServerStats *st = control_server_get_stats(rec->control);
        if (rec->writer) {
                char buf[512];
                int len = snprintf(buf, sizeof(buf),
                                   "control_sockets=%llu\nrings=%llu\nrings_ended=%llu\nrings_dropped=%llu\n"
                                   "rings_refused=%llu\nframes=%llu\nframes_skipped=%llu\nbytes=%llu\n",
                                   (unsigned long long) st->peers, (unsigned long long) st->rings_created,
                                   (unsigned long long) st->rings_ended, (unsigned long long) st->rings_dropped,
                                   (unsigned long long) st->rings_refused, (unsigned long long) st->frames_copied,
                                   (unsigned long long) st->frames_skipped, (unsigned long long) st->bytes_drained);
                if (st->peers > 0)
                        (void) capture_writer_add_metadata(rec->writer, now_monotonic_ns(), -1, -1, "periscope.control",
                                                           buf, (size_t) len);
        }
        if (st->write_error < 0)
                log_recording_errno(LOG_ERR, rec->id, st->write_error, "writing control ring frames failed: %m");
        control_server_free(TAKE_PTR(rec->control));
        user_charge_release(&rec->control_ring_charge);
}

void recording_control_free(Recording *rec) {
        counters_free(TAKE_PTR(rec->counters));
        control_server_free(TAKE_PTR(rec->control));
        user_charge_release(&rec->control_ring_charge);
}

int recording_open_control_fd(Recording *rec, int *ret_fd) {
        if (rec->state != RECORDING_STATE_RECORDING || !rec->control)
                return -ESTALE;
        return control_server_open_fd(rec->control, ret_fd);
}

int recording_add_mark(Recording *rec, int64_t time, int64_t duration, pid_t pid, const char *group, const char *name,
                       const char *message) {
        if (rec->state != RECORDING_STATE_RECORDING || !rec->writer)
                return -ESTALE;
        return capture_writer_add_mark(rec->writer, time, -1, pid > 0 ? pid : -1, duration, group, name, message);
}
