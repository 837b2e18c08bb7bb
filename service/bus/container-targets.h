/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-targets.h: the Podman containers and Flatpak instances entries of
 * ListTargets(). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "user-file-jobs.h"

/* Answers call later with reply (a method return whose aa{sv} array is
 * open, the processes in it): appends one a{sv} per container/app instance
 * caller_uid may profile (root: all; others: those with processes they may
 * record on their own, listing only those: kind "container" or "flatpak",
 * engine s, id s, name s, image s, owner-uid u, pids ai) in a job of jobs
 * (their files parsed off the event loop), closes the array and sends it
 * (a failure: an error reply to call); a caller gone meanwhile is no error.
 * Fails as user_file_jobs_add(). */
int container_targets_reply(UserFileJobs *jobs, sd_bus_message *call, sd_bus_message *reply, uid_t caller_uid);
