/* container-list.c: containers and Flatpak instances from /proc (see
 * container-list.h). */
#include "container-list.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

void container_instances_free(ContainerInstance *list, size_t n) {
        for (size_t i = 0; list && i < n; i++) {
                container_info_clear(&list[i].info);
                free(list[i].pids);
        }
        free(list);
}

bool container_instance_matches(const ContainerInfo *info, const char *query) {
        size_t ql = strlen(query);
        if (!query[0] || info->engine == CONTAINER_ENGINE_NONE)
                return false;
        if (strcmp(info->id, query) == 0 || strcmp(info->name, query) == 0)
                return true;
        return info->engine == CONTAINER_ENGINE_PODMAN && ql >= 12 && strncmp(info->id, query, ql) == 0;
}

static int add_pid(ContainerInstance *inst, pid_t pid) {
        pid_t *np = realloc(inst->pids, (inst->n_pids + 1) * sizeof(*np));
        if (!np)
                return -ENOMEM;
        inst->pids = np;
        inst->pids[inst->n_pids++] = pid;
        return 0;
}

int container_list_instances(Resolver *r, ContainerInstance **ret, size_t *ret_n) {
        DIR *d = opendir("/proc");
        ContainerInstance *list = NULL;
        size_t n = 0;
        int k = 0;
        if (!d)
                return -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                ContainerInfo info;
                if (container_info_classify((pid_t) pid, &info) < 0)
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
                                k = -ENOMEM;
                                break;
                        }
                        list = nl;
                        inst = &list[n++];
                        memset(inst, 0, sizeof(*inst));
                        inst->info = info;
                        (void) resolver_describe_container(r, &inst->info);
                }
                k = add_pid(inst, (pid_t) pid);
                if (k < 0)
                        break;
        }
        closedir(d);
        if (k < 0) {
                container_instances_free(list, n);
                return k;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}
