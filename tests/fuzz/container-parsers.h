/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-parsers.h: the sandbox helper's parsers of user-written
 * container metadata (Podman's storage JSON with json-glib, Flatpak's
 * /.flatpak-info with GKeyFile), called as the helper's request handlers
 * call them: the file behind an fd (a memfd holding the input), the
 * request's argument a valid id, the answer into a bounded writer. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "flatpak-info.h"
#include "helper-protocol.h"
#include "podman-json.h"

/* A memfd holding data, at offset 0. */
static inline int fuzz_memfd(const uint8_t *data, size_t size) {
        int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (size_t done = 0; done < size;) {
                ssize_t k = write(fd, data + done, size - done);
                if (k <= 0) {
                        close(fd);
                        return -EIO;
                }
                done += (size_t) k;
        }
        return fd;
}

typedef int (*FuzzPodmanRequest)(HelperReader *payload, int fd, HelperWriter *reply, char **ret_why);

/* One request over the file: its argument is a 64-hex id, as the client sends. */
static inline int fuzz_podman_request(FuzzPodmanRequest request, int fd) {
        static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        HelperWriter arg, reply;
        helper_writer_init(&arg, 4096);
        helper_put_string(&arg, id, 64);
        helper_writer_init(&reply, HELPER_MAX_PAYLOAD);
        HelperReader payload;
        helper_reader_init(&payload, arg.data, arg.size);
        _cleanup_free_ char *why = NULL;
        int r = lseek(fd, 0, SEEK_SET) < 0 ? -errno : request(&payload, fd, &reply, &why);
        /* a refusal always says why */
        if (r < 0 && !why)
                abort();
        helper_writer_done(&reply);
        helper_writer_done(&arg);
        return r;
}

/* Parses one Podman storage file (containers.json, layers.json,
 * images.json) as each of the three requests reads it. */
static inline int fuzz_parse_podman_json(const uint8_t *data, size_t size) {
        int fd = fuzz_memfd(data, size);
        if (fd < 0)
                return fd;
        (void) fuzz_podman_request(podman_json_find_container, fd);
        (void) fuzz_podman_request(podman_json_layer_chain, fd);
        int r = fuzz_podman_request(podman_json_image_name, fd);
        close(fd);
        return r;
}

/* Parses one /.flatpak-info as the FLATPAK_INFO request does. */
static inline int fuzz_parse_flatpak_info(const uint8_t *data, size_t size) {
        int fd = fuzz_memfd(data, size);
        if (fd < 0)
                return fd;
        HelperWriter reply;
        helper_writer_init(&reply, HELPER_MAX_PAYLOAD);
        _cleanup_free_ char *why = NULL;
        int r = flatpak_info_read(fd, &reply, &why);
        if (r < 0 && !why)
                abort();
        helper_writer_done(&reply);
        close(fd);
        return r;
}
