/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-server.h: the helper's request loop over its SEQPACKET socket. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "symbolize-module.h"

/* What the helper keeps between requests: the file it last symbolized. */
typedef struct HelperServer {
        SymbolizeCache symbolize;
} HelperServer;

/* Handles one decoded request (type, payload, fds) and builds the reply:
 * *reply_type and the payload in `reply` (HELPER_MSG_ERROR with a message
 * when the request fails). Shared by the socket loop and the fuzz target. */
void helper_handle_request(HelperServer *server, uint16_t type, const uint8_t *payload, size_t payload_size,
                           const int *fds, size_t n_fds, uint16_t *reply_type, HelperWriter *reply);

/* Frees what the server kept. */
void helper_server_clear(HelperServer *server);

/* Serves requests on `sock` until the peer closes it. Returns 0 at a clean
 * end of stream, or -errno when the socket fails. */
int helper_serve(int sock);
