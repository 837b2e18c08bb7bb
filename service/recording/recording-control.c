/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-control.c: the part that serves a recording's control fds
 * (Sysprof's collector protocol, control-ring.c): started with the
 * recording, closed when sampling stops, what its rings still hold
 * drained by its "control-rings" post-stop stage so ring addresses get
 * symbolized too; and what the D-Bus face's OpenControlFd and AddMark do. */
#include "recording-control.h"
#include "recording-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "basic.h"
#include "capture.h"
#include "protocol.h"

typedef struct Control {
        ControlServer *server;
        UserCharge ring_charge; /* its rings, against the owner's limit */
} Control;

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
        Control *c = userdata;
        if (delta < 0) {
                user_charge_sub(&c->ring_charge, (uint64_t) -delta);
                return 0;
        }
        return user_charge_add(&c->ring_charge, (uint64_t) delta, message, message_size);
}

static int control_begin(void *part, Recording *rec, const char **ret_name, char **ret_why) {
        Control *c = part;
        int r = control_server_new(rec->event, rec->writer, &rec->counter_ids, &c->server);
        if (r < 0)
                return recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_FAILED,
                                             "cannot start the control fd server: %m");
        control_server_set_address_func(c->server, recording_note_program_addresses, rec);
        user_charge_init(&c->ring_charge, rec->limits, rec->owner_uid, USER_RESOURCE_CONTROL_RINGS);
        control_server_set_ring_budget(c->server, on_ring_budget, c);
        return 0;
}

/* It stops answering; what its rings hold is drained by its stage. */
static void control_close(void *part, Recording *rec) {
        Control *c = part;
        control_server_close(c->server);
}

/* Drains what is still in the rings (nothing, after the stage), writes
 * the control statistics (METADATA "periscope.control") and frees the
 * server. */
static void control_finish(void *part, Recording *rec) {
        Control *c = part;
        if (!c->server)
                return;
        control_server_stop(c->server); /* last drain */
        const ControlServerStats *st = control_server_get_stats(c->server);
        if (rec->writer && st->peers > 0) {
                CaptureStatsBuffer b = {};
                const struct {
                        const char *key;
                        uint64_t value;
                } values[] = {
                        { "control_sockets", st->peers },         { "rings", st->rings_created },
                        { "rings_ended", st->rings_ended },       { "rings_dropped", st->rings_dropped },
                        { "rings_refused", st->rings_refused },   { "frames", st->frames_copied },
                        { "frames_skipped", st->frames_skipped }, { "bytes", st->bytes_drained },
                };
                for (size_t i = 0; i < ELEMENTSOF(values); i++)
                        (void) capture_stats_add_u64_key(&b, values[i].key, values[i].value);
                (void) capture_writer_add_stats(rec->writer, now_monotonic_ns(), CAPTURE_CONTROL_ID, &b);
                capture_stats_buffer_clear(&b);
        }
        if (st->write_error < 0)
                log_recording_errno(LOG_ERR, rec->id, st->write_error, "writing control ring frames failed: %m");
        control_server_free(TAKE_PTR(c->server));
        user_charge_release(&c->ring_charge);
}

static void control_free(void *part, Recording *rec) {
        Control *c = part;
        control_server_free(TAKE_PTR(c->server));
        user_charge_release(&c->ring_charge);
}

int recording_open_control_fd(Recording *rec, int *ret_fd) {
        Control *c = recording_part_get(rec, &recording_part_control);
        if (rec->state != RECORDING_STATE_RECORDING || !c || !c->server)
                return -ESTALE;
        return control_server_open_fd(c->server, ret_fd);
}

int recording_add_mark(Recording *rec, int64_t time, int64_t duration, pid_t pid, const char *group, const char *name,
                       const char *message) {
        if (rec->state != RECORDING_STATE_RECORDING || !rec->writer)
                return -ESTALE;
        return capture_writer_add_mark(rec->writer, time, -1, pid > 0 ? pid : -1, duration, group, name, message);
}

/* The control rings' drain while it goes on in the event loop. */
typedef struct ControlDrainRun {
        unsigned recording_id;
        ControlServer *control;
        uint64_t total;
        RecordingStageDone done;
        RecordingStageProgress progress;
        void *userdata;
} ControlDrainRun;

static void control_drained(void *userdata) {
        _cleanup_free_ ControlDrainRun *run = userdata;
        log_recording(LOG_INFO, run->recording_id,
                      "control rings: %.1f MiB left at the Stop copied from the event loop", run->total / 1048576.0);
        run->progress("control-rings", run->total, run->total, run->userdata);
        run->done(0, run->userdata);
}

static void control_drain_cancel(void *job) {
        ControlDrainRun *run = job;
        control_server_stop(run->control); /* the rest at once */
        control_drained(run);
}

/* Copies what programs had written to their control rings when the
 * recording stopped (up to 4 MiB a ring) into the capture, before the
 * symbolize stage names the addresses it holds; a slice at a time, so a
 * program that flooded its rings does not hold the service at its Stop. */
static int control_stage(void *part, Recording *rec, const RecordingStageInput *in, RecordingStageResults *results,
                         RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                         RecordingStageJob *ret_job) {
        Control *c = part;
        if (!c->server)
                return 0;
        uint64_t total = control_server_get_backlog(c->server);
        if (total == 0)
                return 0;
        _cleanup_free_ ControlDrainRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (ControlDrainRun){ in->recording_id, c->server, total, done, progress, userdata };
        progress("control-rings", 0, total, userdata);
        int r = control_server_drain_async(c->server, control_drained, run);
        if (r <= 0)
                return r;
        /* the run belongs to control_drained() now */
        *ret_job = (RecordingStageJob){ control_drain_cancel, run };
        TAKE_PTR(run);
        return 1;
}

const RecordingPartVTable recording_part_control = {
        .name = "control",
        .size = sizeof(Control),
        .begin = control_begin,
        .close = control_close,
        .stage_name = "control-rings",
        .stage = control_stage,
        .finish = control_finish,
        .free = control_free,
};
