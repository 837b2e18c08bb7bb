/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* periscope-debuginfod-fetch: downloads one debug file from the servers in
 * $DEBUGINFOD_URLS with libdebuginfod, so periscoped itself links nothing
 * network-facing. Started by the daemon's debuginfod-fetch.c under bwrap
 * (network and nothing else: /usr read-only, its cache directory, the
 * resolver and CA files), as an unprivileged user; answers one
 * DEBUGINFOD_FETCH request on the inherited socket with the debug file's
 * fd (protocol/helper-protocol.h) and exits.
 *   periscope-debuginfod-fetch --fd N */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "basic.h"
#include "protocol.h"

/* What the progress callback checks. */
typedef struct FetchLimits {
        time_t deadline;
        int sock; /* the daemon's end: hung up, nobody wants the answer */
} FetchLimits;

/* Aborts the download past the deadline (libdebuginfod's own is 90 s), or
 * once the daemon hung up (it gave up: a recording cut short at a stop;
 * it cannot signal this process, which runs as another user). libdebuginfod
 * calls it at least every second, data or not. */
static int past_deadline(debuginfod_client *client, long a, long b) {
        const FetchLimits *l = debuginfod_get_user_data(client);
        struct pollfd p = { .fd = l->sock, .events = POLLRDHUP };
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)))
                return 1;
        return time(NULL) > l->deadline ? 1 : 0;
}

/* The debug file's fd, or a negative errno with *what set. */
static int fetch(int sock, const HelperMessage *m, const char **what) {
        HelperReader r;
        helper_reader_init(&r, m->payload, m->payload_size);
        uint32_t timeout = helper_get_u32(&r);
        uint32_t size = helper_get_u32(&r);
        uint8_t build_id[HELPER_MAX_BUILD_ID];
        *what = "malformed DEBUGINFOD_FETCH request";
        if (r.failed || m->header.type != HELPER_MSG_DEBUGINFOD_FETCH || m->n_fds != 0 || timeout == 0 ||
            timeout > HELPER_MAX_FETCH_TIMEOUT || size == 0 || size > HELPER_MAX_BUILD_ID)
                return -EBADMSG;
        helper_get_bytes(&r, build_id, size);
        if (!helper_reader_finished(&r))
                return -EBADMSG;
        *what = "cannot start a debuginfod client";
        debuginfod_client *dc = debuginfod_begin();
        if (!dc)
                return -ENOMEM;
        FetchLimits limits = { .deadline = time(NULL) + timeout, .sock = sock };
        debuginfod_set_user_data(dc, &limits);
        debuginfod_set_progressfn(dc, past_deadline);
        char *path = NULL;
        int fd = debuginfod_find_debuginfo(dc, build_id, (int) size, &path);
        debuginfod_end(dc);
        free(path);
        *what = "debuginfod";
        return fd;
}

static int serve_one(int sock) {
        HelperMessage m;
        int r = helper_receive_message(sock, 0, &m);
        if (r < 0)
                return r;
        const char *what = NULL;
        _cleanup_close_ int fd = fetch(sock, &m, &what);
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_INLINE_PAYLOAD);
        if (fd >= 0)
                r = helper_send_message(sock, HELPER_MSG_DEBUGINFOD_FETCH_REPLY, m.header.request_id, NULL, 0, &fd, 1);
        else {
                char msg[HELPER_MAX_ERROR_MESSAGE];
                snprintf(msg, sizeof msg, "%s: %s", what, strerror(-fd));
                helper_put_u32(&w, (uint32_t) fd);
                helper_put_string(&w, msg, HELPER_MAX_ERROR_MESSAGE);
                r = helper_send_message(sock, HELPER_MSG_ERROR, m.header.request_id, w.data, w.size, NULL, 0);
        }
        helper_writer_done(&w);
        helper_message_clear(&m);
        return r;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "fd", required_argument, NULL, 'f' },
                {}
        };
        int fd = -1, c;
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                char *end;
                long v;
                switch (c) {
                case 'f':
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || v < 3 || v > 65535) {
                                log_error("invalid --fd '%s'", optarg);
                                return 2;
                        }
                        fd = (int) v;
                        break;
                default:
                        return 2;
                }
        }
        if (fd < 0 || optind < argc) {
                log_error("started by periscoped; use --fd N");
                return 2;
        }
        int r = serve_one(fd);
        if (r < 0) {
                log_error_errno(r, "%m");
                return 1;
        }
        return 0;
}
