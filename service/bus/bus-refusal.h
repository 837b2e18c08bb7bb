/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-refusal.h: every call periscoped refuses is logged once, at notice,
 * with the caller's uid, what it asked (interface and method) and why (the
 * error's message and name): "uid 1000: org.periscope.Profiler1.Record
 * refused: ... (org.periscope.Error.NotAuthorized)", with UID=, RECORDING=
 * and the refusal's MESSAGE_ID in the journal. A method handler is wrapped
 * with BUS_METHOD_LOG_REFUSALS(); an answer sent later (after polkit) goes
 * through bus_reply_refused(). */
#pragma once

#include <systemd/sd-bus.h>

#include "authorization.h"

/* Logs that call was refused with error (or, when none is set, with the
 * errno r). caller may be NULL: then it is asked from call. */
void bus_log_refusal(sd_bus_message *call, const Caller *caller, unsigned recording_id, int r,
                     const sd_bus_error *error);

/* Answers call with error and logs the refusal. */
int bus_reply_refused(sd_bus_message *call, const Caller *caller, unsigned recording_id, const sd_bus_error *error);

/* What a method handler returned (r, error): a refusal is logged. Returns r. */
int bus_method_result(sd_bus_message *m, unsigned recording_id, int r, const sd_bus_error *error);

/* Defines METHOD_logged(), the sd-bus handler that runs METHOD and logs
 * its refusals; the vtable names METHOD_logged. */
#define BUS_METHOD_LOG_REFUSALS(method)                                                                                \
        static int method##_logged(sd_bus_message *m, void *userdata, sd_bus_error *error) {                           \
                return bus_method_result(m, 0, method(m, userdata, error), error);                                     \
        }
