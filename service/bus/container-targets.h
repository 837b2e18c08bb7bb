/* container-targets.h: the Podman containers and Flatpak instances entries of
 * ListTargets(). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "helper-client.h"

/* Appends one a{sv} per container/app instance the caller may profile (root:
 * all; others: those with processes they may record on their own, i.e. their
 * rootless containers, listing only those processes) to an open aa{sv}:
 * kind "container" or "flatpak", engine s, id s, name s, image s,
 * owner-uid u, pids ai. */
int container_targets_append(sd_bus_message *reply, uid_t caller_uid, HelperClient *user_file_helper);
