/* recording-bus.h: the D-Bus face of one recording, the object
 * org.periscope.Recording1 at /org/periscope/Recording/ID: Stop,
 * OpenControlFd, AddMark, its properties, Progress and Finished. It owns
 * the Recording (service/recording/), which knows nothing of D-Bus: the
 * recording tells this face what happens through its RecordingObserver.
 * A finished recording lingers a while for its properties unless nobody
 * watches it. */
#pragma once

#include <systemd/sd-bus.h>

#include "authorization.h"
#include "recording.h"

typedef struct Manager Manager;
typedef struct RecordingBus RecordingBus;

/* Starts a recording for the caller of `call` into capture_fd (already
 * checked), registers its object and adds it to the manager. Takes over
 * *options. On failure error says why. */
int recording_bus_start(Manager *m, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                        const Authorization *auth, int capture_fd, RecordingBus **ret, sd_bus_error *error);

/* Unregisters and frees the object and its recording (ended first, without
 * stages, if it still records). Accepts NULL; returns NULL. */
RecordingBus *recording_bus_free(RecordingBus *rb);

const char *recording_bus_get_path(const RecordingBus *rb);
Recording *recording_bus_get_recording(const RecordingBus *rb);
