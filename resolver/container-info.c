/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-info.c: process classification (see container-info.h). */
#include "container-info.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"

#define PROC_SMALL_MAX (256u * 1024)
#define CONMON_SEARCH_DEPTH 16

const char *container_engine_to_string(ContainerEngine e) {
        switch (e) {
        case CONTAINER_ENGINE_PODMAN:
                return "podman";
        case CONTAINER_ENGINE_FLATPAK:
                return "flatpak";
        default:
                return "host";
        }
}

void container_info_clear(ContainerInfo *info) {
        free(info->flatpak_info);
        free(info->containerenv);
        info->flatpak_info = info->containerenv = NULL;
        info->flatpak_info_len = info->containerenv_len = 0;
}

static void copy_field(char *dst, const char *src, size_t len) {
        if (len >= CONTAINER_FIELD_MAX)
                len = CONTAINER_FIELD_MAX - 1;
        memcpy(dst, src, len);
        dst[len] = 0;
}

int process_userns_owner(pid_t pid, uid_t *ret) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        uid_t uid;
        if (ioctl(fd, NS_GET_OWNER_UID, &uid) < 0)
                return -errno;
        *ret = uid;
        return 0;
}

/* Finds "libpod-<64 hex>" in /proc/PID/cgroup. */
static bool cgroup_podman_id(const char *cgroup, char id[65]) {
        for (const char *p = strstr(cgroup, "libpod-"); p; p = strstr(p + 1, "libpod-")) {
                const char *h = p + strlen("libpod-");
                char cand[65];
                size_t n = 0;
                while (n < 64 && ((h[n] >= '0' && h[n] <= '9') || (h[n] >= 'a' && h[n] <= 'f'))) {
                        cand[n] = h[n];
                        n++;
                }
                cand[n] = 0;
                /* "libpod-conmon-<id>" is conmon's own cgroup, not the container's. */
                if (n == 64 && !(h[64] >= '0' && h[64] <= '9') && !(h[64] >= 'a' && h[64] <= 'f')) {
                        memcpy(id, cand, 65);
                        return true;
                }
        }
        return false;
}

static bool environ_has(const char *env, size_t len, const char *entry) {
        size_t el = strlen(entry);
        for (size_t i = 0; i < len;) {
                size_t l = strnlen(env + i, len - i);
                if (l == el && memcmp(env + i, entry, el) == 0)
                        return true;
                i += l + 1;
        }
        return false;
}

static pid_t parent_pid(pid_t pid) {
        char path[64];
        _cleanup_free_ char *status = NULL;
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        if (read_file_bounded(AT_FDCWD, path, PROC_SMALL_MAX, true, &status, NULL) < 0)
                return -1;
        const char *p = strstr(status, "\nPPid:");
        int ppid;
        if (!p || sscanf(p + 6, "%d", &ppid) != 1)
                return -1;
        return ppid;
}

/* Whether pid runs a program called conmon as uid owner. A process may name
 * itself anything (prctl) and fill its cmdline at will, but neither its
 * executable nor its uid: a user's fake conmon cannot claim root's
 * containers (nor another user's). */
