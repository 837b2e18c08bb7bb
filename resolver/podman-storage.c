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
#include "json-value.h"

#define ROOTFUL_STORAGE "/var/lib/containers/storage"
#define ROOTLESS_STORAGE ".local/share/containers/storage"

struct PodmanStorage {
        int dirfd;
        dev_t dev;
        uid_t uid;
        char path[PATH_MAX];
        PodmanWarnFunc warn;
        void *userdata;
};

static void warnf(PodmanStorage *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(PodmanStorage *s, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (s->warn)
                s->warn(s->userdata, msg);
}

int podman_storage_open(uid_t uid, PodmanWarnFunc warn, void *userdata, PodmanStorage **ret) {
        _cleanup_free_ PodmanStorage *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dirfd = -1;
        s->uid = uid;
        s->warn = warn;
        s->userdata = userdata;
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
        case EBADMSG:
                return "it is not valid JSON / UTF-8";
        case E2BIG:
                return "it holds too many values";
        default:
                return strerror(-r);
        }
}

/* Loads and strictly parses one of the store's JSON files; warns once per
 * rejection. A top-level array is required. */
static int load_json(PodmanStorage *s, const char *rel, JsonValue **ret) {
        _cleanup_close_ int fd = safe_open_beneath(s->dirfd, rel, O_RDONLY, true);
        _cleanup_free_ char *text = NULL;
        size_t len = 0, where = 0;
        int r;
        if (fd < 0) {
                if (fd != -ENOENT)
                        warnf(s, "rejected %s/%s: %s", s->path, rel, errno_text(fd));
                return fd;
        }
        r = read_fd_bounded(fd, PODMAN_JSON_MAX_BYTES, false, &text, &len);
        if (r < 0) {
                warnf(s, "rejected %s/%s: %s (limit %u bytes)", s->path, rel, errno_text(r), PODMAN_JSON_MAX_BYTES);
                return r;
        }
        r = json_parse(text, len, PODMAN_JSON_MAX_VALUES, ret, &where);
        if (r < 0) {
                warnf(s, "rejected %s/%s: %s (at byte %zu)", s->path, rel, errno_text(r), where);
                return r;
        }
        if ((*ret)->type != JSON_ARRAY) {
                warnf(s, "rejected %s/%s: top level is not an array", s->path, rel);
                json_value_free(*ret);
                *ret = NULL;
                return -EBADMSG;
        }
        return 0;
}

static void copy_str(char *dst, size_t size, const char *src) {
        snprintf(dst, size, "%s", src ? src : "");
}

static const char *first_name(const JsonValue *obj) {
        const JsonValue *names = json_object_get(obj, "names");
        if (names && names->type == JSON_ARRAY && names->n_items > 0 && names->items[0]->type == JSON_STRING)
                return names->items[0]->string;
        return NULL;
}

static bool has_name(const JsonValue *obj, const char *name) {
        const JsonValue *names = json_object_get(obj, "names");
        for (size_t i = 0; names && names->type == JSON_ARRAY && i < names->n_items; i++)
                if (names->items[i]->type == JSON_STRING && strcmp(names->items[i]->string, name) == 0)
                        return true;
        return false;
}

static const JsonValue *find_by_id(const JsonValue *arr, const char *id) {
        for (size_t i = 0; i < arr->n_items; i++) {
                const char *v = json_object_get_string(arr->items[i], "id");
                if (v && strcmp(v, id) == 0)
                        return arr->items[i];
        }
        return NULL;
}

int podman_storage_find_container(PodmanStorage *s, const char *id_or_name, PodmanContainer *ret) {
        _cleanup_json_ JsonValue *containers = NULL, *layers = NULL, *images = NULL;
        const JsonValue *c = NULL;
        size_t n_prefix = 0;
        int r;

        memset(ret, 0, sizeof(*ret));
        r = load_json(s, "overlay-containers/containers.json", &containers);
        if (r < 0)
                return r;
        size_t qlen = strlen(id_or_name);
        for (size_t i = 0; i < containers->n_items; i++) {
                const JsonValue *o = containers->items[i];
                const char *id = json_object_get_string(o, "id");
                if (!id)
                        continue;
                if (strcmp(id, id_or_name) == 0 || has_name(o, id_or_name)) {
                        c = o;
                        n_prefix = 1;
                        break;
                }
                if (qlen >= 12 && strncmp(id, id_or_name, qlen) == 0) {
                        c = o;
                        n_prefix++;
                }
        }
        if (!c || n_prefix != 1)
                return -ENOENT;

        const char *id = json_object_get_string(c, "id");
        const char *layer = json_object_get_string(c, "layer");
        const char *image = json_object_get_string(c, "image");
        if (!is_hex_id(id, 64) || !is_hex_id(layer, 64)) {
                warnf(s, "rejected container entry in %s/overlay-containers/containers.json: id or layer is not 64 hex digits", s->path);
                return -EBADMSG;
        }
        copy_str(ret->id, sizeof(ret->id), id);
        copy_str(ret->name, sizeof(ret->name), first_name(c));
        if (is_hex_id(image, 64))
                copy_str(ret->image_id, sizeof(ret->image_id), image);

        r = load_json(s, "overlay-layers/layers.json", &layers);
        if (r < 0)
                return r;
        /* Container layer, then parents; bounded and cycle-free. */
        const char *cur = layer;
        while (cur) {
                if (!is_hex_id(cur, 64)) {
                        warnf(s, "rejected layer chain in %s/overlay-layers/layers.json: \"%.80s\" is not a layer id", s->path, cur);
                        return -EBADMSG;
                }
                for (size_t i = 0; i < ret->n_layers; i++)
                        if (strcmp(ret->layers[i], cur) == 0) {
                                warnf(s, "rejected layer chain in %s/overlay-layers/layers.json: cycle at %s", s->path, cur);
                                return -EBADMSG;
                        }
                if (ret->n_layers == PODMAN_MAX_LAYERS) {
                        warnf(s, "rejected layer chain in %s/overlay-layers/layers.json: more than %d layers", s->path, PODMAN_MAX_LAYERS);
                        return -EBADMSG;
                }
                copy_str(ret->layers[ret->n_layers++], 65, cur);
                const JsonValue *l = find_by_id(layers, cur);
                if (!l) {
                        warnf(s, "layer %s of container %s is missing from %s/overlay-layers/layers.json", cur, id, s->path);
                        return -EBADMSG;
                }
                cur = json_object_get_string(l, "parent");
        }

        /* The image's name is cosmetic: a broken images.json costs the name only. */
        if (ret->image_id[0] && load_json(s, "overlay-images/images.json", &images) >= 0) {
                const JsonValue *img = find_by_id(images, ret->image_id);
                if (img)
                        copy_str(ret->image_name, sizeof(ret->image_name), first_name(img));
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
