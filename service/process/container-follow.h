/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-follow.h: processes that join a recorded Podman container or
 * Flatpak app while the recording runs (`podman exec`, `flatpak enter`, a
 * second `flatpak run` of the app, a restarted container).
 *
 * Per-task inherit events follow every fork of a process that is recorded,
 * but a process entering the container from outside descends from none of
 * them. A scan of /proc (on the recording's tick) finds such processes:
 * every (pid, start time) not seen before is classified the way `container`
 * is resolved at start (container_info_classify, resolver_describe_container,
 * container_instance_matches), and members go to a callback that attaches
 * events and snapshots them. A pid is classified once; again only when its
 * command name changes (an exec: `flatpak enter` and runc's exec enter the
 * sandbox first and exec later), which the full scans see (every
 * CONTAINER_FOLLOW_FULL_EVERY-th reads each /proc/PID/stat; the others only
 * /proc's directory). A reused pid is a new process (its /proc/PID inode
 * number, its start time). Children that inherit already follows are known
 * from the FORK records, so no task gets its events twice. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "resolver.h"

typedef struct ContainerFollow ContainerFollow;

/* Every this many scans, one reads each process's /proc/PID/stat; the
 * others read /proc only (new processes, reused pids: new inode numbers). */
#define CONTAINER_FOLLOW_FULL_EVERY 5

/* Attaches events to a member and snapshots it: 0 when it is recorded now,
 * -ESRCH when it is gone, else a negative errno (-EPERM: the caller may not
 * record it) after logging why; that process is not tried again. */
typedef int (*ContainerFollowJoinFunc)(pid_t pid, void *userdata);

typedef struct ContainerFollowStats {
        uint32_t joined;           /* processes attached by scans */
        uint32_t refused;          /* members the caller may not record */
        uint32_t failed;           /* members that could not be recorded (e.g. no fds left) */
        uint32_t members;          /* recorded container processes alive at the last scan */
        bool stopped;              /* the last scan found none left (the container stopped) */
} ContainerFollowStats;

/* Follows what query names (a `container` option value). */
int container_follow_new(const char *query, ContainerFollow **ret);

ContainerFollow *container_follow_free(ContainerFollow *f);

/* Only instances owned by uid (the host uid that owns their user
 * namespace) are members: a non-root caller's own rootless containers and
 * apps, not another user's namesakes (what the start-time expansion picks,
 * record-options.c). Default: any owner. */
void container_follow_set_owner(ContainerFollow *f, uid_t uid);

/* pid has events already (a target of the recording, or a child that a
 * FORK record showed): the next scan takes it as recorded, without
 * attaching anything. */
int container_follow_note_recorded(ContainerFollow *f, pid_t pid);

/* Scans /proc once: records the new members through join. Returns how many
 * joined, or a negative errno (/proc unreadable, out of memory). */
int container_follow_scan(ContainerFollow *f, Resolver *r, ContainerFollowJoinFunc join, void *userdata);

ContainerFollowStats container_follow_get_stats(const ContainerFollow *f);
