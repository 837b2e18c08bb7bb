/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* podman-storage.c: hostile-input-safe reader of Podman overlay storage
 * (see podman-storage.h). */
#include "podman-storage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"

#define ROOTFUL_STORAGE "/var/lib/containers/storage"
#define ROOTLESS_STORAGE ".local/share/containers/storage"

struct PodmanStorage {
        int dirfd;
        dev_t dev;
        uid_t uid;
        char path[PATH_MAX];
        const UserFileParser *parser;
};

#define warnf(s, ...) user_file_parser_warn((s)->parser, __VA_ARGS__)

int podman_storage_open(uid_t uid, const UserFileParser *parser, PodmanStorage **ret) {
        _cleanup_free_ PodmanStorage *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dirfd = -1;
        s->uid = uid;
        s->parser = parser;
        if (uid == 0) {
                s->dirfd = open(ROOTFUL_STORAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (s->dirfd < 0)
                        return -errno;
                snprintf(s->path, sizeof(s->path), "%s", ROOTFUL_STORAGE);
        } else {
                /* Everything below the home directory is the user's. */
                char home_path[1024];
                _cleanup_close_ int home = open_home_dir(uid, home_path, sizeof(home_path));
                if (home < 0)
                        return home;
                s->dirfd = safe_open_beneath(home, ROOTLESS_STORAGE, O_PATH | O_DIRECTORY, false);
                snprintf(s->path, sizeof(s->path), "%s/%s", home_path, ROOTLESS_STORAGE);
                if (s->dirfd < 0) {
                        int r = s->dirfd;
                        if (r == -ELOOP || r == -EXDEV)
                                warnf(s, "rejected Podman storage %s of uid %u: %s", s->path, (unsigned) uid,
                                      r == -ELOOP ? "a symlink in the path" : "path escapes the home directory");
                        return r;
                }
        }
        struct stat st;
        if (fstat(s->dirfd, &st) < 0) {
                int r = -errno;
                close(s->dirfd);
                return r;
        }
        if (uid != 0 && st.st_uid != uid) {
                warnf(s, "rejected Podman storage %s: owned by uid %u, not by uid %u", s->path, (unsigned) st.st_uid, (unsigned) uid);
                close(s->dirfd);
                return -EPERM;
        }
        s->dev = st.st_dev;
        *ret = TAKE_PTR(s);
        return 0;
}

PodmanStorage *podman_storage_free(PodmanStorage *s) {
        if (!s)
                return NULL;
        safe_close(s->dirfd);
        free(s);
        return NULL;
}

const char *podman_storage_path(const PodmanStorage *s) {
        return s->path;
}

dev_t podman_storage_dev(const PodmanStorage *s) {
        return s->dev;
}

static const char *errno_text(int r) {
        switch (-r) {
        case ELOOP:
                return "it is a symlink or goes through one";
        case EXDEV:
                return "it escapes the storage directory";
        case EFBIG:
                return "it is larger than the limit";
        case EBADF:
                return "it is not a regular file";
        default:
                return strerror(-r);
        }
}

/* Opens one of the store's JSON files for the helper: beneath the store,
 * no symlinks, a regular file within the size limit; warns once per
 * rejection. */
static int open_json(PodmanStorage *s, HelperClient *helper, const char *rel) {
        int fd = safe_open_beneath(s->dirfd, rel, O_RDONLY, true);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && (!S_ISREG(st.st_mode) || (uint64_t) st.st_size > PODMAN_JSON_MAX_BYTES)) {
                safe_close(fd);
                fd = S_ISREG(st.st_mode) ? -EFBIG : -EBADF;
        }
        if (fd == -EFBIG)
                warnf(s, "rejected %s/%s: %s (limit %u bytes)", s->path, rel, errno_text(fd), PODMAN_JSON_MAX_BYTES);
        else if (fd < 0 && fd != -ENOENT)
                warnf(s, "rejected %s/%s: %s", s->path, rel, errno_text(fd));
        if (fd >= 0 && !helper) {
                warnf(s, "%s/%s not read: no sandboxed helper to parse it", s->path, rel);
                fd = safe_close(fd);
                return -ENOPROTOOPT;
        }
        return fd;
}

/* Reports the helper's verdict on a file: what (an entry, a chain) was
 * rejected and why. Returns r. */
