/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-bus.c: the D-Bus face of one recording (recording-bus.h). */
#include "recording-bus.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "bus-error.h"
#include "protocol.h"
#include "recording.h"
#include "recording-watchers.h"
#include "bus-refusal.h"

#define RECORDING_LINGER_USEC (300ull * 1000 * 1000)
#define ADD_MARK_MAX_MESSAGE 4096

struct RecordingBus {
        RecordingBusHost host;     /* released: set once started */
        Recording *recording;
        unsigned id;
        uid_t owner_uid;
        char *path;
        sd_bus_slot *slot;
        sd_bus_track *track;       /* the client that started it; NULL for a peer */
        RecordingWatchers *watchers; /* who hears its signals: its owner's and root's clients */
        sd_bus_message **stop_waiters;
        size_t n_stop_waiters;
        sd_event_source *linger;   /* frees a finished recording nobody collects */
        sd_event_source *free_later; /* frees it from the loop (recording_bus_free_later) */
        UserCharge recording_charge; /* one running recording, against the owner's limit */
        bool free_pending;
        bool freeing;
};

const char *recording_bus_get_path(const RecordingBus *rb) {
        return rb->path;
}

Recording *recording_bus_get_recording(const RecordingBus *rb) {
        return rb->recording;
}

uid_t recording_bus_get_owner(const RecordingBus *rb) {
        return rb->owner_uid;
}

static int on_free_deferred(sd_event_source *s, void *userdata) {
        recording_bus_free(userdata); /* unrefs s */
        return 0;
}

/* Frees it from the event loop, outside the callback that decided it (the
 * source is its own: a loop that exits first, at a stop, leaves it to
 * recording_bus_free()). */
static void recording_bus_free_later(RecordingBus *rb) {
        if (rb->free_pending || rb->freeing)
                return;
        rb->free_pending = true;
        if (sd_event_add_defer(rb->host.event, &rb->free_later, on_free_deferred, rb) < 0)
                rb->free_later = NULL; /* the linger timer still frees it */
}

static int on_linger(sd_event_source *s, uint64_t usec, void *userdata) {
        recording_bus_free(userdata);
        return 0;
}

static int on_owner_gone(sd_bus_track *t, void *userdata) {
        RecordingBus *rb = userdata;
        /* The owner is gone for good: stop tracking (a handler returning 0
         * with the track still set would be called again). */
        rb->track = sd_bus_track_unref(rb->track);
        RecordingStats st;
        recording_get_stats(rb->recording, &st);
        if (st.state == RECORDING_STATE_FINISHED) {
                recording_bus_free_later(rb);
                return 1;
        }
        /* A recording bounded by a duration or a command may outlive its
         * client (busctl exits right after Record); others end now. */
        if (st.state == RECORDING_STATE_RECORDING && !recording_outlives_client(rb->recording))
                recording_end(rb->recording, RECORDING_END_CLIENT_VANISHED, 0, NULL);
        return 1;
}

/* ---- what the recording tells ---- */

/* PropertiesChanged(s interface, a{sv} changed, as invalidated) with every property's value. */
static int append_properties_changed(sd_bus_message *m, void *userdata) {
        const RecordingStats *st = userdata;
        int r = sd_bus_message_append(m, "s", RECORDING_INTERFACE);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 5, "State", "s", recording_state_to_string(st->state), "Samples",
                                          "t", st->samples, "LostSamples", "t", st->lost_samples, "Bytes", "t",
                                          st->bytes, "Processes", "u", (uint32_t) st->processes);
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 0);
        return r;
}

static void on_changed(Recording *r, void *userdata) {
        RecordingBus *rb = userdata;
        if (!rb->slot)
                return;
        RecordingStats st;
        recording_get_stats(r, &st);
        (void) recording_watchers_send(rb->watchers, rb->path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                       append_properties_changed, &st);
}

typedef struct ProgressArgs {
        const char *stage;
        uint64_t done, total;
} ProgressArgs;

static int append_progress(sd_bus_message *m, void *userdata) {
        const ProgressArgs *a = userdata;
        return sd_bus_message_append(m, "stt", a->stage, a->done, a->total);
}

