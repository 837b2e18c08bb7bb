/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* podman-storage.h: read-only access to a Podman (containers/storage)
 * overlay store: rootful /var/lib/containers/storage or rootless
 * ~USER/.local/share/containers/storage. The store belongs to its (possibly
 * unprivileged) owner, so it is hostile input: JSON files are opened beneath
 * the store without symlinks and size-limited here, and parsed by the
 * sandboxed helper (json-glib), whose answers are checked (ids of 64 hex
 * digits, bounded, cycle-free layer chains); files are opened beneath the
 * layer's diff directory without symlinks or mount crossings. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "container-info.h"
#include "basic.h"

#define PODMAN_JSON_MAX_BYTES HELPER_MAX_PODMAN_JSON
#define PODMAN_MAX_LAYERS HELPER_MAX_LAYERS

typedef struct PodmanStorage PodmanStorage;

typedef struct PodmanContainer {
        char id[65];
        char name[256];
        char image_id[65];
        char image_name[256];
        char layers[PODMAN_MAX_LAYERS][65];   /* container layer first, then its parents */
        size_t n_layers;
} PodmanContainer;

/* Opens the store of uid (0: rootful); its JSON goes to parser's helper and
 * its rejections to parser's warn (parser must outlive the store). -ENOENT
 * when there is none. */
int podman_storage_open(uid_t uid, const UserFileParser *parser, PodmanStorage **ret);

PodmanStorage *podman_storage_free(PodmanStorage *s);

/* Host path of the store (for provenance and logs). */
const char *podman_storage_path(const PodmanStorage *s);

/* st_dev of the filesystem the store's layers live on. */
dev_t podman_storage_dev(const PodmanStorage *s);

/* Finds a container by full id, unique id prefix (>= 12 digits) or name, and
 * its layer chain, its JSON parsed by helper (NULL: the parser's; its wait
 * may run an event loop). 0; 1 when found but the helper gave no verdict on
 * the image's name (none then); -ENOENT if absent, -EBADMSG for rejected storage
 * files, HELPER_CLIENT_FAILED when the helper gave no verdict (hung,
 * cancelled). */
int podman_storage_find_container(PodmanStorage *s, HelperClient *helper, const char *id_or_name, PodmanContainer *ret);

/* Opens path (absolute, as seen inside the container) in one layer's diff
 * directory. Returns an fd or a negative errno; *ret_host_path gets the host
 * path for provenance. */
int podman_storage_open_in_layer(PodmanStorage *s, const char *layer_id, const char *path, int flags,
                                 char *ret_host_path, size_t host_path_size);

/* Host path of a layer's diff directory (for OVERLAY frames). */
int podman_storage_layer_diff_path(const PodmanStorage *s, const char *layer_id, char *buf, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC(PodmanStorage *, podman_storage_free);
#define _cleanup_podman_storage_ __attribute__((cleanup(podman_storage_freep)))
