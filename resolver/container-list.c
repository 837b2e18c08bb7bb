/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-list.c: containers and Flatpak instances from /proc (see
 * container-list.h). */
#include "basic.h"
#include "container-list.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>

#include "podman-storage.h"

ContainerInstance *container_instances_free(ContainerInstance *list, size_t n) {
        if (!list)
                return NULL;
        for (size_t i = 0; list && i < n; i++) {
                container_info_clear(&list[i].info);
                free(list[i].pids);
        }
        free(list);
        return NULL;
}

bool container_instance_matches(const ContainerInfo *info, const char *query) {
        size_t ql = strlen(query);
        if (!query[0] || info->engine == CONTAINER_ENGINE_NONE)
                return false;
        if (strcmp(info->id, query) == 0 || strcmp(info->name, query) == 0)
                return true;
        return info->engine == CONTAINER_ENGINE_PODMAN && ql >= 12 && strncmp(info->id, query, ql) == 0;
}

/* A Flatpak app id: reverse-DNS elements of [A-Za-z0-9_-], at least 3. */
static bool is_flatpak_app_id(const char *s) {
        size_t len = strlen(s), dots = 0;
        if (len == 0 || len > 255 || s[0] == '.' || s[len - 1] == '.')
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == '.') {
                        if (s[i + 1] == '.')
                                return false;
                        dots++;
                } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                             c == '-'))
                        return false;
        }
        return dots >= 2;
}

static bool flatpak_app_installed(const char *app_id, uid_t uid) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof(path), "/var/lib/flatpak/app/%s", app_id);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                return true;
        if (uid == 0)
                return false;
        /* The caller's own installation; its home from the user database. */
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res || !pw.pw_dir || pw.pw_dir[0] != '/')
                return false;
        if ((size_t) snprintf(path, sizeof(path), "%s/.local/share/flatpak/app/%s", pw.pw_dir, app_id) >= sizeof(path))
                return false;
        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool container_exists(Resolver *res, const char *query, uid_t uid) {
        if (is_flatpak_app_id(query) && flatpak_app_installed(query, uid))
                return true;
        PodmanStorage *s = NULL;
        if (podman_storage_open(uid, resolver_user_file_parser(res), &s) < 0)
                return false;
        _cleanup_free_ PodmanContainer *c = calloc(1, sizeof(*c));
        bool found = c && podman_storage_find_container(s, NULL, query, c) >= 0;
        podman_storage_free(s);
        return found;
}

static int add_pid(ContainerInstance *inst, pid_t pid) {
        pid_t *np = realloc(inst->pids, (inst->n_pids + 1) * sizeof(*np));
        if (!np)
                return -ENOMEM;
        inst->pids = np;
        inst->pids[inst->n_pids++] = pid;
        return 0;
}

int container_list_instances(Resolver *res, ContainerInstance **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = opendir("/proc");
        ContainerInstance *list = NULL;
        size_t n = 0;
        int r = 0;
        if (!d)
                return -errno;
        pid_t pid;
        while (proc_dir_next_pid(d, &pid, NULL)) {
                resolver_yield(res);
                ContainerInfo info;
                if (container_info_classify(pid, resolver_user_file_parser(res), &info) < 0)
                        continue;
                container_info_clear(&info);
                if (info.engine == CONTAINER_ENGINE_NONE || !info.id[0])
                        continue;
                ContainerInstance *inst = NULL;
                for (size_t i = 0; i < n && !inst; i++)
                        if (list[i].info.engine == info.engine && strcmp(list[i].info.id, info.id) == 0 &&
                            list[i].info.owner_uid == info.owner_uid)
                                inst = &list[i];
                if (!inst) {
                        ContainerInstance *nl = realloc(list, (n + 1) * sizeof(*nl));
                        if (!nl) {
                                r = -ENOMEM;
                                break;
                        }
                        list = nl;
                        inst = &list[n++];
                        memset(inst, 0, sizeof(*inst));
                        inst->info = info;
                        (void) resolver_describe_container(res, &inst->info);
                }
                r = add_pid(inst, pid);
                if (r < 0)
                        break;
        }
        if (r < 0) {
                container_instances_free(list, n);
                return r;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}
