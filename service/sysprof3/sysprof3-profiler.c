/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-profiler.c: org.gnome.Sysprof3.Profiler at
 * /org/gnome/Sysprof3/RAPL, which sysprof-cli --rapl starts through
 * Sysprof's proxy source: Start(a{sv} options, h fd) writes the machine's
 * energy counters (service/counters/, source "energy") as a capture into
 * fd until Stop() or until the caller leaves the bus. RAPL energy readings
 * are a known side channel (which is why the kernel gives them to root
 * only), so Start needs root or polkit, as Record's 'energy' counters do:
 * one decision (counters_root_only_source(), authorization.c). */
#include "sysprof3-profiler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "bus.h"
#include "capture.h"
#include "counters.h"
#include "protocol.h"
#include "sysprof3-state.h"

struct EnergyProfile {
        CaptureWriter *writer;
        CounterIdAllocator ids;
        Counters *counters;
        sd_bus_track *track;       /* the caller: its leaving stops the profile */
};

static EnergyProfile *energy_profile_free(EnergyProfile *e) {
        if (!e)
                return NULL;
        if (e->counters)
                (void) counters_sample(e->counters);
        counters_free(e->counters);
        if (e->writer)
                (void) capture_writer_flush(e->writer);
        capture_writer_free(e->writer);
        sd_bus_track_unref(e->track);
        free(e);
        return NULL;
}

void sysprof3_profiler_end(Sysprof3 *s) {
        s->energy = energy_profile_free(s->energy);
}

static int on_caller_gone(sd_bus_track *track, void *userdata) {
        sysprof3_profiler_end(userdata);
        return 0;
}

static int start_authorized(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                            sd_bus_error *error) {
        int fd;
        int r = sd_bus_message_skip(call, "a{sv}");
        if (r >= 0)
                r = sd_bus_message_read(call, "h", &fd);
        if (r < 0)
                return r;
        if (s->energy)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED,
                                         "the energy profiler is already running: Stop() it first");
        r = capture_fd_check(fd, error);
        if (r < 0)
                return r;
        _cleanup_close_ int wfd = capture_fd_for_writer(fd);
        if (wfd < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_INVALID_CAPTURE, wfd,
                                            "the capture fd cannot be used: %m");
        EnergyProfile *e = calloc(1, sizeof(EnergyProfile));
        if (!e)
                return -ENOMEM;
        _cleanup_free_ char *why = NULL;
        char *sources[] = { (char *) "energy", NULL };
        r = capture_writer_new_fd(wfd, now_monotonic_ns(), &e->writer);
        if (r >= 0)
                r = counters_new(s->mgr->event, e->writer, &e->ids, sources, 0, &e->counters, &why);
        if (r >= 0)
                r = capture_writer_flush(e->writer);
        if (r >= 0 && caller->sender) {
                r = sd_bus_track_new(s->mgr->bus, &e->track, on_caller_gone, s);
                if (r >= 0)
                        r = sd_bus_track_add_sender(e->track, call);
        }
        if (r < 0) {
                energy_profile_free(e);
                if (why)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED,
                                                 "starting the energy profiler failed: %s", why);
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r,
                                            "starting the energy profiler failed: %m");
        }
        s->energy = e;
        return sd_bus_reply_method_return(call, "");
}

static int method_start(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Caller caller;
        int r = caller_from_message(m, &caller);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_NOT_AUTHORIZED, r, "cannot tell who is calling: %m");
        /* No options are defined: an unknown one is an error, not ignored. */
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        const char *key;
        if (sd_bus_message_enter_container(m, 'e', "sv") > 0 && sd_bus_message_read(m, "s", &key) >= 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "unknown option '%.64s': the energy profiler takes none", key);
        /* Authorized as Record's counters=["energy"]: root-only files. */
        char *sources[] = { (char *) "energy", NULL };
        RecordOptions options = { .kernel = -1, .counters = sources };
        return sysprof3_authorize_options(userdata, m, &caller, &options, start_authorized, error);
}

static int method_stop(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Sysprof3 *s = userdata;
        Caller caller;
        int r = caller_from_message(m, &caller);
        if (r < 0)
                return r;
        if (!s->energy)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED, "the energy profiler is not running");
        /* Only who started it (or root) stops it. */
        if (caller.uid != 0 && s->energy->track && caller.sender &&
            sd_bus_track_count_name(s->energy->track, caller.sender) == 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "the energy profiler was started by another client");
        sysprof3_profiler_end(s);
        return sd_bus_reply_method_return(m, "");
}

static int property_capabilities(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}", "energy", "b", counters_source_available("energy"));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

BUS_METHOD_LOG_REFUSALS(method_start)
BUS_METHOD_LOG_REFUSALS(method_stop)

const sd_bus_vtable sysprof3_profiler_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Capabilities", "a{sv}", property_capabilities, 0, 0),
        SD_BUS_METHOD_WITH_ARGS("Start", SD_BUS_ARGS("a{sv}", options, "h", fd), SD_BUS_NO_RESULT, method_start_logged,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_stop_logged,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