static void on_progress(Recording *r, const char *stage, uint64_t done, uint64_t total, void *userdata) {
        RecordingBus *rb = userdata;
        if (!rb->slot)
                return;
        ProgressArgs a = { stage, done, total };
        (void) recording_watchers_send(rb->watchers, rb->path, RECORDING_INTERFACE, "Progress", append_progress, &a);
        /* Send now: a stage's CPU slices may run back to back. */
        (void) sd_bus_flush(rb->host.bus);
}

static int append_stats(sd_bus_message *m, const RecordingStats *st) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}", "reason", "s",
                                  recording_end_reason_to_string(st->reason), "samples", "t", st->samples,
                                  "lost-samples", "t", st->lost_samples, "bytes", "t", st->bytes, "processes", "u",
                                  (uint32_t) st->processes, "pinned-files", "u", (uint32_t) st->pinned_files,
                                  "bad-records", "t", st->bad_records);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "duration-ns", "t", st->duration_ns);
        if (r >= 0)
                r = sd_bus_message_append(
                        m, "{sv}", "helper-failures", "u",
                        (uint32_t) (st->helper_failures > UINT32_MAX ? UINT32_MAX : st->helper_failures));
        if (r >= 0)
                r = sd_bus_message_append(
                        m, "{sv}{sv}{sv}", "unwind-helper-failures", "u",
                        (uint32_t) (st->unwind_helper_failures > UINT32_MAX ? UINT32_MAX : st->unwind_helper_failures),
                        "user-addresses", "t", st->user_addresses, "user-addresses-named", "t", st->user_named);
        if (r >= 0 && st->off_cpu)
                r = sd_bus_message_append(m, "{sv}{sv}{sv}{sv}{sv}{sv}", "off-cpu-waits", "t", st->off_cpu_waits,
                                          "off-cpu-blocked-ns", "t", st->off_cpu_blocked_ns, "off-cpu-stacks", "t",
                                          st->off_cpu_stacks, "off-cpu-short-waits", "t", st->off_cpu_short,
                                          "off-cpu-paused-ns", "t", st->off_cpu_paused_ns, "off-cpu-stacks-paused-ns",
                                          "t", st->off_cpu_stacks_paused_ns);
        if (r >= 0 && st->python_processes > 0)
                r = sd_bus_message_append(m, "{sv}{sv}{sv}", "python-processes", "t", st->python_processes,
                                          "python-samples", "t", st->python_samples, "python-read-failures", "t",
                                          st->python_read_failures);
        if (r >= 0 && st->trace_fds > 0)
                r = sd_bus_message_append(m, "{sv}{sv}", "trace-frames", "t", st->trace_frames, "trace-frames-refused",
                                          "t", st->trace_frames_refused);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}{sv}", "addresses-over-budget", "t", st->addresses_over_budget,
                                          "helper-budget-spent", "b", (int) st->helper_budget_spent);
        if (r >= 0 && st->cut) {
                /* what the post-stop stages could not finish (the service was stopping) */
                char cut[64];
                recording_cut_to_string(st->cut, cut, sizeof cut);
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", "cut-short");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "s");
                for (char *p = cut, *e; r >= 0 && *p; p = *e ? e + 1 : e) {
                        e = strchrnul(p, ',');
                        char save = *e;
                        *e = '\0';
                        r = sd_bus_message_append(m, "s", p);
                        *e = save;
                }
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0 && (st->cut & RECORDING_CUT_SYMBOLIZE))
                r = sd_bus_message_append(m, "{sv}{sv}", "names-missing", "s",
                                          st->cut_short ? st->cut_short : "cut short", "names-cut-short", "t",
                                          st->names_cut_short);
        if (r >= 0 && st->follows_container)
                r = sd_bus_message_append(m, "{sv}{sv}", "joined-processes", "u", st->joined_processes,
                                          "container-stopped", "b", (int) st->container_stopped);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* Finished(b ok, s error, a{sv} stats) */
static int append_finished(sd_bus_message *m, void *userdata) {
        const RecordingStats *st = userdata;
        int r = sd_bus_message_append(m, "bs", !st->error_message, st->error_message ? st->error_message : "");
        return r < 0 ? r : append_stats(m, st);
}

