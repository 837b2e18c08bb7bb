/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-refusal.c: see bus-refusal.h. */
#include "bus-refusal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "basic.h"
#include "recording.h"

void bus_log_refusal(sd_bus_message *call, const Caller *caller, unsigned recording_id, int r,
                     const sd_bus_error *error) {
        Caller asked;
        if (!caller && caller_from_message(call, &asked) >= 0)
                caller = &asked;
        const char *interface = sd_bus_message_get_interface(call);
        const char *member = sd_bus_message_get_member(call);
        const char *why = error && error->message ? error->message : strerror(r < 0 ? -r : EIO);
        const char *name = error && error->name ? error->name : "";
        LogFields fields = {
                .recording_id = recording_id,
                .has_uid = caller != NULL,
                .uid = caller ? caller->uid : 0,
                .message_id = PERISCOPE_MESSAGE_REQUEST_REFUSED,
        };
        /* The uid goes into the text also for a recording's calls (whose
         * prefix is the recording's): the caller need not be its owner. */
        char who[32] = "";
        if (caller && recording_id > 0)
                snprintf(who, sizeof(who), "uid %u: ", (unsigned) caller->uid);
        log_fields(LOG_NOTICE, &fields, "%s%s.%s refused: %s%s%s%s", who, interface ? interface : "?",
                   member ? member : "?", why, *name ? " (" : "", name, *name ? ")" : "");
}

int bus_reply_refused(sd_bus_message *call, const Caller *caller, unsigned recording_id, const sd_bus_error *error) {
        bus_log_refusal(call, caller, recording_id, -EIO, error);
        return sd_bus_reply_method_error(call, error);
}

int bus_method_result(sd_bus_message *m, unsigned recording_id, int r, const sd_bus_error *error) {
        if (r < 0 || sd_bus_error_is_set(error))
                bus_log_refusal(m, NULL, recording_id, r, error);
        return r;
}
