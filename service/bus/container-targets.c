/* container-targets.c: ListTargets() entries for containers and apps (see
 * container-targets.h). */
#include "container-targets.h"

#include <errno.h>

#include "authorization.h"
#include "process.h"
#include "resolver.h"

static int append_instance(sd_bus_message *reply, const ContainerInstance *inst) {
        const ContainerInfo *ci = &inst->info;
        const char *kind = ci->engine == CONTAINER_ENGINE_FLATPAK ? "flatpak" : "container";
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}", "kind", "s", kind, "engine", "s",
                                  container_engine_to_string(ci->engine), "id", "s", ci->id, "name", "s", ci->name,
                                  "image", "s", ci->image, "owner-uid", "u", (uint32_t) ci->owner_uid);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", "pids");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'v', "ai");
        if (r < 0)
                return r;
        r = sd_bus_message_append_array(reply, 'i', inst->pids, inst->n_pids * sizeof(int32_t));
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Keeps only the processes of inst that caller_uid may record on its own
 * (its uid, or a user namespace it owns; dumpable). */
static void keep_callers_pids(ContainerInstance *inst, uid_t caller_uid) {
        size_t kept = 0;
        for (size_t j = 0; j < inst->n_pids; j++)
                if (process_owned_by(inst->pids[j], caller_uid))
                        inst->pids[kept++] = inst->pids[j];
        inst->n_pids = kept;
}

int container_targets_append(sd_bus_message *reply, uid_t caller_uid, HelperClient *user_file_helper) {
        Resolver *res = NULL;
        ContainerInstance *inst = NULL;
        size_t n = 0;
        int r = daemon_resolver_new(user_file_helper, &res);
        if (r < 0)
                return r;
        r = container_list_instances(res, &inst, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (caller_uid != 0)
                        keep_callers_pids(&inst[i], caller_uid);
                if (inst[i].n_pids > 0)
                        r = append_instance(reply, &inst[i]);
        }
        container_instances_free(inst, n);
        resolver_free(res);
        return r < 0 ? r : 0;
}
