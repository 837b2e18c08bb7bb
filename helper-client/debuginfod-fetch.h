/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* debuginfod-fetch.h: debug files from debuginfod servers without any
 * network code in the caller: periscope-debuginfod-fetch (libdebuginfod)
 * runs per request under bwrap with the network and nothing else, as an
 * unprivileged user when the caller is root, writes into its own cache, and
 * hands back the file's fd. The caller still checks the file's build-id. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The user the fetcher runs as when the caller is root; when the system
 * has no such user, DEBUGINFOD_FETCH_FALLBACK_ID (uid and gid) is used, a
 * DynamicUser-style id that owns nothing but the fetcher's cache. */
#define DEBUGINFOD_FETCH_USER "periscope-debuginfod"
#define DEBUGINFOD_FETCH_FALLBACK_ID 61870
/* The fetcher's cache when the caller is root (owned by the fetcher's uid). */
#define DEBUGINFOD_FETCH_ROOT_CACHE "/var/cache/periscope/debuginfod"

/* How to wait for the fetcher's answer: as HelperClientConfig.wait_readable
 * (1 readable, 0 timed out, < 0 give up: -ECANCELED), so that a daemon's
 * fiber goes back to its event loop during a download. */
typedef struct DebuginfodWait {
        int (*wait_readable)(int fd, unsigned timeout_ms, void *userdata); /* NULL: poll() */
        void *userdata;
        /* The fetcher's stderr, as HelperClientConfig.stderr_sink (with
         * DEBUGINFOD_FETCH_LOG_IDENTIFIER); NULL: the caller's stderr. */
        void (*stderr_sink)(int fd, pid_t pid, uid_t owner, const char *identifier, void *userdata);
        void *stderr_sink_userdata;
        uid_t owner;
} DebuginfodWait;

#define DEBUGINFOD_FETCH_LOG_IDENTIFIER "periscope-debuginfod-fetch"

/* A root process: makes root's fetcher cache (DEBUGINFOD_FETCH_ROOT_CACHE)
 * the fetcher user's, 0700, as systemd/periscope.tmpfiles does for the
 * installed service; periscoped calls it before it drops CAP_CHOWN, so a
 * root daemon that was never installed fetches on a new machine too.
 * 0 (nothing to do as another user), or a negative errno with *ret_why. */
int debuginfod_fetch_prepare_root_cache(char **ret_why);

/* Asks the servers in urls (as $DEBUGINFOD_URLS) for the debug file of
 * build_id, giving up after timeout_s seconds; wait (may be NULL) says how
 * to wait for the answer. Returns an fd of a regular file, or a negative
 * errno with *ret_why (malloc'ed) saying what failed: -ENOENT when no server
 * has it. */
int debuginfod_fetch(const char *urls, const uint8_t *build_id, size_t build_id_size, unsigned timeout_s,
                     const DebuginfodWait *wait, char **ret_why);
