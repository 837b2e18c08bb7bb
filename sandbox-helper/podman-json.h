/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* podman-json.h: the helper's reader of Podman's storage files
 * (containers.json, layers.json, images.json), which the container's owner
 * may have written: parsed with json-glib after a bounded read, a UTF-8 check
 * and a nesting-depth check, and answered as the few fields the daemon needs
 * (protocol/helper-protocol.h, PODMAN_*). */
#pragma once

#include "protocol.h"

/* Each takes the request payload and the storage file's fd, writes the
 * reply into reply, and on failure returns a negative errno with a reason
 * in ret_why (-EBADMSG/-EFBIG: the file; -EINVAL: an entry or the chain). */
int podman_json_find_container(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why);
int podman_json_layer_chain(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why);
int podman_json_image_name(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why);