static int helper_verdict(PodmanStorage *s, const char *rel, const char *what, int r, const char *why) {
        if (r == -ENOENT)
                return r;
        if (r == HELPER_CLIENT_FAILED)
                warnf(s, "cannot read %s/%s: %s", s->path, rel, why ? why : "helper failed");
        else if (r == -EINVAL)
                warnf(s, "rejected %s in %s/%s: %s", what, s->path, rel, why ? why : strerror(-r));
        else
                warnf(s, "rejected %s/%s: %s", s->path, rel, why ? why : errno_text(r));
        return r == -EINVAL ? -EBADMSG : r;
}

static void copy_str(char *dst, size_t size, const char *src) {
        snprintf(dst, size, "%s", src ? src : "");
}

int podman_storage_find_container(PodmanStorage *s, HelperClient *helper, const char *id_or_name,
                                  PodmanContainer *ret) {
        static const char containers_json[] = "overlay-containers/containers.json";
        static const char layers_json[] = "overlay-layers/layers.json";
        static const char images_json[] = "overlay-images/images.json";
        memset(ret, 0, sizeof(*ret));
        if (!*id_or_name || strlen(id_or_name) > HELPER_MAX_FIELD)
                return -ENOENT;
        if (!helper && s->parser)
                helper = s->parser->helper;
        _cleanup_close_ int cfd = open_json(s, helper, containers_json);
        if (cfd < 0)
                return cfd;
        HelperPodmanContainer c;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_podman_container(helper, cfd, id_or_name, &c, &why);
        if (r < 0)
                return helper_verdict(s, containers_json, "container entry", r, why);
        copy_str(ret->id, sizeof(ret->id), c.id);
        copy_str(ret->name, sizeof(ret->name), c.name);
        copy_str(ret->image_id, sizeof(ret->image_id), c.image_id);

        _cleanup_close_ int lfd = open_json(s, helper, layers_json);
        if (lfd < 0)
                return lfd;
        free(why);
        why = NULL;
        r = helper_client_podman_layers(helper, lfd, c.layer, ret->layers, &ret->n_layers, &why);
        if (r < 0)
                return helper_verdict(s, layers_json, "layer chain", r == -ENOENT ? -EINVAL : r, why);

        /* The image's name is cosmetic: a broken images.json costs the name only. */
        _cleanup_close_ int ifd = ret->image_id[0] ? open_json(s, helper, images_json) : -ENOENT;
        free(why);
        why = NULL;
        if (ifd >= 0) {
                char name[HELPER_MAX_FIELD + 1];
                r = helper_client_podman_image_name(helper, ifd, ret->image_id, name, &why);
                if (r < 0)
                        (void) helper_verdict(s, images_json, "image entry", r, why);
                else
                        copy_str(ret->image_name, sizeof(ret->image_name), name);
                if (r == HELPER_CLIENT_FAILED)
                        return 1; /* found; its image's name may come from another try */
        }
        return 0;
}

int podman_storage_layer_diff_path(const PodmanStorage *s, const char *layer_id, char *buf, size_t size) {
        if (!is_hex_id(layer_id, 64))
                return -EINVAL;
        if ((size_t) snprintf(buf, size, "%s/overlay/%s/diff", s->path, layer_id) >= size)
                return -ENAMETOOLONG;
        return 0;
}

int podman_storage_open_in_layer(PodmanStorage *s, const char *layer_id, const char *path, int flags,
                                 char *ret_host_path, size_t host_path_size) {
        char rel[PATH_MAX];
        if (!is_hex_id(layer_id, 64))
                return -EINVAL;
        while (*path == '/')
                path++;
        if ((size_t) snprintf(rel, sizeof(rel), "overlay/%s/diff", layer_id) >= sizeof(rel))
                return -ENAMETOOLONG;
        if (ret_host_path)
                snprintf(ret_host_path, host_path_size, "%s/%s/%s", s->path, rel, path);
        /* Podman bind-mounts overlay/ onto itself: crossing into that mount is
         * expected; inside a layer no mount crossing is allowed. */
        _cleanup_close_ int diff = safe_open_beneath(s->dirfd, rel, O_PATH | O_DIRECTORY, false);
        if (diff < 0)
                return diff;
        return safe_open_beneath(diff, path, flags, true);
}
