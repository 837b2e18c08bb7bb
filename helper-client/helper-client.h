/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client.h: the service's side of the sandboxed ELF/DWARF helper:
 * spawns periscope-helper under bwrap with resource limits, sends files as
 * fds, waits for answers with a timeout (poll; no threads, no GLib) and
 * validates every answer. A helper that crashes, hangs or answers garbage is
 * killed; the next request starts a fresh one. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic.h"
#include "protocol.h"

typedef struct HelperClient HelperClient;

/* The user the helper runs as when its client is root
 * (systemd/periscope.sysusers); when the system has no such user,
 * HELPER_CLIENT_FALLBACK_ID (uid and gid), an id that owns nothing. Never
 * root: bubblewrap would map the sandbox's uid onto root's, whose owner
 * rights reach every root-owned file under /usr, 0711 programs included.
 * A client that is not root runs the helper as itself. */
#define HELPER_CLIENT_USER "periscope-helper"
#define HELPER_CLIENT_FALLBACK_ID 61871
/* The name its stderr's lines are logged under. */
#define HELPER_CLIENT_LOG_IDENTIFIER "periscope-helper"

typedef struct HelperClientConfig {
        const char *helper_path;  /* NULL: $PERISCOPE_HELPER, else LIBEXECDIR/periscope-helper */
        const char *bwrap_path;   /* NULL: /usr/bin/bwrap */
        uint64_t memory_limit;    /* RLIMIT_AS in bytes; 0: 2 GiB (not applied in sanitizer builds) */
        unsigned cpu_seconds;     /* RLIMIT_CPU; 0: 60 */
        unsigned max_files;       /* RLIMIT_NOFILE; 0: 64 */
        unsigned timeout_ms;      /* per request; 0: 10000 */
        /* Called about every HELPER_CLIENT_WAIT_HOOK_MS while a request waits
         * for its answer, so the caller can keep urgent work going (the
         * daemon moves perf records out of its rings). It must not use this
         * client. NULL: none. */
        void (*wait_hook)(void *userdata);
        void *wait_hook_userdata;
        /* Waits until fd is readable or timeout_ms passed, instead of poll():
         * returns 1 when readable, 0 on timeout, or a negative errno
         * (-ECANCELED: give up; the helper is stopped and every later request
         * of this client fails at once). The daemon's post-stop stages run on
         * a fiber whose wait goes back to the event loop (symbolize-fiber.h).
         * NULL: poll() with wait_hook. */
        int (*wait_readable)(int fd, unsigned timeout_ms, void *userdata);
        void *wait_readable_userdata;
        /* Called (with wait_readable_userdata) between slices of checking a
         * large answer (an unwind table), so a fiber lets its event loop
         * run. NULL: none. */
        void (*yield)(void *userdata);
        /* Time this client's helpers may spend answering, over all requests
         * and restarts (a recording's budget; it bounds the helper's CPU
         * time): past it the helper is killed and every later request fails
         * at once with "time budget … spent". 0: no budget. */
        unsigned time_budget_ms;
        /* Whose files the helper reads: named with its log lines. */
        uid_t owner;
        /* Takes the read end of a pipe that is the helper's stderr, at each
         * start (pid: its bwrap), and owns it from then on: the daemon logs
         * what comes under the name identifier (HELPER_CLIENT_LOG_IDENTIFIER;
         * the debuginfod fetcher's: DEBUGINFOD_FETCH_LOG_IDENTIFIER, which
         * debug_file_find() starts with the same sink). NULL: the helper
         * writes to this process's stderr. */
        void (*stderr_sink)(int fd, pid_t pid, uid_t owner, const char *identifier, void *userdata);
        void *stderr_sink_userdata;
} HelperClientConfig;

#define HELPER_CLIENT_WAIT_HOOK_MS 20

/* One frame of an address's inline chain (innermost first). */
typedef struct HelperFrame {
        char *name;      /* demangled, valid UTF-8, never empty */
        char *file;      /* source file or NULL */
        uint32_t line;   /* 0 when unknown */
        uint32_t column;
        uint64_t offset; /* into the function */
        uint8_t flags;   /* HelperFrameFlags */
        uint8_t source;  /* one HelperSymbolSource bit */
} HelperFrame;

typedef struct HelperAddressSymbols {
        uint8_t status;  /* HelperAddressStatus */
        size_t n_frames;
        HelperFrame *frames;
} HelperAddressSymbols;

typedef struct HelperSymbols {
        uint32_t sources; /* HelperSymbolSource bits used for this file */
        size_t n_addresses;
        HelperAddressSymbols *addresses; /* in request order */
} HelperSymbols;

/* Return codes beyond -errno: the helper failed (was killed / will restart);
 * `ret_why` then says how. Any other negative value is the helper's own verdict
 * on the file (e.g. not ELF) and the helper stays up. */
#define HELPER_CLIENT_FAILED (-EPROTO)

/* Creates a client; the helper is started on the first request. */
int helper_client_new(const HelperClientConfig *config, HelperClient **ret);
/* Kills the helper (if running) and frees the client. Returns NULL. */
HelperClient *helper_client_free(HelperClient *c);

/* IDENTIFY the regular file `fd`. On failure returns < 0 and, when ret_why is
 * not NULL, a malloc'ed reason ("helper failed: timed out after 10000 ms"). */