static void on_finished(Recording *r, void *userdata) {
        RecordingBus *rb = userdata;
        RecordingStats st;
        recording_get_stats(r, &st);
        if (rb->slot)
                (void) recording_watchers_send(rb->watchers, rb->path, RECORDING_INTERFACE, "Finished", append_finished,
                                               &st);
        on_changed(r, rb);
        user_charge_release(&rb->recording_charge); /* what lingers holds nothing */
        for (size_t i = 0; i < rb->n_stop_waiters; i++) {
                (void) sd_bus_reply_method_return(rb->stop_waiters[i], "");
                sd_bus_message_unref(rb->stop_waiters[i]);
        }
        rb->n_stop_waiters = 0;
        if (rb->freeing)
                return;
        if (rb->host.finished)
                rb->host.finished(rb, rb->host.userdata);
        /* Nobody will come for it: free it now; else keep it a while for its properties. */
        if (!rb->track || sd_bus_track_count(rb->track) == 0)
                recording_bus_free_later(rb);
        else
                (void) sd_event_add_time_relative(rb->host.event, &rb->linger, CLOCK_MONOTONIC,
                                                  RECORDING_LINGER_USEC, 0, on_linger, rb);
}

static const RecordingObserver recording_bus_observer = {
        .changed = on_changed,
        .progress = on_progress,
        .finished = on_finished,
};

/* ---- org.periscope.Recording1 ---- */

/* Only the recording's owner (or root) may stop, feed or read it; a caller
 * who may becomes a watcher of its signals. */
static int check_owner(sd_bus_message *m, RecordingBus *rb, const char *what, Caller *ret, sd_bus_error *error) {
        int r = caller_from_message(m, ret);
        if (r < 0)
                return r;
        if (ret->uid != 0 && ret->uid != rb->owner_uid)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "recording %u belongs to uid %u; only its owner or root may %s", rb->id,
                                         (unsigned) rb->owner_uid, what);
        (void) recording_watchers_add(rb->watchers, m);
        return 0;
}

/* For OpenControlFd, OpenTraceFd and AddMark: the recording must still record. */
static int check_recording(RecordingBus *rb, const char *what, sd_bus_error *error) {
        RecordingStats st;
        recording_get_stats(rb->recording, &st);
        if (st.state != RECORDING_STATE_RECORDING)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED,
                                         "recording %u is %s: %s works only while it records", rb->id,
                                         recording_state_to_string(st.state), what);
        return 0;
}

static int method_stop(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        RecordingBus *rb = userdata;
        Caller caller;
        int r = check_owner(m, rb, "stop it", &caller, error);
        if (r < 0)
                return r;
        RecordingStats st;
        recording_get_stats(rb->recording, &st);
        if (st.state == RECORDING_STATE_FINISHED)
                return sd_bus_reply_method_return(m, "");
        sd_bus_message **w = reallocarray(rb->stop_waiters, rb->n_stop_waiters + 1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        rb->stop_waiters = w;
        rb->stop_waiters[rb->n_stop_waiters++] = sd_bus_message_ref(m);
        recording_end(rb->recording, RECORDING_END_STOPPED, 0, NULL);
        return 1;
}

/* OpenControlFd, OpenTraceFd: a new fd from open_fd for the owner, while
 * recording; at most limit of them. */
static int reply_new_fd(sd_bus_message *m, RecordingBus *rb, const char *what, int (*open_fd)(Recording *, int *),
                        int limit, sd_bus_error *error) {
        char action[64];
        snprintf(action, sizeof(action), "open a %s", what);
        Caller caller;
        int r = check_owner(m, rb, action, &caller, error);
        if (r >= 0)
                r = check_recording(rb, action, error);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = -1;
        r = open_fd(rb->recording, &fd);
        if (r == -EMFILE)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_LIMIT_EXCEEDED,
                                         "recording %u already has %d %ss open; pass one on instead "
                                         "(children inherit it)",
                                         rb->id, limit, what);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "cannot create a %s: %m", what);
        return sd_bus_reply_method_return(m, "h", fd); /* sd-bus dups it */
}

static int method_open_control_fd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return reply_new_fd(m, userdata, "control fd", recording_open_control_fd, CONTROL_MAX_PEERS, error);
}

static int method_open_trace_fd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return reply_new_fd(m, userdata, "trace fd", recording_open_trace_fd, TRACE_MAX_FDS, error);
}

