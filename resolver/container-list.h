/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-list.h: the Podman containers and Flatpak instances running now,
 * with their processes (for ListTargets and `record --container`). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "container-info.h"
#include "resolver.h"

typedef struct ContainerInstance {
        ContainerInfo info;        /* raw file copies cleared */
        pid_t *pids;
        size_t n_pids;
} ContainerInstance;

/* Scans /proc and groups every containerized process by (engine, id).
 * Podman names and images come from the owners' stores through r. */
int container_list_instances(Resolver *r, ContainerInstance **ret, size_t *ret_n);

ContainerInstance *container_instances_free(ContainerInstance *list, size_t n);

/* True when query names a container or app that exists but may not run now:
 * a Podman container in uid's store (0: the rootful one) or a Flatpak app
 * installed system-wide or for uid. A recording of it then waits for its
 * processes. */
bool container_exists(Resolver *r, const char *query, uid_t uid);

/* True when query names this instance: Podman full id, unique-looking id
 * prefix (>= 12 hex digits) or name; Flatpak app id or instance id. */
bool container_instance_matches(const ContainerInfo *info, const char *query);