int helper_client_identify(HelperClient *c, int fd, uint32_t flags, HelperIdentity *ret, char **ret_why);

/* SYMBOLIZE n file offsets (file offset = address - mapping start + pgoff) of
 * `fd`, with the separate debug file `debug_fd` when >= 0. Batches as needed.
 * *ret holds one entry per offset. Returns 0 or < 0 with *ret_why as above. */
int helper_client_symbolize(HelperClient *c, int fd, int debug_fd, const uint64_t *offsets, size_t n,
                            HelperSymbols **ret, char **ret_why);

/* As helper_client_symbolize() for a debug file alone (no binary): the
 * offsets are addresses minus the start of the executable mapping, placed
 * through the debug file's executable PT_LOAD. */
int helper_client_symbolize_segment(HelperClient *c, int debug_fd, const uint64_t *offsets, size_t n,
                                    HelperSymbols **ret, char **ret_why);

/* COMPILE_UNWIND: the unwind table (capture/unwind-table.h) of the regular
 * file `fd`, or, when fd < 0, of the ELF image[0..image_size) (the vdso copied
 * out of a process). The answer is validated here; on success *ret_blob is a
 * malloc'ed table that unwind_table_validate() accepted and *ret_size its size.
 * -ENODATA: the file has no call frame information. Otherwise as IDENTIFY. */
int helper_client_compile_unwind(HelperClient *c, int fd, const void *image, size_t image_size, void **ret_blob,
                                 size_t *ret_size, char **ret_why);

/* ---- Files users write, parsed by the helper (protocol/helper-protocol.h) ----
 * fd is the file as the caller opened it (beneath its directory, without
 * symlinks). A rejection of the file's content is a negative errno with the
 * helper's reason in *ret_why (-EBADMSG/-EFBIG: the file; -EINVAL: an entry or
 * a layer chain); HELPER_CLIENT_FAILED as for IDENTIFY. */
typedef struct HelperPodmanContainer {
        char id[65];
        char name[HELPER_MAX_FIELD + 1];
        char image_id[65];   /* "" when the entry names none */
        char layer[65];
} HelperPodmanContainer;

/* The containers.json entry that query names (id, name, or unique id
 * prefix of >= 12 digits); -ENOENT when none. */
int helper_client_podman_container(HelperClient *c, int fd, const char *query, HelperPodmanContainer *ret,
                                   char **ret_why);

/* The layer chain from layer (first) through its parents in layers.json:
 * ret has room for HELPER_MAX_LAYERS ids. */
int helper_client_podman_layers(HelperClient *c, int fd, const char *layer, char (*ret)[65], size_t *ret_n,
                                char **ret_why);

/* The first name of image_id in images.json ("" when none). */
int helper_client_podman_image_name(HelperClient *c, int fd, const char *image_id, char name[HELPER_MAX_FIELD + 1],
                                    char **ret_why);

typedef struct HelperFlatpakInfo {
        char name[HELPER_MAX_FIELD + 1];        /* [Application] name, never empty */
        char runtime[HELPER_MAX_FIELD + 1];
        char instance_id[HELPER_MAX_FIELD + 1];
        char app_path[HELPER_MAX_FIELD + 1];
        char runtime_path[HELPER_MAX_FIELD + 1];
} HelperFlatpakInfo;

/* The fields of a /.flatpak-info keyfile. */
int helper_client_flatpak_info(HelperClient *c, int fd, HelperFlatpakInfo *ret, char **ret_why);

/* Validates and decodes an IDENTIFY reply payload (for the request flags);
 * false when anything is out of spec. Used by the client; public for the
 * fuzz target. */
bool helper_identify_reply_decode(const uint8_t *payload, size_t size, uint32_t flags, HelperIdentity *ret);

/* Validates and decodes one SYMBOLIZE reply payload for `count` addresses;
 * -EBADMSG when anything is out of spec. Public for the fuzz target. */
int helper_symbolize_reply_decode(const uint8_t *payload, size_t size, size_t count, HelperSymbols **ret);

/* Frees a HelperSymbols. Returns NULL. */
HelperSymbols *helper_symbols_free(HelperSymbols *s);

/* How many helpers this client has started (restarts show up here). */
unsigned helper_client_get_starts(const HelperClient *c);

/* Milliseconds this client's helpers spent on requests so far, and whether
 * its time budget (HelperClientConfig.time_budget_ms) ran out. */
uint64_t helper_client_get_busy_ms(const HelperClient *c);
bool helper_client_budget_spent(const HelperClient *c);

/* The configuration the client was made with (its defaults filled in). */
const HelperClientConfig *helper_client_get_config(const HelperClient *c);

/* Pid of the running helper's bwrap, or 0 (for tests that kill it). */
int helper_client_get_pid(const HelperClient *c);

/* Runs `periscope-helper --probe ARGS…` through the same sandbox launcher and
 * returns its output (the confinement test's view from inside). */
int helper_client_run_probe(const HelperClientConfig *config, char *const *probe_args, char **ret_output);

DEFINE_TRIVIAL_CLEANUP_FUNC(HelperClient *, helper_client_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(HelperSymbols *, helper_symbols_free);

/* The rest of this folder's public interface: other folders include this header only. */
#include "debug-files.h"
#include "debuginfod-fetch.h"
#include "helper-client-elf-symbols.h"
#include "helper-client-jit.h"