static int method_add_mark(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        RecordingBus *rb = userdata;
        int64_t time, duration;
        const char *group, *name, *message;
        int r = sd_bus_message_read(m, "xxsss", &time, &duration, &group, &name, &message);
        if (r < 0)
                return r;
        Caller caller;
        r = check_owner(m, rb, "add marks", &caller, error);
        if (r >= 0)
                r = check_recording(rb, "add marks", error);
        if (r < 0)
                return r;
        if (strlen(group) > CAPTURE_MARK_GROUP_LEN - 1 || strlen(name) > CAPTURE_MARK_NAME_LEN - 1 ||
            strlen(message) > ADD_MARK_MAX_MESSAGE)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "AddMark: group is at most %d bytes, name %d, message %d",
                                         CAPTURE_MARK_GROUP_LEN - 1, CAPTURE_MARK_NAME_LEN - 1, ADD_MARK_MAX_MESSAGE);
        if (duration < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "AddMark: duration is %lld ns; it cannot be negative", (long long) duration);
        int64_t now = now_monotonic_ns(), start = recording_get_start_time(rb->recording);
        if (time == 0)
                time = now; /* "now", for clients without CLOCK_MONOTONIC at hand */
        if (time < start || time > now)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "AddMark: time %lld is outside the recording (CLOCK_MONOTONIC ns "
                                         "%lld..%lld; 0 means now)",
                                         (long long) time, (long long) start, (long long) now);
        r = recording_add_mark(rb->recording, time, duration, caller.pid, group, name, message);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "writing the mark failed: %m");
        return sd_bus_reply_method_return(m, "");
}

/* Properties answer only the owner and root (others: AccessDenied). */
static int check_reader(sd_bus *bus, RecordingBus *rb, sd_bus_error *error) {
        sd_bus_message *call = sd_bus_get_current_message(bus);
        if (call && recording_watchers_contains(rb->watchers, call))
                return 0;
        Caller caller;
        if (!call || caller_from_message(call, &caller) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "cannot tell who is asking");
        if (caller.uid != 0 && caller.uid != rb->owner_uid)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "recording %u belongs to uid %u; only its owner or root may read its "
                                         "properties",
                                         rb->id, (unsigned) rb->owner_uid);
        (void) recording_watchers_add(rb->watchers, call);
        return 0;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RecordingBus *rb = userdata;
        int r = check_reader(bus, rb, error);
        if (r < 0)
                return r;
        RecordingStats st;
        recording_get_stats(rb->recording, &st);
        if (strcmp(property, "State") == 0)
                return sd_bus_message_append(reply, "s", recording_state_to_string(st.state));
        if (strcmp(property, "Samples") == 0)
                return sd_bus_message_append(reply, "t", st.samples);
        if (strcmp(property, "LostSamples") == 0)
                return sd_bus_message_append(reply, "t", st.lost_samples);
        if (strcmp(property, "Bytes") == 0)
                return sd_bus_message_append(reply, "t", st.bytes);
        if (strcmp(property, "Processes") == 0)
                return sd_bus_message_append(reply, "u", (uint32_t) st.processes);
        return -ENOENT;
}

/* The methods, their refusals logged with the recording's id (read before
 * the call, which may end the recording and free rb). */
#define RECORDING_METHOD_LOG_REFUSALS(method)                                                                          \
        static int method##_logged(sd_bus_message *m, void *userdata, sd_bus_error *error) {                           \
                unsigned id = ((RecordingBus *) userdata)->id;                                                         \
                return bus_method_result(m, id, method(m, userdata, error), error);                                    \
        }
RECORDING_METHOD_LOG_REFUSALS(method_stop)
RECORDING_METHOD_LOG_REFUSALS(method_open_control_fd)
RECORDING_METHOD_LOG_REFUSALS(method_open_trace_fd)
RECORDING_METHOD_LOG_REFUSALS(method_add_mark)

