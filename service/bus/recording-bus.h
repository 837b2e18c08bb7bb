/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

typedef struct RecordingBus RecordingBus;

/* What a recording's face needs from the daemon, given at start so that it
 * does not know the manager (which keeps the list of faces). */
typedef struct RecordingBusHost {
        sd_event *event;
        sd_bus *bus;
        unsigned id;                        /* the recording's number: its object path */
        size_t max_pinned_files;
        struct UnwindTables *unwind_tables; /* NULL: frame pointers only */
        HelperClientConfig helper;
        UserLimits *limits;                 /* the daemon's per-uid limits */
        HelperClient *user_file_helper;     /* the daemon's, for Podman JSON and /.flatpak-info */
        RecordingBudgets budgets;           /* per recording (--max-addresses, --symbolize-budget) */
        PerfOpener *perf_opener;            /* the daemon's (borrowed); NULL: events opened by the daemon */
        PerfOpenerWait perf_wait;           /* the start runs on a fiber: how it awaits the opener (NULL: here) */
        void *perf_wait_userdata;
        /* Called once when the face is freed (the host forgets it). */
        void (*released)(RecordingBus *rb, void *userdata);
        /* Called once when its recording finished (Finished was sent); may be NULL. */
        void (*finished)(RecordingBus *rb, void *userdata);
        void *userdata;
} RecordingBusHost;

/* Starts a recording for the caller of `call` into capture_fd (already
 * checked) and registers its object. Takes over *options. On failure error
 * says why and host->released is not called. */
int recording_bus_start(const RecordingBusHost *host, sd_bus_message *call, const Caller *caller,
                        RecordOptions *options, const Authorization *auth, int capture_fd, RecordingBus **ret,
                        sd_bus_error *error);

/* Unregisters and frees the object and its recording (ended first, without
 * stages, if it still records). Accepts NULL; returns NULL. */
RecordingBus *recording_bus_free(RecordingBus *rb);

const char *recording_bus_get_path(const RecordingBus *rb);
Recording *recording_bus_get_recording(const RecordingBus *rb);
/* Who asked for it (valid until the face is freed, in released too). */
uid_t recording_bus_get_owner(const RecordingBus *rb);
