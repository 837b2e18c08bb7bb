/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client-internal.h: what the client's request files share with
 * helper-client.c (not for users of helper-client/). */
#pragma once

#include "helper-client.h"

/* Sends the request built in *req (then released) and waits for its
 * answer: 0 with *reply holding a non-error answer (free it with
 * helper_message_clear()), or < 0 with *ret_why set. */
int helper_client_request(HelperClient *c, uint16_t type, HelperWriter *req, const int *fds, size_t n_fds,
                          HelperMessage *reply, char **ret_why);

/* Kills the helper after an invalid answer; *ret_why gets "helper failed:
 * REASON" (reason is taken). Returns HELPER_CLIENT_FAILED. */
int helper_client_fail(HelperClient *c, char **ret_why, char *reason);