static const sd_bus_vtable recording_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_stop_logged,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("OpenControlFd", SD_BUS_NO_ARGS, SD_BUS_RESULT("h", control_fd),
                                method_open_control_fd_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("OpenTraceFd", SD_BUS_NO_ARGS, SD_BUS_RESULT("h", trace_fd),
                                method_open_trace_fd_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AddMark", SD_BUS_ARGS("x", time, "x", duration, "s", group, "s", name, "s", message),
                                SD_BUS_NO_RESULT, method_add_mark_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_PROPERTY("State", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Samples", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LostSamples", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Bytes", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Processes", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_SIGNAL_WITH_ARGS("Progress", SD_BUS_ARGS("s", stage, "t", done, "t", total), 0),
        SD_BUS_SIGNAL_WITH_ARGS("Finished", SD_BUS_ARGS("b", ok, "s", error, "a{sv}", stats), 0),
        SD_BUS_VTABLE_END,
};

/* ---- life ---- */

int recording_bus_start(const RecordingBusHost *host, sd_bus_message *call, const Caller *caller,
                        RecordOptions *options, const Authorization *auth, int capture_fd, RecordingBus **ret,
                        sd_bus_error *error) {
        assert(host && call && caller && options && auth && ret);
        _cleanup_free_ RecordingBus *rb = calloc(1, sizeof(RecordingBus));
        if (!rb)
                return -ENOMEM;
        rb->host = *host;
        rb->host.released = NULL; /* until it is started */
        rb->host.finished = NULL;
        rb->id = host->id;
        rb->owner_uid = caller->uid;
        if (asprintf(&rb->path, RECORDING_PATH_PREFIX "/%u", rb->id) < 0) {
                rb->path = NULL;
                return -ENOMEM;
        }
        user_charge_init(&rb->recording_charge, host->limits, caller->uid, USER_RESOURCE_RECORDINGS);
        char why[512];
        int r = user_charge_add(&rb->recording_charge, 1, why, sizeof(why));
        if (r < 0) {
                free(rb->path);
                return sd_bus_error_set(error, periscope_error_from_errno(r), why);
        }
        RecordingSetup setup = {
                .event = host->event,
                .id = rb->id,
                .owner_uid = caller->uid,
                .kernel = auth->kernel,
                .check_owner = caller->uid != 0 && !auth->via_polkit,
                .max_pinned_files = host->max_pinned_files,
                .unwind_tables = host->unwind_tables,
                .limits = host->limits,
                .helper = host->helper,
                .user_file_helper = host->user_file_helper,
                .budgets = host->budgets,
                .perf_opener = host->perf_opener,
                .perf_wait = host->perf_wait,
                .perf_wait_userdata = host->perf_wait_userdata,
                .observer = &recording_bus_observer,
                .observer_userdata = rb,
        };
        const char *name;
        _cleanup_free_ char *start_why = NULL;
        r = recording_start(&setup, options, capture_fd, &rb->recording, &name, &start_why);
        if (r < 0) {
                user_charge_release(&rb->recording_charge);
                free(rb->path);
                if (start_why)
                        return sd_bus_error_set(error, name ?: periscope_error_from_errno(r), start_why);
                return r;
        }
        r = recording_watchers_new(host->bus, &rb->watchers);
        if (r >= 0)
                r = recording_watchers_add(rb->watchers, call);
        if (r < 0)
                goto fail;
        r = sd_bus_add_object_vtable(host->bus, &rb->slot, rb->path, RECORDING_INTERFACE, recording_vtable, rb);
        if (r < 0)
                goto fail;
        const char *sender = sd_bus_message_get_sender(call);
        if (sender) {
                r = sd_bus_track_new(host->bus, &rb->track, on_owner_gone, rb);
                if (r >= 0)
                        r = sd_bus_track_add_sender(rb->track, call);
                if (r < 0)
                        goto fail;
        }
        rb->host.released = host->released;
        rb->host.finished = host->finished;
        *ret = TAKE_PTR(rb);
        return 0;
fail:
        bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "starting the recording failed: %m");
        recording_bus_free(TAKE_PTR(rb));
        return r;
}

RecordingBus *recording_bus_free(RecordingBus *rb) {
        if (!rb)
                return NULL;
        rb->freeing = true;
        /* Still recording (service exiting): finalized without stages; its
         * Finished goes out and Stop callers get their answer. */
        rb->recording = recording_free(rb->recording);
        user_charge_release(&rb->recording_charge);
        for (size_t i = 0; i < rb->n_stop_waiters; i++) {
                (void) sd_bus_reply_method_errorf(rb->stop_waiters[i], PERISCOPE_ERROR_FAILED,
                                                  "the recording was discarded");
                sd_bus_message_unref(rb->stop_waiters[i]);
        }
        free(rb->stop_waiters);
        rb->linger = sd_event_source_disable_unref(rb->linger);
        rb->free_later = sd_event_source_disable_unref(rb->free_later);
        sd_bus_slot_unref(rb->slot);
        sd_bus_track_unref(rb->track);
        recording_watchers_free(rb->watchers);
        if (rb->host.released)
                rb->host.released(rb, rb->host.userdata);
        free(rb->path);
        free(rb);
        return NULL;
}
