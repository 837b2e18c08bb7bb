/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-frames.c: per-process container/app description frames (see
 * container-frames.h). */
#include "container-frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int container_frames_write(CaptureWriter *w, Resolver *res, int64_t time, pid_t pid) {
        if (!res)
                return 0;
        const ContainerInfo *ci = resolver_get_container(res, pid);
        /* its /.flatpak-info or Podman store not parsed yet: described once it is */
        if (ci && container_info_pending(ci))
                return 0;
        if (!resolver_first_description(res, pid))
                return 0;
        if (!ci || ci->engine == CONTAINER_ENGINE_NONE)
                return 0;
        char text[8 * CONTAINER_FIELD_MAX];
        int n = snprintf(text, sizeof(text), "engine=%s\nid=%s\nname=%s\nimage=%s\nruntime=%s\nowner-uid=%u\nrootless=%s\n",
                         container_engine_to_string(ci->engine), ci->id, ci->name, ci->image, ci->runtime,
                         (unsigned) ci->owner_uid, ci->rootless ? "true" : "false");
        if (n < 0 || (size_t) n >= sizeof(text))
                return -ENAMETOOLONG;
        int r = capture_writer_add_file(w, time, -1, pid, CAPTURE_CONTAINER_PATH, text, (size_t) n);
        if (r < 0)
                return r;
        if (ci->flatpak_info) {
                r = capture_writer_add_file(w, time, -1, pid, "/.flatpak-info", ci->flatpak_info, ci->flatpak_info_len);
                if (r < 0)
                        return r;
        }
        if (ci->containerenv) {
                r = capture_writer_add_file(w, time, -1, pid, "/run/.containerenv", ci->containerenv,
                                            ci->containerenv_len);
                if (r < 0)
                        return r;
        }
        char (*layers)[RESOLVER_PATH_MAX] = NULL;
        size_t n_layers = 0;
        if (resolver_get_layers(res, pid, &layers, &n_layers) >= 0)
                for (size_t i = 0; i < n_layers && i <= UINT8_MAX && r >= 0; i++)
                        r = capture_writer_add_overlay(w, time, -1, pid, (uint8_t) i, layers[i], "/");
        free(layers);
        return r < 0 ? r : 0;
}
