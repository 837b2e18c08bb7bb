/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* podman-json.c: Podman storage files in the helper (see podman-json.h). */
#include "podman-json.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "basic.h"

/* Deepest nesting of arrays and objects, counted without parsing (strings
 * skipped with their escapes), so json-glib's recursive parser never sees a
 * document deeper than HELPER_MAX_JSON_DEPTH. */
static size_t nesting_depth(const char *text, size_t len) {
        size_t depth = 0, deepest = 0;
        bool in_string = false;
        for (size_t i = 0; i < len; i++) {
                char c = text[i];
                if (in_string) {
                        if (c == '\\')
                                i++;
                        else if (c == '"')
                                in_string = false;
                } else if (c == '"')
                        in_string = true;
                else if (c == '[' || c == '{') {
                        if (++depth > deepest)
                                deepest = depth;
                } else if ((c == ']' || c == '}') && depth > 0)
                        depth--;
        }
        return deepest;
}

/* Reads and parses one storage file; its top level must be an array. */
static int load_array(int fd, JsonParser **ret_parser, JsonArray **ret, char **ret_why) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_fd_bounded(fd, HELPER_MAX_PODMAN_JSON, false, &text, &len);
        if (r == -EFBIG)
                return why_setf(ret_why, r, "it is larger than the limit (%u bytes)", HELPER_MAX_PODMAN_JSON);
        if (r < 0)
                return why_setf(ret_why, r, "cannot read it: %s", strerror(-r));
        const char *bad = NULL;
        if (!g_utf8_validate_len(text, len, &bad))
                return why_setf(ret_why, -EBADMSG, "it is not valid JSON / UTF-8 (invalid UTF-8 at byte %zu)",
                                (size_t) (bad - text));
        if (nesting_depth(text, len) > HELPER_MAX_JSON_DEPTH)
                return why_setf(ret_why, -EBADMSG, "it is not valid JSON / UTF-8 (nested deeper than %u levels)",
                                HELPER_MAX_JSON_DEPTH);
        g_autoptr(JsonParser) parser = json_parser_new_immutable();
        g_autoptr(GError) error = NULL;
        if (!json_parser_load_from_data(parser, text, (gssize) len, &error))
                return why_setf(ret_why, -EBADMSG, "it is not valid JSON / UTF-8 (%s)", error->message);
        JsonNode *root = json_parser_get_root(parser);
        if (!root || !JSON_NODE_HOLDS_ARRAY(root))
                return why_setf(ret_why, -EBADMSG, "its top level is not an array");
        *ret = json_node_get_array(root);
        *ret_parser = g_steal_pointer(&parser);
        return 0;
}

/* The string member called key of an object node, or NULL (missing, of
 * another type, or the node is no object). */
static const char *member_string(JsonNode *node, const char *key) {
        if (!node || !JSON_NODE_HOLDS_OBJECT(node))
                return NULL;
        JsonNode *m = json_object_get_member(json_node_get_object(node), key);
        if (!m || !JSON_NODE_HOLDS_VALUE(m) || json_node_get_value_type(m) != G_TYPE_STRING)
                return NULL;
        return json_node_get_string(m);
}

/* The "names" member's strings; the first, or whether one equals name. */
static const char *first_name(JsonNode *node) {
        if (!node || !JSON_NODE_HOLDS_OBJECT(node))
                return NULL;
        JsonNode *names = json_object_get_member(json_node_get_object(node), "names");
        if (!names || !JSON_NODE_HOLDS_ARRAY(names) || json_array_get_length(json_node_get_array(names)) == 0)
                return NULL;
        JsonNode *n = json_array_get_element(json_node_get_array(names), 0);
        return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : NULL;
}

static bool has_name(JsonNode *node, const char *name) {
        JsonNode *names = JSON_NODE_HOLDS_OBJECT(node) ? json_object_get_member(json_node_get_object(node), "names") : NULL;
        if (!names || !JSON_NODE_HOLDS_ARRAY(names))
                return false;
        JsonArray *a = json_node_get_array(names);
        for (guint i = 0; i < json_array_get_length(a); i++) {
                JsonNode *n = json_array_get_element(a, i);
                if (JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING &&
                    strcmp(json_node_get_string(n), name) == 0)
                        return true;
        }
        return false;
}

static JsonNode *find_by_id(JsonArray *a, const char *id) {
        for (guint i = 0; i < json_array_get_length(a); i++) {
                const char *v = member_string(json_array_get_element(a, i), "id");
                if (v && strcmp(v, id) == 0)
                        return json_array_get_element(a, i);
        }
        return NULL;
}

