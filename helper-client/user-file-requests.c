/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* user-file-requests.c: Podman storage JSON and /.flatpak-info, parsed by
 * the helper; every answer is checked here (counts, lengths, hex ids,
 * distinct layers) before the resolver uses it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"
#include "helper-client-internal.h"

/* Sends type with fd and one string (or none); the answer is in *reply, and
 * *rd reads its payload. */
static int ask(HelperClient *c, uint16_t type, int fd, const char *arg, HelperMessage *reply, HelperReader *rd,
               char **ret_why) {
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                why_set(ret_why, strdup("not a regular file"));
                return -EBADF;
        }
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_INLINE_PAYLOAD);
        if (arg) {
                if (strlen(arg) > HELPER_MAX_FIELD || !*arg) {
                        helper_writer_done(&w);
                        return -EINVAL;
                }
                helper_put_string(&w, arg, HELPER_MAX_FIELD);
        }
        int r = helper_client_request(c, type, &w, &fd, 1, reply, ret_why);
        if (r >= 0)
                helper_reader_init(rd, reply->payload, reply->payload_size);
        return r;
}

/* Ends reading the answer m to the request named what: valid when ok and
 * nothing is left over. Frees m; an invalid answer fails the client. */
static int answer_checked(HelperClient *c, HelperMessage *m, HelperReader *rd, bool ok, const char *what,
                          char **ret_why) {
        ok = ok && helper_reader_finished(rd);
        helper_message_clear(m);
        if (ok)
                return 0;
        char *msg = NULL;
        if (asprintf(&msg, "invalid answer to %s", what) < 0)
                msg = strdup("invalid answer");
        return helper_client_fail(c, ret_why, msg);
}

/* Reads a string of at most max bytes into dst (size max + 1); with hex,
 * it must be "" (when empty_ok) or 64 lowercase hex digits. */
static bool get_field(HelperReader *rd, char *dst, size_t max, bool hex, bool empty_ok) {
        _cleanup_free_ char *s = helper_get_string(rd, max, true);
        if (!s || (!*s && !empty_ok) || (hex && *s && !is_hex_id(s, 64)))
                return false;
        memcpy(dst, s, strlen(s) + 1);
        return true;
}

int helper_client_podman_container(HelperClient *c, int fd, const char *query, HelperPodmanContainer *ret,
                                   char **ret_why) {
        HelperMessage m = {};
        HelperReader rd;
        int r = ask(c, HELPER_MSG_PODMAN_CONTAINER, fd, query, &m, &rd, ret_why);
        if (r < 0)
                return r;
        HelperPodmanContainer pc = {};
        uint8_t found = helper_get_u8(&rd);
        bool ok = !rd.failed && found <= 1;
        if (ok && found)
                ok = get_field(&rd, pc.id, 64, true, false) && get_field(&rd, pc.name, HELPER_MAX_FIELD, false, true) &&
                     get_field(&rd, pc.image_id, 64, true, true) && get_field(&rd, pc.layer, 64, true, false);
        r = answer_checked(c, &m, &rd, ok, "PODMAN_CONTAINER", ret_why);
        if (r < 0)
                return r;
        if (!found)
                return -ENOENT;
        *ret = pc;
        return 0;
}

int helper_client_podman_layers(HelperClient *c, int fd, const char *layer, char (*ret)[65], size_t *ret_n,
                                char **ret_why) {
        if (!is_hex_id(layer, 64))
                return -EINVAL;
        HelperMessage m = {};
        HelperReader rd;
        int r = ask(c, HELPER_MSG_PODMAN_LAYERS, fd, layer, &m, &rd, ret_why);
        if (r < 0)
                return r;
        uint32_t n = helper_get_u32(&rd);
        bool ok = !rd.failed && n >= 1 && n <= HELPER_MAX_LAYERS;
        for (uint32_t i = 0; ok && i < n; i++) {
                ok = get_field(&rd, ret[i], 64, true, false);
                for (uint32_t k = 0; ok && k < i; k++)
                        ok = strcmp(ret[k], ret[i]) != 0;
        }
        ok = ok && strcmp(ret[0], layer) == 0;
        r = answer_checked(c, &m, &rd, ok, "PODMAN_LAYERS", ret_why);
        if (r < 0)
                return r;
        *ret_n = n;
        return 0;
}

int helper_client_podman_image_name(HelperClient *c, int fd, const char *image_id, char name[HELPER_MAX_FIELD + 1],
                                    char **ret_why) {
        if (!is_hex_id(image_id, 64))
                return -EINVAL;
        HelperMessage m = {};
        HelperReader rd;
        int r = ask(c, HELPER_MSG_PODMAN_IMAGE, fd, image_id, &m, &rd, ret_why);
        if (r < 0)
                return r;
        bool ok = get_field(&rd, name, HELPER_MAX_FIELD, false, true);
        return answer_checked(c, &m, &rd, ok, "PODMAN_IMAGE", ret_why);
}

int helper_client_flatpak_info(HelperClient *c, int fd, HelperFlatpakInfo *ret, char **ret_why) {
        HelperMessage m = {};
        HelperReader rd;
        int r = ask(c, HELPER_MSG_FLATPAK_INFO, fd, NULL, &m, &rd, ret_why);
        if (r < 0)
                return r;
        HelperFlatpakInfo fi = {};
        bool ok = get_field(&rd, fi.name, HELPER_MAX_FIELD, false, false) &&
                  get_field(&rd, fi.runtime, HELPER_MAX_FIELD, false, true) &&
                  get_field(&rd, fi.instance_id, HELPER_MAX_FIELD, false, true) &&
                  get_field(&rd, fi.app_path, HELPER_MAX_FIELD, false, true) &&
                  get_field(&rd, fi.runtime_path, HELPER_MAX_FIELD, false, true);
        r = answer_checked(c, &m, &rd, ok, "FLATPAK_INFO", ret_why);
        if (r < 0)
                return r;
        *ret = fi;
        return 0;
}
