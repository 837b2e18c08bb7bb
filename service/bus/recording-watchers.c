/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-watchers.c: a recording's signals, unicast to each watcher
 * (recording-watchers.h). */
#include "recording-watchers.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"

struct RecordingWatchers {
        sd_bus *bus;
        sd_bus_track *names;       /* unique names; NULL on a peer-to-peer connection */
};

int recording_watchers_new(sd_bus *bus, RecordingWatchers **ret) {
        RecordingWatchers *w = calloc(1, sizeof(RecordingWatchers));
        if (!w)
                return -ENOMEM;
        w->bus = sd_bus_ref(bus);
        if (sd_bus_is_bus_client(bus) > 0) {
                int r = sd_bus_track_new(bus, &w->names, NULL, NULL);
                if (r < 0) {
                        recording_watchers_free(w);
                        return r;
                }
        }
        *ret = w;
        return 0;
}

RecordingWatchers *recording_watchers_free(RecordingWatchers *w) {
        if (!w)
                return NULL;
        sd_bus_track_unref(w->names);
        sd_bus_unref(w->bus);
        free(w);
        return NULL;
}

int recording_watchers_add(RecordingWatchers *w, sd_bus_message *m) {
        if (!w->names || !sd_bus_message_get_sender(m))
                return 0;
        /* once per name: a watcher that reads properties often stays one entry */
        if (recording_watchers_contains(w, m))
                return 0;
        return sd_bus_track_add_sender(w->names, m);
}

bool recording_watchers_contains(const RecordingWatchers *w, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m);
        return w->names && sender && sd_bus_track_contains(w->names, sender);
}

static int send_one(RecordingWatchers *w, const char *destination, const char *path, const char *interface,
                    const char *member, RecordingSignalAppend append, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = sd_bus_message_new_signal(w->bus, &m, path, interface, member);
        if (r >= 0 && destination)
                r = sd_bus_message_set_destination(m, destination);
        if (r >= 0)
                r = append(m, userdata);
        if (r >= 0)
                r = sd_bus_send(w->bus, m, NULL);
        return r;
}

int recording_watchers_send(RecordingWatchers *w, const char *path, const char *interface, const char *member,
                            RecordingSignalAppend append, void *userdata) {
        if (!w->names) /* peer-to-peer: the one client */
                return send_one(w, NULL, path, interface, member, append, userdata);
        int r = 0;
        for (const char *name = sd_bus_track_first(w->names); name; name = sd_bus_track_next(w->names)) {
                int k = send_one(w, name, path, interface, member, append, userdata);
                if (k < 0 && r == 0)
                        r = k;
        }
        return r;
}
