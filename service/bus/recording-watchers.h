/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-watchers.h: who hears a recording's signals. D-Bus signals are
 * broadcasts that any client may match (eavesdropping on another user's
 * recordings), so each of a recording's signals is sent once per watcher
 * with the watcher's unique name as destination. Watchers are the
 * connection that called Record, and every connection of the owner or of
 * root that has since called a method on the recording or read one of its
 * properties (docs/dbus-api.md, "Signals"); a watcher that leaves the bus
 * is forgotten. On a peer-to-peer connection (one client, no names)
 * signals go to that client. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct RecordingWatchers RecordingWatchers;

int recording_watchers_new(sd_bus *bus, RecordingWatchers **ret);
RecordingWatchers *recording_watchers_free(RecordingWatchers *w);

/* Adds the sender of m (no-op on a peer-to-peer connection). The caller has
 * checked that the sender may see the recording. */
int recording_watchers_add(RecordingWatchers *w, sd_bus_message *m);

/* Whether the sender of m is a watcher already (unique names are never
 * reused, so it was checked before): spares asking the bus who it is. */
bool recording_watchers_contains(const RecordingWatchers *w, sd_bus_message *m);

/* Appends a signal's arguments; called once per watcher. */
typedef int (*RecordingSignalAppend)(sd_bus_message *m, void *userdata);

/* Sends the signal interface.member from path to every watcher. */
int recording_watchers_send(RecordingWatchers *w, const char *path, const char *interface, const char *member,
                            RecordingSignalAppend append, void *userdata);
