/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-info.h: which container or sandbox a process belongs to. Podman
 * (rootful: libpod-<id> cgroup; rootless: container=podman in the environment
 * plus the conmon ancestor's `-c <id>`), Flatpak (/.flatpak-info through
 * /proc/PID/root, parsed by the sandboxed helper). Everything read here
 * comes from the process or its owner and is only used as a hint: file
 * identity checks decide what is trusted. */
#pragma once

#include "basic.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "helper-client.h"

/* Who reads the files users write (/.flatpak-info, Podman's storage JSON):
 * the sandboxed helper (NULL when it cannot start: such files are then not
 * read), and where rejections of them are reported. */
typedef struct UserFileParser {
        HelperClient *helper;
        void (*warn)(void *userdata, const char *message);
        void *userdata;
        bool defer_flatpak; /* keep /.flatpak-info unparsed (ContainerInfo.flatpak_pending) */
} UserFileParser;

/* Reports a rejection through parser->warn (printf-style). */
void user_file_parser_warn(const UserFileParser *parser, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef enum ContainerEngine {
        CONTAINER_ENGINE_NONE,
        CONTAINER_ENGINE_PODMAN,
        CONTAINER_ENGINE_FLATPAK,
} ContainerEngine;

#define CONTAINER_FIELD_MAX 256
#define FLATPAK_INFO_MAX_BYTES (64u * 1024)
#define CONTAINERENV_MAX_BYTES (64u * 1024)

typedef struct ContainerInfo {
        ContainerEngine engine;
        char id[CONTAINER_FIELD_MAX];        /* Podman container id (64 hex) / Flatpak instance id */
        char name[CONTAINER_FIELD_MAX];      /* Podman container name / Flatpak app id */
        char image[CONTAINER_FIELD_MAX];     /* Podman image name / Flatpak app ref or app id */
        char runtime[CONTAINER_FIELD_MAX];   /* Flatpak runtime ref */
        char app_path[CONTAINER_FIELD_MAX];  /* Flatpak app-path (host) */
        char runtime_path[CONTAINER_FIELD_MAX]; /* Flatpak runtime-path (host) */
        uid_t owner_uid;                     /* host uid owning the container (0: rootful) */
        bool rootless;
        char *flatpak_info;                  /* raw /.flatpak-info, NUL-terminated, or NULL */
        size_t flatpak_info_len;
        bool flatpak_pending;                /* flatpak_info read, not parsed yet (engine NONE till then) */
        bool podman_pending;                 /* Podman id known, its store's JSON not parsed yet: no
                                              * name, image, layers till then (resolver.h) */
        char *containerenv;                  /* raw /run/.containerenv, or NULL */
        size_t containerenv_len;
} ContainerInfo;

/* Classifies pid; its /.flatpak-info goes to parser's helper. Podman
 * names/images are filled in by the caller from storage (podman-storage.h);
 * here only the id and owner are set. Returns 0 (engine NONE for plain host
 * processes) or a negative errno when pid is gone (-ESRCH) or unreadable. */
int container_info_classify(pid_t pid, const UserFileParser *parser, ContainerInfo *ret);

/* Parses text (a /.flatpak-info of pid read before, with flatpak_pending)
 * with helper into ret's engine and Flatpak fields (the rest zero); the
 * helper's wait may go back to an event loop meanwhile. parser: for the
 * warnings. */
int container_info_parse_flatpak(pid_t pid, const char *text, size_t len, HelperClient *helper,
                                 const UserFileParser *parser, ContainerInfo *ret);

/* As container_info_classify(), reading /.flatpak-info and
 * /run/.containerenv (copied into captures) with the rights of the caller
 * behind as_caller (caller-opener.h; NULL: as root). */
int container_info_classify_as(pid_t pid, const UserFileParser *parser, CallerOpener *as_caller, ContainerInfo *ret);

/* Whether a file of info's waits for its parse (/.flatpak-info, Podman's
 * storage JSON): what it would tell is not known yet. */
static inline bool container_info_pending(const ContainerInfo *info) {
        return info->flatpak_pending || info->podman_pending;
}

/* Frees the raw file copies held by info (not info itself). */
void container_info_clear(ContainerInfo *info);

/* "podman", "flatpak" or "host". */
const char *container_engine_to_string(ContainerEngine e);

/* The host uid that created pid's user namespace (0 for the initial one). */
int process_userns_owner(pid_t pid, uid_t *ret);