/* The request's one string (an id or a name), at most HELPER_MAX_FIELD bytes. */
static char *request_string(HelperReader *payload) {
        char *s = helper_get_string(payload, HELPER_MAX_FIELD, true);
        if (s && (!helper_reader_finished(payload) || !*s)) {
                free(s);
                return NULL;
        }
        return s;
}

/* A request's string and the JSON array of the file it is about. */
typedef struct PodmanRequest {
        char *arg;
        JsonParser *parser; /* owns array */
        JsonArray *array;
} PodmanRequest;

static void podman_request_clear(PodmanRequest *req) {
        free(req->arg);
        g_clear_object(&req->parser);
}

/* Reads the request named type (its string must be a 64-hex-digit id when
 * hex_id) and then the JSON array in fd. */
static int read_request(HelperReader *payload, int fd, const char *type, bool hex_id, PodmanRequest *req,
                        char **ret_why) {
        req->arg = request_string(payload);
        if (!req->arg || (hex_id && !is_hex_id(req->arg, 64)))
                return why_setf(ret_why, -EBADMSG, "malformed %s request", type);
        return load_array(fd, &req->parser, &req->array, ret_why);
}

int podman_json_find_container(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why) {
        _cleanup_(podman_request_clear) PodmanRequest req = {};
        int r = read_request(payload, fd, "PODMAN_CONTAINER", false, &req, ret_why);
        if (r < 0)
                return r;
        const char *query = req.arg;
        JsonArray *containers = req.array;
        JsonNode *c = NULL;
        size_t n_prefix = 0, qlen = strlen(query);
        for (guint i = 0; i < json_array_get_length(containers); i++) {
                JsonNode *o = json_array_get_element(containers, i);
                const char *id = member_string(o, "id");
                if (!id)
                        continue;
                if (strcmp(id, query) == 0 || has_name(o, query)) {
                        c = o;
                        n_prefix = 1;
                        break;
                }
                if (qlen >= 12 && strncmp(id, query, qlen) == 0) {
                        c = o;
                        n_prefix++;
                }
        }
        if (!c || n_prefix != 1) {
                helper_put_u8(reply, 0);
                return 0;
        }
        const char *id = member_string(c, "id"), *layer = member_string(c, "layer"), *image = member_string(c, "image");
        if (!is_hex_id(id, 64) || !is_hex_id(layer, 64))
                return why_setf(ret_why, -EINVAL, "id or layer is not 64 hex digits");
        const char *name = first_name(c);
        helper_put_u8(reply, 1);
        helper_put_string(reply, id, 64);
        helper_put_string(reply, name ? name : "", HELPER_MAX_FIELD);
        helper_put_string(reply, is_hex_id(image, 64) ? image : "", 64);
        helper_put_string(reply, layer, 64);
        return 0;
}

int podman_json_layer_chain(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why) {
        _cleanup_(podman_request_clear) PodmanRequest req = {};
        int r = read_request(payload, fd, "PODMAN_LAYERS", true, &req, ret_why);
        if (r < 0)
                return r;
        const char *top = req.arg;
        JsonArray *layers = req.array;
        const char *chain[HELPER_MAX_LAYERS];
        size_t n = 0;
        for (const char *cur = top; cur;) {
                if (!is_hex_id(cur, 64))
                        return why_setf(ret_why, -EINVAL, "\"%.80s\" is not a layer id", cur);
                for (size_t i = 0; i < n; i++)
                        if (strcmp(chain[i], cur) == 0)
                                return why_setf(ret_why, -EINVAL, "cycle at %s", cur);
                if (n == HELPER_MAX_LAYERS)
                        return why_setf(ret_why, -EINVAL, "more than %u layers", HELPER_MAX_LAYERS);
                chain[n++] = cur;
                JsonNode *l = find_by_id(layers, cur);
                if (!l)
                        return why_setf(ret_why, -EINVAL, "layer %s is missing", cur);
                JsonNode *parent = json_object_get_member(json_node_get_object(l), "parent");
                cur = member_string(l, "parent");
                if (parent && !cur && !JSON_NODE_HOLDS_NULL(parent))
                        return why_setf(ret_why, -EINVAL, "the parent of layer %s is not a string", chain[n - 1]);
        }
        helper_put_u32(reply, (uint32_t) n);
        for (size_t i = 0; i < n; i++)
                helper_put_string(reply, chain[i], 64);
        return 0;
}

int podman_json_image_name(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why) {
        _cleanup_(podman_request_clear) PodmanRequest req = {};
        int r = read_request(payload, fd, "PODMAN_IMAGE", true, &req, ret_why);
        if (r < 0)
                return r;
        const char *image = req.arg;
        JsonArray *images = req.array;
        const char *name = first_name(find_by_id(images, image));
        helper_put_string(reply, name ? name : "", HELPER_MAX_FIELD);
        return 0;
}