static bool is_conmon_of(pid_t pid, uid_t owner) {
        char path[64], exe[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        if (stat(path, &st) < 0 || st.st_uid != owner)
                return false;
        snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
        ssize_t n = readlink(path, exe, sizeof(exe) - 1);
        if (n <= 0)
                return false;
        exe[n] = 0;
        const char *base = strrchr(exe, '/');
        return base && strcmp(base + 1, "conmon") == 0;
}

/* Walks up the parents of pid to conmon (run by owner, the container's
 * owner) and takes its `-c <id>`. */
static bool conmon_container_id(pid_t pid, uid_t owner, char id[65]) {
        for (int depth = 0; depth < CONMON_SEARCH_DEPTH && pid > 1; depth++) {
                char path[64];
                _cleanup_free_ char *comm = NULL, *cmdline = NULL;
                size_t len = 0;
                pid = parent_pid(pid);
                if (pid <= 1)
                        return false;
                snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
                if (read_file_bounded(AT_FDCWD, path, 64, true, &comm, NULL) < 0)
                        return false;
                if (strcmp(comm, "conmon\n") != 0)
                        continue;
                if (!is_conmon_of(pid, owner))
                        return false;
                snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
                if (read_file_bounded(AT_FDCWD, path, PROC_SMALL_MAX, true, &cmdline, &len) < 0)
                        return false;
                for (size_t i = 0; i < len;) {
                        size_t l = strnlen(cmdline + i, len - i);
                        if (strcmp(cmdline + i, "-c") == 0 && i + l + 1 < len &&
                            is_hex_id(cmdline + i + l + 1, 64)) {
                                memcpy(id, cmdline + i + l + 1, 65);
                                return true;
                        }
                        i += l + 1;
                }
                return false;
        }
        return false;
}

void user_file_parser_warn(const UserFileParser *parser, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (parser && parser->warn)
                parser->warn(parser->userdata, msg);
}

/* The helper's reading of the /.flatpak-info behind fd (read from its start). */
static int flatpak_info_fields(pid_t pid, int fd, const UserFileParser *parser, ContainerInfo *info) {
        if (!parser || !parser->helper) {
                user_file_parser_warn(parser, "/.flatpak-info of pid %d not read: no sandboxed helper to parse it", (int) pid);
                return -ENOPROTOOPT;
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        HelperFlatpakInfo fi;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_flatpak_info(parser->helper, fd, &fi, &why);
        if (r < 0) {
                user_file_parser_warn(parser, "rejected /.flatpak-info of pid %d: %s", (int) pid, why ? why : strerror(-r));
                return r;
        }
        copy_field(info->name, fi.name, strlen(fi.name));
        copy_field(info->runtime, fi.runtime, strlen(fi.runtime));
        copy_field(info->id, fi.instance_id, strlen(fi.instance_id));
        copy_field(info->app_path, fi.app_path, strlen(fi.app_path));
        copy_field(info->runtime_path, fi.runtime_path, strlen(fi.runtime_path));
        return 0;
}

int container_info_parse_flatpak(pid_t pid, const char *text, size_t len, HelperClient *helper,
                                 const UserFileParser *parser, ContainerInfo *ret) {
        UserFileParser p = parser ? *parser : (UserFileParser){};
        p.helper = helper;
        _cleanup_close_ int fd = memfd_create("flatpak-info", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (size_t done = 0; done < len;) {
                ssize_t k = write(fd, text + done, len - done);
                if (k < 0 && errno != EINTR)
                        return -errno;
                done += k > 0 ? (size_t) k : 0;
        }
        memset(ret, 0, sizeof(*ret));
        int r = flatpak_info_fields(pid, fd, &p, ret);
        if (r < 0)
                return r;
        ret->engine = CONTAINER_ENGINE_FLATPAK;
        copy_field(ret->image, ret->name, strlen(ret->name));
        return 0;
}

/* A file below the process's root (rootfd), as root or as the caller:
 * no symbolic links, no leaving the root. */
static int open_in_process_root(int rootfd, const char *path, CallerOpener *as_caller) {
        if (!as_caller)
                return safe_open_beneath(rootfd, path, O_RDONLY, false);
        return caller_opener_openat2(as_caller, rootfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

int container_info_classify(pid_t pid, const UserFileParser *parser, ContainerInfo *ret) {
        return container_info_classify_as(pid, parser, NULL, ret);
}

int container_info_classify_as(pid_t pid, const UserFileParser *parser, CallerOpener *as_caller, ContainerInfo *ret) {
        char path[96], id[65];
        _cleanup_free_ char *cgroup = NULL, *env = NULL;
        size_t env_len = 0;
        int r;

        memset(ret, 0, sizeof(*ret));
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        r = read_file_bounded(AT_FDCWD, path, PROC_SMALL_MAX, true, &cgroup, NULL);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        if (process_userns_owner(pid, &ret->owner_uid) < 0)
                ret->owner_uid = 0;
        ret->rootless = ret->owner_uid != 0;

        /* /.flatpak-info and /run/.containerenv, through the process's root
         * (a caller other than root: with its rights, since they are copied
         * into its capture and it may have bound any file there). */
        snprintf(path, sizeof(path), "/proc/%d/root", (int) pid);
        _cleanup_close_ int root = as_caller ? caller_opener_openat2(as_caller, -1, path, O_PATH | O_DIRECTORY, 0)
                                             : open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root >= 0) {
                _cleanup_close_ int fd = open_in_process_root(root, ".flatpak-info", as_caller);
                if (fd >= 0 && read_fd_bounded(fd, FLATPAK_INFO_MAX_BYTES, false, &ret->flatpak_info, &ret->flatpak_info_len) >= 0) {
                        if (parser && parser->defer_flatpak) {
                                ret->flatpak_pending = true; /* container_info_parse_flatpak() later */
                                return 0;
                        }
                        if (flatpak_info_fields(pid, fd, parser, ret) >= 0) {
                                ret->engine = CONTAINER_ENGINE_FLATPAK;
                                copy_field(ret->image, ret->name, strlen(ret->name));
                                return 0;
                        }
                        container_info_clear(ret);
                }
                fd = safe_close(fd);
                fd = open_in_process_root(root, "run/.containerenv", as_caller);
                if (fd >= 0)
                        (void) read_fd_bounded(fd, CONTAINERENV_MAX_BYTES, false, &ret->containerenv, &ret->containerenv_len);
        }

        if (cgroup_podman_id(cgroup, id)) {
                ret->engine = CONTAINER_ENGINE_PODMAN;
                copy_field(ret->id, id, 64);
                return 0;
        }
        snprintf(path, sizeof(path), "/proc/%d/environ", (int) pid);
        if (read_file_bounded(AT_FDCWD, path, PROC_SMALL_MAX, true, &env, &env_len) >= 0 &&
            environ_has(env, env_len, "container=podman")) {
                ret->engine = CONTAINER_ENGINE_PODMAN;
                if (conmon_container_id(pid, ret->owner_uid, id))
                        copy_field(ret->id, id, 64);
                return 0;
        }
        return 0;
}
