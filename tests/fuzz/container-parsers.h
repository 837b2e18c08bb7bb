/* container-parsers.h: the parsers of user-written container metadata
 * (Podman's storage JSON, Flatpak's /.flatpak-info) as the fuzz targets
 * call them. The parsing is moving into the sandbox helper: when it does,
 * retarget the one call in each function below. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "container-info.h"
#include "json-value.h"

/* The bound podman-storage.c parses with (PODMAN_JSON_MAX_VALUES). */
#define FUZZ_PODMAN_JSON_MAX_VALUES 200000

/* Walks a parsed storage file the way podman-storage.c reads it: an array
 * of objects with "id", "names", "layer", "parent", "image". */
static inline size_t fuzz_walk_podman_json(const JsonValue *v) {
        size_t n = 0;
        if (v->type != JSON_ARRAY)
                return 0;
        for (size_t i = 0; i < v->n_items; i++) {
                const JsonValue *o = v->items[i];
                static const char *const keys[] = { "id", "layer", "parent", "image" };
                for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                        const char *s = json_object_get_string(o, keys[k]);
                        n += s ? strlen(s) : 0;
                }
                const JsonValue *names = json_object_get(o, "names");
                for (size_t j = 0; names && names->type == JSON_ARRAY && j < names->n_items; j++)
                        if (names->items[j]->type == JSON_STRING)
                                n += strlen(names->items[j]->string);
        }
        return n;
}

/* Parses one Podman storage file (containers.json, layers.json,
 * images.json); 0 or a negative errno. */
static inline int fuzz_parse_podman_json(const uint8_t *data, size_t size) {
        JsonValue *v = NULL;
        size_t where = 0;
        int r = json_parse((const char *) data, size, FUZZ_PODMAN_JSON_MAX_VALUES, &v, &where);
        if (r < 0) {
                if (where > size)
                        abort(); /* the error offset must point into the input */
                return r;
        }
        volatile size_t sink = fuzz_walk_podman_json(v);
        (void) sink;
        json_value_free(v);
        return 0;
}

/* Parses one /.flatpak-info text (NUL-terminated, as it is read); 0 or a
 * negative errno. */
static inline int fuzz_parse_flatpak_info(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return -ENOMEM;
        memcpy(text, data, size);
        text[size] = 0;
        ContainerInfo info = { 0 };
        int r = flatpak_info_parse(text, &info);
        /* every field is a bounded, terminated string */
        if (memchr(info.id, 0, sizeof(info.id)) == NULL || memchr(info.name, 0, sizeof(info.name)) == NULL ||
            memchr(info.app_path, 0, sizeof(info.app_path)) == NULL ||
            memchr(info.runtime_path, 0, sizeof(info.runtime_path)) == NULL ||
            memchr(info.runtime, 0, sizeof(info.runtime)) == NULL)
                abort();
        container_info_clear(&info);
        free(text);
        return r;
}
