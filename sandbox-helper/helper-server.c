/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-server.c: decodes requests, runs IDENTIFY/SYMBOLIZE, encodes
 * replies. Malformed requests get HELPER_MSG_ERROR, never a crash. */
#include "helper-server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"
#include "elf-identify.h"
#include "elf-symbols.h"
#include "jit-names.h"
#include "flatpak-info.h"
#include "podman-json.h"
#include "symbolize-request.h"
#include "unwind-compile.h"

/* An ERROR reply: "what: strerror", or the handler's own reason when it gave one. */
static void reply_error(uint16_t *reply_type, HelperWriter *reply, int error, const char *what, const char *reason) {
        char msg[HELPER_MAX_ERROR_MESSAGE];
        if (reason && *reason)
                snprintf(msg, sizeof msg, "%s", reason);
        else
                snprintf(msg, sizeof msg, "%s: %s", what, strerror(error < 0 ? -error : error));
        helper_writer_done(reply);
        helper_writer_init(reply, HELPER_MAX_PAYLOAD);
        helper_put_u32(reply, (uint32_t) (error < 0 ? error : -error));
        helper_put_string(reply, msg, HELPER_MAX_ERROR_MESSAGE);
        *reply_type = HELPER_MSG_ERROR;
}

static bool is_regular_file(int fd) {
        struct stat st;
        return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

static int handle_identify(HelperReader *rd, const int *fds, size_t n_fds, HelperWriter *reply, const char **what) {
        uint32_t flags = helper_get_u32(rd);
        *what = "malformed IDENTIFY request";
        if (!helper_reader_finished(rd) || n_fds != 1)
                return -EBADMSG;
        *what = "IDENTIFY needs a regular file";
        if (!is_regular_file(fds[0]))
                return -EBADF;
        HelperIdentity id;
        *what = "cannot read ELF file";
        int r = elf_identify_fd(fds[0], flags, &id);
        if (r < 0)
                return r;
        elf_identity_encode(reply, &id);
        return 0;
}

static int handle_symbolize(HelperServer *server, HelperReader *rd, const int *fds, size_t n_fds, HelperWriter *reply,
                            const char **what) {
        uint32_t flags = helper_get_u32(rd);
        uint32_t count = helper_get_u32(rd);
        bool with_debug = flags & HELPER_SYMBOLIZE_DEBUG_FD;
        *what = "malformed SYMBOLIZE request";
        if (rd->failed || count == 0 || count > HELPER_MAX_BATCH ||
            (flags & ~(uint32_t) (HELPER_SYMBOLIZE_DEBUG_FD | HELPER_SYMBOLIZE_SEGMENT_OFFSETS)) ||
            n_fds != (with_debug ? 2u : 1u))
                return -EBADMSG;
        uint64_t offsets[HELPER_MAX_BATCH];
        for (uint32_t i = 0; i < count; i++)
                offsets[i] = helper_get_u64(rd);
        if (!helper_reader_finished(rd))
                return -EBADMSG;
        *what = "SYMBOLIZE needs regular files";
        for (size_t i = 0; i < n_fds; i++)
                if (!is_regular_file(fds[i]))
                        return -EBADF;
        *what = "cannot symbolize ELF file";
        return symbolize_request_run(&server->symbolize, fds[0], with_debug ? fds[1] : -1,
                                     flags & HELPER_SYMBOLIZE_SEGMENT_OFFSETS, offsets, count, reply, what);
}

static int handle_compile_unwind(HelperReader *rd, const int *fds, size_t n_fds, HelperWriter *reply,
                                 const char **what) {
        uint32_t flags = helper_get_u32(rd);
        uint32_t image_size = helper_get_u32(rd);
        bool image = flags & HELPER_UNWIND_IMAGE;
        UnwindCompileStats st = {};
        void *blob = NULL;
        size_t blob_size = 0;
        int r;

        *what = "malformed COMPILE_UNWIND request";
        if (rd->failed || (flags & ~(uint32_t) HELPER_UNWIND_IMAGE) || n_fds != (image ? 0u : 1u) ||
            (image ? image_size == 0 || image_size > HELPER_MAX_UNWIND_IMAGE : image_size != 0) ||
            image_size != rd->size - rd->offset)
                return -EBADMSG;
        if (image) {
                *what = "cannot compile unwind table of ELF image";
                r = unwind_compile_memory(rd->data + rd->offset, image_size, &blob, &blob_size, &st);
        } else {
                *what = "COMPILE_UNWIND needs a regular file";
                if (!is_regular_file(fds[0]))
                        return -EBADF;
                *what = "cannot compile unwind table of ELF file";
                r = unwind_compile_fd(fds[0], &blob, &blob_size, &st);
        }
        if (r < 0)
                return r;
        if (blob_size > HELPER_MAX_UNWIND_TABLE) {
                free(blob);
                *what = "unwind table too large";
                return -E2BIG;
        }
        helper_put_u32(reply, st.fdes_eh_frame);
        helper_put_u32(reply, st.fdes_debug_frame);
        helper_put_u32(reply, st.rows_unsupported);
        helper_put_u32(reply, (uint32_t) blob_size);
        helper_put_bytes(reply, blob, blob_size);
        free(blob);
        return 0;
}

static int handle_jit_names(HelperReader *rd, const int *fds, size_t n_fds, HelperWriter *reply, const char **what) {
        uint32_t format = helper_get_u32(rd);
        uint32_t count = helper_get_u32(rd);
        *what = "malformed JIT_NAMES request";
        if (rd->failed || (format != HELPER_JIT_PERF_MAP && format != HELPER_JIT_DUMP) || count == 0 ||
            count > HELPER_MAX_JIT_BATCH || n_fds != 1)
                return -EBADMSG;
        _cleanup_free_ uint64_t *addresses = malloc(count * sizeof *addresses);
        if (!addresses)
                return -ENOMEM;
        for (uint32_t i = 0; i < count; i++) {
                addresses[i] = helper_get_u64(rd);
                if (i > 0 && addresses[i] <= addresses[i - 1])
                        return -EBADMSG; /* strictly ascending */
        }
        if (!helper_reader_finished(rd))
                return -EBADMSG;
        *what = "JIT_NAMES needs a regular file";
        if (!is_regular_file(fds[0]))
                return -EBADF;
        *what = format == HELPER_JIT_PERF_MAP ? "cannot read perf map" : "not a jitdump file";
        return jit_names_run(fds[0], format, addresses, count, reply);
}

static int handle_elf_symbols(HelperReader *rd, const int *fds, size_t n_fds, HelperWriter *reply, const char **what) {
        *what = "ELF_SYMBOLS needs one regular file";
        if (n_fds != 1 || !is_regular_file(fds[0]))
                return -EBADF;
        return elf_symbols_run(rd, fds[0], reply, what);
}

/* Podman storage files and /.flatpak-info: one regular file each; the
 * reason for a rejection is about the file's content. */
static int handle_user_file(uint16_t type, HelperReader *rd, const int *fds, size_t n_fds, HelperWriter *reply,
                            const char **what, char **ret_why) {
        *what = "user-written file request needs one regular file";
        if (n_fds != 1 || !is_regular_file(fds[0]))
                return -EBADF;
        switch (type) {
        case HELPER_MSG_PODMAN_CONTAINER:
                return podman_json_find_container(rd, fds[0], reply, ret_why);
        case HELPER_MSG_PODMAN_LAYERS:
                return podman_json_layer_chain(rd, fds[0], reply, ret_why);
        case HELPER_MSG_PODMAN_IMAGE:
                return podman_json_image_name(rd, fds[0], reply, ret_why);
        default:
                *what = "malformed FLATPAK_INFO request";
                if (!helper_reader_finished(rd))
                        return -EBADMSG;
                return flatpak_info_read(fds[0], reply, ret_why);
        }
}

void helper_handle_request(HelperServer *server, uint16_t type, const uint8_t *payload, size_t payload_size,
                           const int *fds, size_t n_fds, uint16_t *reply_type, HelperWriter *reply) {
        HelperReader rd;
        helper_reader_init(&rd, payload, payload_size);
        *reply_type = type | HELPER_MSG_REPLY;
        const char *what = "unknown request type";
        _cleanup_free_ char *why = NULL;
        int r = -EOPNOTSUPP;
        switch (type) {
        case HELPER_MSG_IDENTIFY:
                r = handle_identify(&rd, fds, n_fds, reply, &what);
                break;
        case HELPER_MSG_SYMBOLIZE:
                r = handle_symbolize(server, &rd, fds, n_fds, reply, &what);
                break;
        case HELPER_MSG_COMPILE_UNWIND:
                r = handle_compile_unwind(&rd, fds, n_fds, reply, &what);
                break;
        case HELPER_MSG_JIT_NAMES:
                r = handle_jit_names(&rd, fds, n_fds, reply, &what);
                break;
        case HELPER_MSG_ELF_SYMBOLS:
                r = handle_elf_symbols(&rd, fds, n_fds, reply, &what);
                break;
        case HELPER_MSG_PODMAN_CONTAINER:
        case HELPER_MSG_PODMAN_LAYERS:
        case HELPER_MSG_PODMAN_IMAGE:
        case HELPER_MSG_FLATPAK_INFO:
                r = handle_user_file(type, &rd, fds, n_fds, reply, &what, &why);
                break;
        }
        if (r < 0)
                reply_error(reply_type, reply, r, what, why);
}

void helper_server_clear(HelperServer *server) {
        symbolize_cache_clear(&server->symbolize);
}

int helper_serve(int sock) {
        _cleanup_(helper_server_clear) HelperServer server = {};
        for (;;) {
                HelperMessage m;
                int r = helper_receive_message(sock, HELPER_MAX_REQUEST_FDS, &m);
                if (r == -ECONNRESET)
                        return 0;
                if (r == -EBADMSG) {
                        /* unparseable datagram: answer without an id; the client resets us */
                        uint16_t t;
                        HelperWriter w;
                        helper_writer_init(&w, HELPER_MAX_PAYLOAD);
                        reply_error(&t, &w, -EBADMSG, "malformed message", NULL);
                        r = helper_send_message(sock, t, 0, w.data, w.size, NULL, 0);
                        helper_writer_done(&w);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r < 0)
                        return r;
                uint16_t reply_type;
                HelperWriter w;
                helper_writer_init(&w, HELPER_MAX_PAYLOAD);
                helper_handle_request(&server, m.header.type, m.payload, m.payload_size, m.fds, m.n_fds, &reply_type, &w);
                if (w.failed)
                        reply_error(&reply_type, &w, -E2BIG, "reply too large", NULL);
                r = helper_send_message(sock, reply_type, m.header.request_id, w.data, w.size, NULL, 0);
                helper_writer_done(&w);
                helper_message_clear(&m);
                if (r < 0)
                        return r;
        }
}
