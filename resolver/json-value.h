/* json-value.h: a small, strict JSON parser for untrusted input (Podman's
 * storage files are written by a possibly unprivileged user). RFC 8259 only:
 * no comments, no trailing commas, UTF-8 validated (overlongs, surrogates,
 * bytes past U+10FFFF rejected), \u escapes checked and paired, bounded
 * nesting depth and input size. Plain C so the daemon does not need GLib. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 64

typedef enum JsonType {
        JSON_NULL,
        JSON_FALSE,
        JSON_TRUE,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
} JsonType;

typedef struct JsonValue JsonValue;
struct JsonValue {
        JsonType type;
        double number;          /* JSON_NUMBER */
        char *string;           /* JSON_STRING: NUL-terminated UTF-8 (no embedded NUL) */
        size_t n_items;         /* JSON_ARRAY / JSON_OBJECT */
        JsonValue **items;      /* array elements or object values */
        char **keys;            /* JSON_OBJECT: keys, same index as items */
};

/* Parses exactly one JSON document from data[0..len); 0 on success, -EBADMSG
 * for malformed input (with a byte offset in *ret_error_offset when given),
 * -E2BIG beyond max_values values, -ENOMEM. */
int json_parse(const char *data, size_t len, size_t max_values, JsonValue **ret, size_t *ret_error_offset);

/* Frees a tree from json_parse(); NULL is a no-op. */
JsonValue *json_value_free(JsonValue *v);

/* The member called key of an object, or NULL (also when v is no object). */
const JsonValue *json_object_get(const JsonValue *v, const char *key);

/* The string member called key, or NULL when missing or not a string. */
const char *json_object_get_string(const JsonValue *v, const char *key);

static inline void json_value_freep(JsonValue **v) {
        json_value_free(*v);
}
#define _cleanup_json_ __attribute__((cleanup(json_value_freep)))
