/* container-targets.h: the Podman containers and Flatpak instances entries of
 * ListTargets(). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "helper-client.h"

typedef struct ContainerTargets ContainerTargets;

/* The daemon's container lister for ListTargets(): one call at a time, on
 * a fiber (service/fiber) with a helper of its own whose waits give the
 * event loop back, so parsing users' files (/.flatpak-info, Podman JSON)
 * never holds another caller's call. */
int container_targets_new(sd_event *e, const HelperClientConfig *helper_config, ContainerTargets **ret);
/* Drops the waiting calls unanswered (their callers get no reply: the daemon
 * is exiting) and ends the running one. */
ContainerTargets *container_targets_free(ContainerTargets *t);

/* Answers call later with reply (a method return whose aa{sv} array is
 * open, the processes in it): appends one a{sv} per container/app instance
 * caller_uid may profile (root: all; others: those with processes they may
 * record on their own, listing only those: kind "container" or "flatpak",
 * engine s, id s, name s, image s, owner-uid u, pids ai) on the fiber,
 * closes the array and sends it (a failure: an error reply to call); a
 * caller gone meanwhile is no error. Returns -EBUSY when too many
 * calls wait already. */
int container_targets_reply(ContainerTargets *t, sd_bus_message *call, sd_bus_message *reply, uid_t caller_uid);
