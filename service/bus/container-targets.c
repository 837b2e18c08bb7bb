/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-targets.c: ListTargets() entries for containers and apps (see
 * container-targets.h). */
#include "container-targets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "authorization.h"
#include "basic.h"
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

typedef struct TargetsCall {
        sd_bus_message *call, *reply;
        uid_t uid;
} TargetsCall;

/* On the fiber: the instances, appended to the reply after the last wait. */
static int list_on_fiber(UserFileJobs *j, void *userdata) {
        TargetsCall *c = userdata;
        _cleanup_resolver_ Resolver *res = NULL;
        ContainerInstance *inst = NULL;
        size_t n = 0;
        int r = user_file_jobs_resolver_new(j, &res);
        if (r < 0)
                return r;
        r = container_list_instances(res, &inst, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (c->uid != 0)
                        keep_callers_pids(&inst[i], c->uid);
                if (inst[i].n_pids > 0)
                        r = append_instance(c->reply, &inst[i]);
        }
        container_instances_free(inst, n);
        return r < 0 ? r : 0;
}

static void list_done(int result, void *userdata) {
        TargetsCall *c = userdata;
        int r = result;
        if (r >= 0)
                r = sd_bus_message_close_container(c->reply);
        if (r >= 0) {
                /* the caller may have left meanwhile: nobody to tell */
                r = sd_bus_send(NULL, c->reply, NULL);
                if (r < 0)
                        log_debug_errno(r, "ListTargets: the reply could not be sent: %m");
        } else if (result != -ECANCELED) {
                log_warning_errno(r, "ListTargets: listing containers failed: %m");
                (void) sd_bus_reply_method_errno(c->call, r, NULL);
        }
        sd_bus_message_unref(c->reply);
        sd_bus_message_unref(c->call);
        free(c);
}

int container_targets_reply(UserFileJobs *jobs, sd_bus_message *call, sd_bus_message *reply, uid_t caller_uid) {
        TargetsCall *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (TargetsCall){ sd_bus_message_ref(call), sd_bus_message_ref(reply), caller_uid };
        int r = user_file_jobs_add(jobs, caller_uid, list_on_fiber, list_done, c);
        if (r < 0) {
                sd_bus_message_unref(c->reply);
                sd_bus_message_unref(c->call);
                free(c);
        }
        return r;
}
