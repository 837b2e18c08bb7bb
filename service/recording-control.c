/* recording-control.c: a recording's control fd server and counters, and
 * the Recording1 methods OpenControlFd and AddMark. */
#include "recording-control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capture-types.h"
#include "cleanup.h"
#include "dbus-api.h"
#include "recording.h"
#include "time-util.h"

#define ADD_MARK_MAX_MESSAGE 4096

/* Code addresses that programs put in their rings get symbolized at Stop
 * like those of perf samples. */
static void on_ring_addresses(int32_t pid, const uint64_t *addrs, size_t n, void *userdata) {
        Recording *r = userdata;
        bool kernel = false;
        for (size_t i = 0; i < n; i++) {
                if (capture_address_is_context(addrs[i])) {
                        kernel = addrs[i] == CAPTURE_CONTEXT_KERNEL;
                        continue;
                }
                if (kernel || addrs[i] == 0)
                        continue; /* a program cannot vouch for kernel addresses */
                /* backtrace() stacks: return addresses, every one */
                if (address_set_add(r->addresses, pid, addrs[i], true) < 0)
                        return;
        }
}

int recording_control_start(Recording *r, sd_bus_error *error) {
        sd_event *e = r->manager->event;
        int ret = control_server_new(e, r->writer, &r->counter_ids, &r->control);
        if (ret < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED, "cannot start the control fd server: %s",
                                         strerror(-ret));
        control_server_set_address_func(r->control, on_ring_addresses, r);

        /* An empty `counters` list turns the counters off. */
        if (r->options.counters && !r->options.counters[0])
                return 0;
        _cleanup_free_ char *msg = NULL;
        ret = counters_new(e, r->writer, &r->counter_ids, r->options.counters, r->options.counter_interval_ms,
                           &r->counters, &msg);
        if (ret < 0)
                return sd_bus_error_setf(error, ret == -EINVAL ? PERISCOPE_ERROR_INVALID_OPTION : PERISCOPE_ERROR_FAILED,
                                         "cannot start the counters: %s", msg ? msg : strerror(-ret));
        return 0;
}

void recording_control_stop(Recording *r) {
        if (r->counters && r->writer)
                (void) counters_sample(r->counters);
        counters_free(TAKE_PTR(r->counters));
        if (!r->control)
                return;
        control_server_stop(r->control); /* last drain */
        const ControlServerStats *st = control_server_get_stats(r->control);
        if (r->writer) {
                char buf[512];
                int len = snprintf(buf, sizeof(buf),
                                   "control_sockets=%llu\nrings=%llu\nrings_ended=%llu\nrings_dropped=%llu\n"
                                   "rings_refused=%llu\nframes=%llu\nframes_skipped=%llu\nbytes=%llu\n",
                                   (unsigned long long) st->peers, (unsigned long long) st->rings_created,
                                   (unsigned long long) st->rings_ended, (unsigned long long) st->rings_dropped,
                                   (unsigned long long) st->rings_refused, (unsigned long long) st->frames_copied,
                                   (unsigned long long) st->frames_skipped, (unsigned long long) st->bytes_drained);
                if (st->peers > 0)
                        (void) capture_writer_add_metadata(r->writer, now_monotonic_ns(), -1, -1, "periscope.control", buf,
                                                           (size_t) len);
        }
        if (st->write_error < 0)
                fprintf(stderr, "periscoped: recording %u: writing control ring frames failed: %s\n", r->id,
                        strerror(-st->write_error));
        control_server_free(TAKE_PTR(r->control));
}

void recording_control_free(Recording *r) {
        counters_free(TAKE_PTR(r->counters));
        control_server_free(TAKE_PTR(r->control));
}

static int append_strv_entry(sd_bus_message *reply, const char *key, char **strv) {
        int r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", key);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, strv);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

int recording_control_append_capabilities(sd_bus_message *reply) {
        const char *const *known = counters_known_sources();
        const char *have[16] = { NULL }, *lack[16] = { NULL };
        size_t n_have = 0, n_lack = 0;
        for (size_t i = 0; known[i] && i < 15; i++) {
                if (counters_source_available(known[i]))
                        have[n_have++] = known[i];
                else
                        lack[n_lack++] = known[i];
        }
        int r = append_strv_entry(reply, "counters", (char **) have);
        if (r < 0)
                return r;
        return append_strv_entry(reply, "counters-unavailable", (char **) lack);
}

/* Only the recording's owner (or root) may feed it. */
static int check_caller(sd_bus_message *m, Recording *r, const char *what, Caller *ret, sd_bus_error *error) {
        int ret_ = caller_from_message(m, ret);
        if (ret_ < 0)
                return ret_;
        if (ret->uid != 0 && ret->uid != r->owner_uid)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "recording %u belongs to uid %u; only its owner or root may %s", r->id,
                                         (unsigned) r->owner_uid, what);
        if (r->state != RECORDING_STATE_RECORDING || !r->control)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED,
                                         "recording %u is %s: %s works only while it records", r->id,
                                         recording_state_to_string(r->state), what);
        return 0;
}

int recording_method_open_control_fd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Recording *r = userdata;
        Caller caller;
        int ret = check_caller(m, r, "open a control fd", &caller, error);
        if (ret < 0 || sd_bus_error_is_set(error))
                return ret;
        _cleanup_close_ int fd = -1;
        ret = control_server_open_fd(r->control, &fd);
        if (ret == -EMFILE)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED,
                                         "recording %u already serves %d control fds; pass one on instead "
                                         "(children inherit it)",
                                         r->id, CONTROL_MAX_PEERS);
        if (ret < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED, "cannot create a control fd: %s",
                                         strerror(-ret));
        return sd_bus_reply_method_return(m, "h", fd); /* sd-bus dups it */
}

int recording_method_add_mark(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Recording *r = userdata;
        int64_t time, duration;
        const char *group, *name, *message;
        int ret = sd_bus_message_read(m, "xxsss", &time, &duration, &group, &name, &message);
        if (ret < 0)
                return ret;
        Caller caller;
        ret = check_caller(m, r, "add marks", &caller, error);
        if (ret < 0 || sd_bus_error_is_set(error))
                return ret;
        if (strlen(group) > CAPTURE_MARK_GROUP_LEN - 1 || strlen(name) > CAPTURE_MARK_NAME_LEN - 1 ||
            strlen(message) > ADD_MARK_MAX_MESSAGE)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "AddMark: group is at most %d bytes, name %d, message %d",
                                         CAPTURE_MARK_GROUP_LEN - 1, CAPTURE_MARK_NAME_LEN - 1, ADD_MARK_MAX_MESSAGE);
        if (duration < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "AddMark: duration is %lld ns; it cannot be negative", (long long) duration);
        int64_t now = now_monotonic_ns();
        if (time == 0)
                time = now; /* "now", for clients without CLOCK_MONOTONIC at hand */
        if (time < r->start_time || time > now)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "AddMark: time %lld is outside the recording (CLOCK_MONOTONIC ns "
                                         "%lld..%lld; 0 means now)",
                                         (long long) time, (long long) r->start_time, (long long) now);
        ret = capture_writer_add_mark(r->writer, time, -1, caller.pid > 0 ? caller.pid : -1, duration, group, name,
                                      message);
        if (ret < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED, "writing the mark failed: %s", strerror(-ret));
        return sd_bus_reply_method_return(m, "");
}
